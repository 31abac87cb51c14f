// The configuration tree every input is loaded into, in Megatron Bridge's
// ConfigContainer key space ("model.tensor_model_parallel_size"). Each node
// keeps where it was written (Provenance) and which earlier layers it replaced.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/source.h"

namespace mblint {

// Where a value came from, in the order layers are applied.
enum class Layer : uint8_t {
  SchemaDefault,    // the dataclass default (full ConfigContainer dumps only)
  Recipe,           // the recipe's value, from mblint's catalog
  ConfigFile,       // a YAML file (--config-file, a dump, a project file)
  ConvenienceFlag,  // run_recipe.py -tp 4, --seq_length 8192, ...
  Override,         // a Hydra override: model.tensor_model_parallel_size=4
  CommandLine,      // mblint's own --set / --nodes / --recipe
  Rewrite,          // a value Megatron Bridge derives or rewrites at start-up
  Launcher,         // torchrun / srun / #SBATCH / train.sh
};

std::string_view layer_name(Layer layer);

// A layer the user writes (a YAML file, a flag, an override, mblint's own
// command line), not the recipe catalog, a default, Bridge's rewrites or the
// launcher's allocation.
inline bool written_by_user(Layer layer) {
  return layer == Layer::ConfigFile || layer == Layer::ConvenienceFlag || layer == Layer::Override ||
         layer == Layer::CommandLine;
}

struct Provenance {
  Layer layer = Layer::ConfigFile;
  Span value;      // the value as written
  Span key;        // the key as written
  Span statement;  // the whole `key=value` word of an override or flag
  // Where a value that was expanded came from: the `TP=16` assignment behind
  // `$TP`, the target of `${dataset.seq_length}`.
  std::vector<Span> via;
  // The `${dataset.seq_length}` that copied this value to where it is used.
  Span interpolated_at;
  // Free text for notes: "default of recipe llama3_70b_pretrain_32gpu_h100_bf16_config".
  std::string origin;
};

// The span a diagnostic about this value points at: the whole override for a
// `key=value` word, otherwise the value.
Span primary_span(const Provenance& where);

enum class ValueKind : uint8_t { Null, Bool, Int, Float, String, List, Map, Unknown };

struct MapEntry;

struct ConfigValue {
  ValueKind kind = ValueKind::Null;
  bool boolean = false;
  bool quoted = false;  // a quoted scalar: never typed, always a string
  int64_t integer = 0;
  double real = 0.0;
  // String contents; for Unknown the expression that could not be evaluated
  // statically ("${oc.env:TP}", "$SLURM_NNODES").
  std::string text;
  std::vector<ConfigValue> items;  // List
  std::vector<MapEntry> entries;   // Map, in source order
  Provenance where;
  std::vector<Provenance> earlier;  // values of lower layers this one replaced

  bool is_map() const { return kind == ValueKind::Map; }
  bool is_list() const { return kind == ValueKind::List; }
  bool is_null() const { return kind == ValueKind::Null; }
  bool is_unknown() const { return kind == ValueKind::Unknown; }
};

struct MapEntry {
  std::string key;
  ConfigValue value;
};

// Constructors for scalars.
ConfigValue make_null(Provenance where = {});
ConfigValue make_bool(bool value, Provenance where = {});
ConfigValue make_int(int64_t value, Provenance where = {});
ConfigValue make_float(double value, Provenance where = {});
ConfigValue make_string(std::string value, Provenance where = {});
ConfigValue make_unknown(std::string expression, Provenance where = {});
ConfigValue make_map(Provenance where = {});
ConfigValue make_list(Provenance where = {});

// Split "a.b.0.c" at dots.
std::vector<std::string> split_path(std::string_view dotted);

// "model.tensor_model_parallel_size" -> "tensor_model_parallel_size".
std::string last_segment(std::string_view dotted);
std::string join_path(const std::vector<std::string>& segments, size_t count = SIZE_MAX);

// Child lookups. A numeric segment indexes a list.
const ConfigValue* find_child(const ConfigValue& node, std::string_view key);
ConfigValue* find_child(ConfigValue& node, std::string_view key);
const ConfigValue* find_path(const ConfigValue& root, std::string_view dotted);
ConfigValue* find_path(ConfigValue& root, std::string_view dotted);
const ConfigValue* find_path(const ConfigValue& root, const std::vector<std::string>& segments);

// The node at `segments`, creating maps on the way (a scalar on the way is
// replaced by a map). Returns the existing or newly created (null) node.
ConfigValue& ensure_path(ConfigValue& root, const std::vector<std::string>& segments);

// Remove the entry at `segments`; false when absent.
bool erase_path(ConfigValue& root, const std::vector<std::string>& segments);

// Set the node at `segments` to `value`, keeping the replaced value's
// provenance in `earlier` (history for hover and notes).
void assign_path(ConfigValue& root, const std::vector<std::string>& segments, ConfigValue value);

// OmegaConf.merge semantics: mappings merge key by key, everything else
// (scalars, lists) is replaced by the overlay.
void merge_into(ConfigValue& base, const ConfigValue& overlay);

// Typed reads. nullopt when absent, null, unknown or of another type.
// Ints accept integral floats (Hydra's `4.0`) only when exact.
std::optional<int64_t> as_int(const ConfigValue* value);
std::optional<bool> as_bool(const ConfigValue* value);
std::optional<double> as_number(const ConfigValue* value);
std::optional<std::string> as_string(const ConfigValue* value);

// Display a value the way the user would write it: 8192, true, null, "abc",
// [1, 2], {a: 1}. Unknown values print their expression.
std::string to_display(const ConfigValue& value);

// Visit every leaf (non-map) node with its dotted path, in order.
template <typename Visit>
void for_each_leaf(const ConfigValue& node, std::string& path, Visit&& visit) {
  if (node.kind != ValueKind::Map) {
    visit(path, node);
    return;
  }
  for (const MapEntry& entry : node.entries) {
    size_t size = path.size();
    if (!path.empty()) path += '.';
    path += entry.key;
    for_each_leaf(entry.value, path, visit);
    path.resize(size);
  }
}

}  // namespace mblint
