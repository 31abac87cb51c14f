// Hydra override strings (`key=value`, `+key=value`, `++key=value`, `~key`,
// `~key=value`), parsed and typed exactly as Hydra 1.3.2's override grammar
// does, the way Megatron Bridge's parse_hydra_overrides() sees them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/mapped_string.h"

namespace mblint {

enum class OverrideOp { Change, Add, ForceAdd, Delete };

struct HydraOverride {
  OverrideOp op = OverrideOp::Change;
  std::vector<std::string> key;  // dotted key split at '.', e.g. {"model", "seq_length"}
  Span key_span;                 // the key (without + / ++ / ~)
  Span statement_span;           // the whole override word
  // The typed value. Absent for `~key`. `key=` is the empty string.
  // Its Provenance has layer, value, key and statement spans filled; nested
  // list items and dict values carry their own value spans.
  std::optional<ConfigValue> value;
};

struct HydraParse {
  std::optional<HydraOverride> parsed;  // set when the override is usable
  // Problems, as diagnostics of rule "override-syntax" with exact spans (the
  // column Hydra would report) and a help line. Code and severity are filled
  // in later from the rule registry.
  std::vector<Diagnostic> problems;
};

// Parse one override word. `layer` goes into the value's Provenance.
HydraParse parse_hydra_override(const MappedString& word, Layer layer);

}  // namespace mblint
