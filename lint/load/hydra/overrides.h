// Applying Hydra overrides to the config the way Megatron Bridge does: in
// OmegaConf struct mode (a key must exist to be changed, must not exist to
// be added with `+`), then copied onto the dataclasses.
#pragma once

#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/load/hydra/hydra_override.h"
#include "lint/model/job.h"

namespace mblint {

// Hydra overrides read per launch (script words or --set): real launches have
// tens; a generated list past this is cut with a diagnostic.
inline constexpr size_t kMaxOverrides = 10000;

// Whether Hydra will find a key in the config it overrides.
enum class KeyPresence {
  Present,  // a field of the section, or a key the loaded config has
  Absent,   // certainly not there: Hydra refuses `key=value`
  Unknown,  // depends on what the recipe put there (a null section, a dict)
};

KeyPresence key_presence(const Job& job, const std::vector<std::string>& key);

// `model.transformer.x` (builder-backed Llama configs) -> `model.x`; other
// keys unchanged. Sets job.builder_backed_model when it rewrote the key.
std::vector<std::string> canonical_key(Job& job, std::vector<std::string> key);

// Apply one parsed override; problems Hydra would raise (missing key, `+`
// on an existing key, deleting what is not there) become diagnostics of
// rule "override-syntax".
void apply_override(Job& job, const HydraOverride& override_, std::vector<Diagnostic>& problems);

}  // namespace mblint
