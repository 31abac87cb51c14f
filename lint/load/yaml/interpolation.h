// OmegaConf interpolations inside a config: `${dataset.seq_length}` (absolute),
// `${.x}` / `${..x}` (relative) resolve to the referenced value, as
// OmegaConf.to_container(resolve=True) does when Bridge merges a file.
// Resolvers (`${oc.env:TP}`, `${multiply:...}`) need the environment or code:
// their values are unknown, never guessed, never an error. References to keys
// that do not exist and cycles are recorded as problems; chains longer than
// kMaxInterpolationDepth are unknown.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/config_value.h"

namespace mblint {

// Replace every interpolation in `root` by its value where it can be known.
// A value that is exactly one reference takes the referenced value's
// provenance (that is where the number was written) and records the
// interpolation in `interpolated_at`; a string built from several parts keeps the
// interpolation's location.
// Work is bounded (kInterpolationWork map entries scanned and nodes copied):
// a hostile file of long chains or of references to large maps would
// otherwise take quadratic time and memory. Past the bound the remaining
// interpolations stay unknown and `complete` is false.
inline constexpr size_t kInterpolationWork = 4'000'000;
inline constexpr int kMaxInterpolationDepth = 32;

// A reference OmegaConf cannot resolve: a key the config does not have
// (InterpolationKeyError), or a chain that comes back to where it started
// ("Recursive interpolation detected"). Which missing keys are errors depends
// on what else supplies keys (a recipe): lint/resolve/interpolation_check.h decides.
struct InterpolationProblem {
  enum class Kind { MissingKey, Cycle };
  Kind kind = Kind::MissingKey;
  std::string expression;           // as written inside ${...}
  size_t offset = 0;                // of "${" in the holding value's text
  size_t length = 0;                // of "${...}"
  std::string text;                 // the holding value's text
  Provenance where;                 // of the holding value
  std::vector<std::string> holder;  // path of the holding value
  // MissingKey: the absolute path named and how many of its segments exist.
  std::vector<std::string> target;
  size_t found = 0;
  // Cycle: the paths the chain passes through, the first one again at the end,
  // and where each of them holds its interpolation.
  std::vector<std::vector<std::string>> chain;
  std::vector<Span> chain_at;
};

struct InterpolationResult {
  bool complete = true;
  Span stopped_at;  // the interpolation being resolved when the work ran out
  std::vector<InterpolationProblem> problems;
};

// What a job's environment says about a variable `${oc.env:NAME}` reads.
struct EnvironmentValue {
  enum class State : uint8_t { Set, Unset, Unknown };
  State state = State::Unknown;
  std::string value;  // Set
  Span where;         // Set, Unknown: the assignment
};

// The environment of the process that composes the config (the trainer a
// launch script starts). With it, the resolvers whose meaning is fixed are
// evaluated:
// * `oc.env:NAME[,DEFAULT]` (OmegaConf 2.1+): the variable's text when it is
//   set; DEFAULT (converted to text, `null` kept) when the environment is
//   known not to hold it; unknown when it is set to something mblint cannot
//   know, or unset without a default (OmegaConf raises).
// * `oc.decode:TEXT`: TEXT typed as OmegaConf's grammar types a plain value.
// * `add`, `multiply`, `floor_div` and `ceil_div` on two integers, as
//   Python computes them: `multiply` as NeMo registers it for every model
//   (nemo/core/classes/modelPT.py, `lambda x, y: x * y`), the others as
//   MLPerf's NeMo trainers do (train.py: `lambda x, y: x // y`; `ceil_div`
//   as `(x + y - 1) // y`). On anything but integers, and every other
//   resolver: unknown.
struct InterpolationEnvironment {
  std::function<EnvironmentValue(std::string_view name)> lookup;
};

InterpolationResult resolve_interpolations(ConfigValue& root, const InterpolationEnvironment* environment = nullptr);

// True when `text` contains `${`.
bool has_interpolation(const std::string& text);

}  // namespace mblint
