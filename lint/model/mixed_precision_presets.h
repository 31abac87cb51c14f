// Megatron Bridge's mixed-precision presets (training/mixed_precision.py),
// the compute-dtype names of the performance recipes (perf_recipes/_common.py
// `_perf_precision`: the same presets with grad_reduce_in_fp32 off and, for
// current scaling, no BF16 edge layers) and the recipe-name spellings of the
// catalog: the one table both the effective precision and the
// mixed_precision field reader use.
#pragma once

#include <string_view>

namespace mblint {

struct MixedPrecisionPreset {
  std::string_view name;
  bool fp16;             // else bf16 (MixedPrecisionConfig's defaults: neither)
  std::string_view fp8;  // "" = None
  std::string_view fp8_recipe;
  bool fp8_param_gather;
  bool first_last_layers_bf16;
  int layers_at_start;
  int layers_at_end;
  std::string_view fp4;  // "" = None
  bool fp4_param_gather;
  bool grad_reduce_in_fp32;
  bool reuse_grad_buf;
  // A name only the recipe catalog uses: get_mixed_precision_config does not
  // accept it from a config.
  bool catalog_only;

  bool config_defaults() const;  // MixedPrecisionConfig's own defaults, no preset
};

// The preset `name` ('-' and '_' both accepted); the catalog-only names
// only with `catalog_spellings` (a value of the recipe layer). nullptr when
// unknown.
const MixedPrecisionPreset* find_mixed_precision_preset(std::string_view name, bool catalog_spellings);

// MixedPrecisionConfig's defaults: a mixed_precision section that names no
// preset starts from these.
const MixedPrecisionPreset& mixed_precision_config_defaults();

}  // namespace mblint
