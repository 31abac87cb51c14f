// Shared by the batch and training-schedule rules: a setting read as "set",
// "unset" (null or the dataclass default) or "unknown" (a recipe may set it
// and mblint's catalog does not record it), with its number.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/support/pipeline_support.h"

namespace mblint {

struct Field {
  enum State { Unset, Set, Unknown };
  State state = Unknown;
  std::optional<double> number;  // when set to a number
  Quantity quantity;             // name, path, where; value when an integer; display as written

  bool set() const { return state == Set; }
  bool unset() const { return state == Unset; }
  bool known() const { return state != Unknown && (state == Unset || number.has_value()); }
  // The number, with `unset_as` for an unset field (0 for lr_warmup_iters).
  std::optional<double> value_or_unset(double unset_as) const {
    if (state == Unset) return unset_as;
    return number;
  }
  // Set to something other than `unset_as` (lr_warmup_iters != 0).
  bool set_to_other_than(double unset_as) const { return state == Set && (!number || *number != unset_as); }
};

// null and a full dump's None default are Unset; a full dump's numeric
// default is Set (defaulted); absent from a partial config is Unknown, as is
// a value mblint cannot evaluate.
Field read_field(const Job& job, std::string_view path);

// "1e-4", "500", "0.1"
std::string format_number(double value);

// Whether the training length is counted in samples (train_samples set), in
// iterations (train_samples unset), or unknown.
enum class TrainingUnit { Iterations, Samples, Unknown };
TrainingUnit training_unit(const Job& job);

// Megatron Bridge's _calculate_scheduler_steps: the decay and warm-up
// lengths in samples (iteration counts times the global batch). Each is
// nullopt when an input is unknown.
struct SchedulerSteps {
  TrainingUnit unit = TrainingUnit::Unknown;
  std::optional<double> decay;   // lr_decay_steps
  std::optional<double> warmup;  // lr_warmup_steps
  std::string decay_how;         // "lr_decay_iters unset: train_iters 100 x global batch 512"
  std::string warmup_how;
  std::vector<Quantity> decay_inputs;   // the settings the decay length came from
  std::vector<Quantity> warmup_inputs;  // ... and the warm-up length
};

SchedulerSteps scheduler_steps(const RuleContext& context);

}  // namespace mblint
