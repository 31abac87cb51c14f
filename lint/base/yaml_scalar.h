// How a plain (unquoted) YAML scalar is typed depends on who loads the file.
// Megatron Bridge reads `--config-file` overrides with OmegaConf's loader
// (YAML 1.1 plus OmegaConf's extra float rule: `1e-4` is a float) and full
// ConfigContainer dumps with PyYAML's safe_load (`1e-4` stays a string, dates
// become dates). Megatron-LM functional tests go through yq (YAML 1.2 core).
#pragma once

#include <string_view>

#include "lint/base/config_value.h"

namespace mblint {

enum class YamlFlavor {
  OmegaConf,  // Bridge --config-file overrides, NeMo 1.x Hydra configs
  PyYaml,     // ConfigContainer.from_yaml (dumps with _target_)
  Yaml12,     // yq / YAML 1.2 core schema (Megatron-LM model_config.yaml)
};

std::string_view yaml_flavor_name(YamlFlavor flavor);

// Type a plain scalar. Returns Null, Bool, Int, Float or String (never
// Map/List/Unknown). Provenance is left empty for the caller to fill.
ConfigValue type_plain_scalar(std::string_view text, YamlFlavor flavor);

// The same typing by the published resolver patterns alone, without the
// shortcuts type_plain_scalar takes for common scalars: the reference the
// shortcuts are tested against.
ConfigValue type_plain_scalar_by_resolvers(std::string_view text, YamlFlavor flavor);

}  // namespace mblint
