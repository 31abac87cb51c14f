// Helpers shared by the mixture-of-experts rules: reading a setting the way
// the validating program sees it (written, a full dump's dataclass default,
// or Megatron-LM's argparse default), the model precision Megatron Bridge
// resolves from mixed_precision, the comm-overlap switches Bridge applies to
// the model, and environment variables.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "rules/support/rule_support.h"

namespace mblint::moe {

// One config value as the program that validates it sees it. `present` is
// false when nothing is known (not written and no default applies); a known
// null is present.
struct Field {
  std::string name;  // "moe_router_topk"
  std::string path;  // "model.moe_router_topk"
  ConfigValue value;
  bool present = false;
  bool defaulted = false;    // not written: a dataclass or argparse default
  SettingSource source = SettingSource::Unknown;  // which step of read_setting's policy gave it
  std::string default_from;  // "the dataclass default", "the Megatron-LM default"
  std::string how;           // how a resolved value came about (from a Quantity)
  std::string shown;         // how the value reads when it encodes something else (a Quantity's display)

  bool known() const { return present && value.kind != ValueKind::Unknown; }
  bool is_null() const { return present && value.is_null(); }
  std::optional<int64_t> integer() const;
  std::optional<double> number() const;
  std::optional<bool> boolean() const;
  std::optional<std::string> text() const;
  // Python truthiness (None, 0, 0.0, False, "" and [] are false); nullopt when unknown.
  std::optional<bool> truthy() const;
  std::string display() const;
};

Field read_field(const Job& job, std::string_view path);

// A derived or resolved quantity (EP, ETP, CP, ...) as a Field, keeping how
// it was resolved for its note.
Field from_quantity(const Quantity& quantity);

// For notes and fixes written with the shared helpers.
Quantity as_quantity(const Field& field);
Setting as_setting(const Field& field);
Note note_for(const Field& field);
Span span_for(const Field& field);
bool located(const Field& field);

// Of several fields, the one the user most likely just changed: the highest
// located layer (the first one on ties).
const Field& most_specific(std::initializer_list<const Field*> fields);

// Notes for every field but `primary` that is known or located.
void add_field_notes(Diagnostic& d, std::initializer_list<const Field*> fields, const Field* primary);

// A diagnostic of `rule` located at the most specific of `fields`, with a
// note at each of the others.
Diagnostic diagnostic_at(const RuleInfo& rule, std::string message, std::initializer_list<const Field*> fields);

// A fix writing `replacement` where the field was written (no edit when the
// value is a recipe's or a default).
Fix set_field_fix(const Field& field, std::string replacement, FixSafety safety = FixSafety::Unsafe);

// True for a Megatron-LM launch: its validate_args (argparse-level checks)
// runs. Megatron Bridge and NeMo build TransformerConfig directly and skip it.
bool runs_validate_args(const Job& job);

// The model is known to have experts.
bool is_moe(const Derived& d);

// The precision the model trains in: Bridge's mixed_precision (a preset name
// or a MixedPrecisionConfig) overrides model.bf16/fp16/fp8/fp4 at start-up.
struct ComputePrecision {
  std::optional<bool> bf16;
  std::optional<bool> fp16;
  std::optional<bool> quantized;  // fp8 or fp4 compute
  std::string describe;           // "mixed_precision bf16_mixed", "bf16 false and fp16 false"
  Provenance where;               // where it was decided (may be empty for defaults)
  bool defaulted = false;
};
ComputePrecision model_precision(const Job& job);
Note note_for(const ComputePrecision& precision);

// A comm-overlap switch Megatron Bridge applies to the model
// (overlap_moe_expert_parallel_comm, delay_wgrad_compute): the
// comm_overlap.* value when it is set; otherwise, when a CommOverlapConfig
// exists Bridge resets the model's value to false, and without one the
// model.* value stands. nullopt when that cannot be known.
struct Switch {
  std::optional<bool> value;
  Field from;  // the field that decided it
};
Switch overlap_switch(const Job& job, std::string_view field);

// The NVLink domain size: the GPU type's when it was given for the job, else
// the job's own NVLINK_DOMAIN_SIZE (Megatron Bridge's and Megatron-LM's launch
// setting for HybridEP), else the GPU type the recipe's name implies, else
// Derived's assumption of one node (`assumed` set).
struct NvlinkDomain {
  Quantity size;
  bool assumed = false;
};
NvlinkDomain nvlink_domain(const Job& job, const Derived& d);

}  // namespace mblint::moe
