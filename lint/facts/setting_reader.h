// The one way rules and facts read a setting of the job. read_setting() owns
// the defaults policy, tried in this order:
//   1. the value where it is written, at any layer (with its provenance);
//   2. what the job's catalog recipe is known to leave there (from the recipe
//      sources: checkpoint.save and ckpt_format, Megatron-FSDP and expert-
//      parallel overlap off, recompute settings it leaves None; the SwiGLU
//      of the model it builds);
//   3. nothing, inside a section that is None (comm_overlap: null);
//   4. the dataclass default, when mblint knows nobody changed it: a full
//      Bridge dump, or a catalog recipe and a field no recipe assigns;
//   5. Megatron-LM's argparse default, for a Megatron-LM command line (a
//      table, and False for a setting only store_true flags write);
//   6. unknown.
// The typed readers below (int, bool, text, choice, names, number, dtype and
// the Python-truthiness view) differ only in how they interpret the value
// read_setting() finds, never in where they look.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/model/job.h"

namespace mblint {

// Which step of the policy gave the value.
enum class SettingSource {
  Written,           // in the resolved config (any layer, Layer::SchemaDefault for the loaders' own defaults)
  RecipeLeaves,      // what the catalog recipe is known to leave
  DataclassDefault,  // the dataclass default of a full dump, or of a field no recipe assigns
  ArgparseDefault,   // Megatron-LM's argparse default
  Unknown,
};

struct SettingValue {
  std::string path;
  SettingSource source = SettingSource::Unknown;
  const ConfigValue* written = nullptr;  // into job.config (Written)
  std::optional<ConfigValue> fallback;   // the value of the other steps, with its provenance

  // The value found; nullptr when unknown. Not of a temporary: a default
  // lives in `fallback`.
  const ConfigValue* node() const& { return written ? written : fallback ? &*fallback : nullptr; }
  const ConfigValue* node() const&& = delete;
  // A default of the program that runs the job, not written anywhere.
  bool defaulted() const {
    return source == SettingSource::DataclassDefault || source == SettingSource::ArgparseDefault;
  }
};

SettingValue read_setting(const Job& job, std::string_view path);

// The value read_setting() found, with a typed reading's path, name,
// defaulted and where filled; nullptr when unknown.
template <typename Reading>
const ConfigValue* locate(const SettingValue& setting, Reading& out) {
  out.path = setting.path;
  out.name = last_segment(setting.path);
  out.defaulted = setting.defaulted();
  const ConfigValue* node = setting.node();
  if (node) out.where = node->where;
  return node;
}

// A Megatron-LM command line (a launch or a functional-test MODEL_ARGS):
// every flag it leaves out has argparse's default.
bool megatron_lm_command_line(const Job& job);

// --- typed readers -------------------------------------------------------------

// An integer setting or a quantity derived from several (lint/facts/derived.h).
struct Quantity {
  std::optional<int64_t> value;
  std::string name;  // "context_parallel_size" (also "world size")
  std::string path;  // "model.context_parallel_size"; empty for derived quantities
  Provenance where;  // where it was set; empty when it was not written anywhere
  bool defaulted = false;  // the program's default, not written anywhere
  std::string how;         // how a derived or resolved value came about
  // How the value reads in notes when `value` encodes something else
  // (num_moe_experts null is kept as 0 = dense, but was written "null").
  std::string display;

  bool known() const { return value.has_value(); }
  int64_t operator*() const { return *value; }
};

// An on/off setting.
struct Setting {
  std::optional<bool> value;
  std::string name;
  std::string path;
  Provenance where;
  bool defaulted = false;
};

// A string setting; `present` when the key has a value (possibly null or unknown).
struct TextSetting {
  std::optional<std::string> value;
  std::string name;
  std::string path;
  Provenance where;
  bool present = false;
  bool defaulted = false;
};

// A text setting that may be None: `value` is the text, nullopt when the
// setting is None/null; `known` is false when mblint cannot tell.
struct Choice {
  std::string name;  // "fp8_recipe"
  std::string path;  // "model.fp8_recipe"
  std::optional<std::string> value;
  bool known = false;
  Provenance where;
  bool defaulted = false;

  bool is_set() const { return known && value.has_value(); }
  bool is(std::string_view text) const { return known && value && *value == text; }
  bool is_none() const { return known && !value; }
};

// A list of names (recompute_modules, offload_modules, cuda_graph_modules):
// a YAML list, a comma-separated string or null.
struct NameList {
  std::string name;
  std::string path;
  std::optional<std::vector<std::string>> items;  // nullopt: null/None or unknown
  bool known = false;
  Provenance where;
  bool defaulted = false;

