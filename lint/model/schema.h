// The fields of Megatron Bridge's ConfigContainer sections, compiled in from
// tools/gen_schema.py. Used to tell a real field from a typo, to know which
// keys a Hydra override may change, and for the defaults of a full dump.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/config_value.h"

namespace mblint {

struct SchemaField {
  const char* section;       // "" for the ConfigContainer itself, else "model", "train", ...
  const char* variant;       // the dataclass declaring the section, e.g. "GPTModelProvider"
  const char* name;
  const char* type;          // Python annotation as source text
  const char* default_text;  // Python default as source text; nullptr when required
  bool init;                 // false: computed at start-up, dropped when a dump is loaded
};

std::span<const SchemaField> schema_fields();

// A top-level ConfigContainer field: "model", "train", "env_vars", ...
bool is_config_section(std::string_view name);

// The field `name` of `section` in any of the section's variants.
const SchemaField* find_schema_field(std::string_view section, std::string_view name);

// True when the field holds a nested dataclass or free-form dict (its
// children are not listed in the schema).
bool is_free_form_field(const SchemaField& field);

// The default as a value when it is a plain literal (1, None, True, "nccl",
// 0.01); nullopt for factories and expressions.
std::optional<ConfigValue> literal_default(const SchemaField& field);

// Field names of `section` close to `name`, for did-you-mean.
std::vector<std::string> similar_field_names(std::string_view section, std::string_view name,
                                             size_t limit = 3);

// Edit distance, shared with recipe suggestions.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace mblint
