// OmegaConf interpolations inside a config: `${dataset.seq_length}` (absolute),
// `${.x}` / `${..x}` (relative) resolve to the referenced value, as
// OmegaConf.to_container(resolve=True) does when Bridge merges a file.
// Resolvers (`${oc.env:TP}`, `${multiply:...}`) need the environment or code:
// their values are unknown, never guessed, never an error.
#pragma once

#include "lint/config_value.h"

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

struct InterpolationResult {
  bool complete = true;
  Span stopped_at;  // the interpolation being resolved when the work ran out
};

InterpolationResult resolve_interpolations(ConfigValue& root);

// True when `text` contains `${`.
bool has_interpolation(const std::string& text);

}  // namespace mblint
