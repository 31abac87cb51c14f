#include "lint/base/input_rules.h"
#include "lint/load/hydra/overrides.h"

#include <fmt/format.h>

#include "lint/model/config_fields.h"
#include "lint/model/schema.h"

namespace mblint {

namespace {

Diagnostic override_problem(std::string message, Span where, std::string help) {
  return input_finding(input_rule::kOverrideSyntax, std::move(message), where, std::move(help));
}

std::string did_you_mean(const std::vector<std::string>& key) {
  if (key.size() < 2) return "";
  std::vector<std::string> names = similar_field_names(key[0], key[1], 1);
  if (names.empty()) return "";
  std::vector<std::string> suggestion = key;
  suggestion[1] = names[0];
  return join_path(suggestion);
}

// Sections that are None unless a recipe or file sets them.
bool section_defaults_to_null(std::string_view section) {
  const SchemaField* field = find_schema_field("", section);
  return field && field->default_text && std::string_view(field->default_text) == "None" &&
         section != "train" && section != "model" && section != "optimizer" && section != "scheduler" &&
         section != "dataset" && section != "logger" && section != "tokenizer" && section != "checkpoint";
}

}  // namespace

std::vector<std::string> canonical_key(Job& job, std::vector<std::string> key) {
  if (key.size() >= 3 && key[0] == "model" && key[1] == "transformer") {
    key.erase(key.begin() + 1);
    job.builder_backed_model = true;
  }
  return key;
}

KeyPresence key_presence(const Job& job, const std::vector<std::string>& key) {
  if (key.empty()) return KeyPresence::Absent;
  // What the loaded layers hold.
  const ConfigValue* node = &job.config;
  for (size_t i = 0; i < key.size(); ++i) {
    const ConfigValue* child = find_child(*node, key[i]);
    if (!child) break;
    if (i + 1 == key.size()) return KeyPresence::Present;
    if (child->is_null() && (job.config_complete || child->where.layer != Layer::SchemaDefault)) {
      return KeyPresence::Absent;  // a null node has no children
    }
    if (child->is_unknown()) return KeyPresence::Unknown;
    node = child;
  }
  // What the dataclasses define.
  if (!is_config_section(key[0])) return KeyPresence::Absent;
  if (key.size() == 1) return KeyPresence::Present;
  const SchemaField* section = find_schema_field("", key[0]);
  if (section && is_free_form_field(*section)) {
    return job.config_complete ? KeyPresence::Absent : KeyPresence::Unknown;
  }
  if (section_defaults_to_null(key[0]) && !find_child(job.config, key[0])) {
    return job.config_complete ? KeyPresence::Absent : KeyPresence::Unknown;
  }
  const SchemaField* field = find_schema_field(key[0], key[1]);
  if (!field) {
    // A field only some of the section's classes declare (Wan's and FLUX's
    // dataset.path): whether the recipe's class has it is not known here; a
    // dump lists every field of its class (the walk above found none).
    const VariantField* variant = find_variant_field(key[0], key[1]);
    bool possible = variant && !job.config_complete && variant_field_applies(job, *variant);
    return possible ? KeyPresence::Unknown : KeyPresence::Absent;
  }
  if (key.size() == 2) return KeyPresence::Present;
  return KeyPresence::Unknown;  // inside a nested object or list field
}

void apply_override(Job& job, const HydraOverride& o, std::vector<Diagnostic>& problems) {
  std::vector<std::string> key = canonical_key(job, o.key);
  std::string dotted = join_path(o.key);
  KeyPresence presence = key_presence(job, key);
  switch (o.op) {
    case OverrideOp::Change: {
      if (presence == KeyPresence::Absent) {
        std::string suggestion = did_you_mean(key);
        std::string help = suggestion.empty()
                               ? fmt::format("to add a new key write +{}=..., but Megatron Bridge ignores keys "
                                             "that are not config fields",
                                             dotted)
                               : fmt::format("did you mean {}?", suggestion);
        problems.push_back(override_problem(
            fmt::format("Hydra cannot override '{}': the key does not exist in the config", dotted),
            o.key_span, help));
        return;
      }
      break;
    }
    case OverrideOp::Add:
      if (presence == KeyPresence::Present) {
        problems.push_back(override_problem(
            fmt::format("Hydra cannot append '{}': an item is already at that key", dotted), o.statement_span,
            fmt::format("drop the '+' to change it ({}=...), or use '++' to add or override", dotted)));
        return;
      }
      break;
    case OverrideOp::ForceAdd:
      break;
    case OverrideOp::Delete: {
      if (presence == KeyPresence::Absent) {
        problems.push_back(override_problem(
            fmt::format("Hydra cannot delete '{}': it does not exist in the config", dotted), o.key_span,
            "remove this override"));
        return;
      }
      const ConfigValue* current = find_path(job.config, key);
      if (o.value && current && !current->is_unknown() && !o.value->is_unknown() &&
          to_display(*current) != to_display(*o.value)) {
        problems.push_back(override_problem(
            fmt::format("Hydra cannot delete '{}': its value is {}, not {}", dotted, to_display(*current),
                        to_display(*o.value)),
            o.statement_span, fmt::format("write ~{} to delete whatever the value is", dotted)));
        return;
      }
      // Deleting a dataclass field leaves the recipe's value in place;
      // deleting from a free-form dict removes the entry.
      const SchemaField* field = key.size() == 2 ? find_schema_field(key[0], key[1]) : nullptr;
      if (!field) erase_path(job.config, key);
      return;
    }
  }
  if (!o.value) return;
  ConfigValue value = *o.value;
  ConfigValue* existing = find_path(job.config, join_path(key));
  if (existing && existing->is_map() && value.is_map()) {
    merge_into(*existing, value);  // `train={micro_batch_size:8}` merges
    return;
  }
  assign_path(job.config, key, std::move(value));
}

}  // namespace mblint