  bool contains(std::string_view item) const;
};

// The value as Python would see it in `if cfg.x:` and in messages (for
// settings of any type): nullopt value when unknown (an unresolved
// expression included).
struct Resolved {
  std::optional<ConfigValue> value;
  bool defaulted = false;
  std::string path;

  bool known() const { return value.has_value(); }
  const Provenance& where() const { return value->where; }
};

// An integer; a null reads as unknown (display "null" when written so).
Quantity config_int(const Job& job, std::string_view path);
// A boolean; null reads as unknown (config_bool) or false (read_flag: the
// `if cfg.x:` of an Optional[bool]).
Setting config_bool(const Job& job, std::string_view path);
Setting read_flag(const Job& job, std::string_view path);
TextSetting config_text(const Job& job, std::string_view path);
// The hybrid (Mamba) layer pattern the job's model runs: the first non-empty
// of model.hybrid_layer_pattern and the deprecated model.hybrid_override_pattern
// (`path`, written at `where`), else the catalog's record of the recipe's
// model (`from_catalog`, no path). nullopt for a transformer, or a pattern
// mblint does not know.
struct HybridPatternSetting {
  std::string text;
  bool from_catalog = false;
  std::string path;
  Provenance where;
  int64_t segments = 1;  // the main stack's '|' pipeline segments (split_hybrid_pattern)
};
std::optional<HybridPatternSetting> hybrid_layer_pattern(const Job& job);
// A choice: a string, or None (null and false read as None).
Choice read_choice(const Job& job, std::string_view path);
NameList read_names(const Job& job, std::string_view path);
// A float setting (optimizer_offload_fraction); nullopt when unknown.
std::optional<double> read_number(const Job& job, std::string_view path, Provenance* where = nullptr);
// A dtype setting normalised to "fp32", "bf16", "fp16" or "fp8" (accepts
// "bf16", "bfloat16", "torch.bfloat16", {_target_: torch.bfloat16}).
Choice read_dtype(const Job& job, std::string_view path);
Resolved resolve(const Job& job, std::string_view path);
// On/off by Python truthiness; nullopt when unknown.
std::optional<bool> switch_value(const Job& job, std::string_view path);

// The written node itself (nullptr when absent), no defaults: for lists and
// maps a rule walks, and for telling "written" from "defaulted".
const ConfigValue* config_node(const Job& job, std::string_view path);

// "bf16", "fp16", "fp32", "fp8" for the ways a torch dtype is written
// (torch.bfloat16, bfloat16, bf16, half, uint8, {_target_: torch.bfloat16});
// nullopt otherwise.
std::optional<std::string> dtype_name(const ConfigValue& value);

// Python truthiness (`if cfg.x:`): null and 0 and "" are false. nullopt for
// unknown values.
std::optional<bool> truthy(const Resolved& resolved);
std::optional<bool> truthy(const ConfigValue& value);
// True only when known and truthy / known and falsy.
bool is_on(const Resolved& resolved);
bool is_off(const Resolved& resolved);

// --- notes -----------------------------------------------------------------------

// "context_parallel_size set to 2 here", located where it was set; the
// recipe's or a derivation's own words; "... is N (the default)" unlocated.
Note note_for(const Quantity& quantity);
Note note_for(const Setting& setting);
Note note_for(const Choice& choice);
Note note_for(const NameList& list);
Note note_for(const Resolved& resolved);
// A choice's, list's or other non-integer value's note: any origin first
// (the recipe's or a preset's own words, the default a reader names), else
// "<name> is <shown> (the default)" unlocated or "<name> set to <shown> here".
Note note_at(std::string_view name, std::string_view shown, const Provenance& where, bool defaulted = false);

// The span a diagnostic about this setting points at (may be invalid).
Span span_for(const Quantity& quantity);
Span span_for(const Setting& setting);
Span span_for(const Choice& choice);
Span span_for(const NameList& list);
Span span_for(const Resolved& resolved);

// The value as a string for messages: true, null, "torch_dist" -> torch_dist.
std::string display(const Resolved& resolved);

// The names of a comma-separated string ("core_attn, mlp"), blanks trimmed.
std::vector<std::string> split_names(const std::string& text);

// "core_attn, mlp" / "[]"
std::string join_names(const std::vector<std::string>& names);
std::string join_names(const std::vector<std::string_view>& names);

// The rank of a layer, lowest first (a default, the recipe, ..., mblint's
// own command line): of several inputs the user most likely changed the
// highest.
int layer_rank(Layer layer);

}  // namespace mblint
