#include "lint/model/mixed_precision_presets.h"

#include <algorithm>
#include <array>
#include <string>

namespace mblint {

namespace {

using P = MixedPrecisionPreset;

constexpr std::array kPresets = {
    P{"bf16_mixed", false, "", "tensorwise", false, false, 0, 0, "", false, true, false, false},
    P{"fp16_mixed", true, "", "tensorwise", false, false, 0, 0, "", false, false, false, false},
    P{"bf16_with_fp8_delayed_scaling_mixed", false, "hybrid", "delayed", true, false, 0, 0, "", false, true, false,
      false},
    P{"fp16_with_fp8_delayed_scaling_mixed", true, "hybrid", "delayed", true, false, 0, 0, "", false, false, false,
      false},
    P{"bf16_with_mxfp8_mixed", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, true, true, false},
    P{"fp16_with_mxfp8_mixed", true, "e4m3", "mxfp8", true, false, 0, 0, "", false, false, true, false},
    P{"bf16_with_fp8_current_scaling_mixed", false, "hybrid", "tensorwise", true, true, 1, 1, "", false, true, false,
      false},
    P{"nemotron_h_bf16_with_fp8_current_scaling_mixed", false, "hybrid", "tensorwise", true, true, 2, 2, "", false,
      true, false, false},
    P{"nanov2_bf16_with_fp8_current_scaling_mixed", false, "hybrid", "blockwise", true, true, 2, 2, "", false, true,
      false, false},
    P{"fp16_with_fp8_current_scaling_mixed", true, "hybrid", "tensorwise", true, true, 1, 1, "", false, false, false,
      false},
    P{"bf16_with_fp8_subchannel_scaling_mixed", false, "hybrid", "blockwise", false, false, 0, 0, "", false, true,
      false, false},
    P{"fp16_with_fp8_subchannel_scaling_mixed", true, "hybrid", "blockwise", false, false, 0, 0, "", false, false,
      false, false},
    P{"bf16_with_nvfp4_mixed", false, "", "tensorwise", false, false, 0, 0, "e2m1", true, true, false, false},
    P{"nemotron_3_super_bf16_with_nvfp4_mixed", false, "", "tensorwise", false, true, 0, 14, "e2m1", true, true, false,
      false},
    // The performance recipes' compute dtypes.
    P{"bf16", false, "", "tensorwise", false, false, 0, 0, "", false, false, false, true},
    P{"fp8_cs", false, "hybrid", "tensorwise", true, false, 1, 1, "", false, false, false, true},
    P{"fp8_ds", false, "hybrid", "delayed", true, false, 0, 0, "", false, false, false, true},
    P{"fp8_mx", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, false, true, true},
    P{"nvfp4", false, "", "tensorwise", false, false, 0, 0, "e2m1", true, false, false, true},
    // Recipe-name spellings: the library recipes of these use the named presets.
    P{"fp8cs", false, "hybrid", "tensorwise", true, true, 1, 1, "", false, true, false, true},
    P{"fp8mx", false, "e4m3", "mxfp8", true, false, 0, 0, "", false, true, true, true},
    P{"fp8ds", false, "hybrid", "delayed", true, false, 0, 0, "", false, false, false, true},
};

constexpr P kConfigDefaults{"MixedPrecisionConfig", false, "", "tensorwise", false, false, 0, 0, "", false, true, false,
                            false};

}  // namespace

bool MixedPrecisionPreset::config_defaults() const { return name == kConfigDefaults.name; }

const MixedPrecisionPreset* find_mixed_precision_preset(std::string_view name, bool catalog_spellings) {
  std::string normalized(name);
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  for (const P& p : kPresets) {
    if (p.name == normalized && (!p.catalog_only || catalog_spellings)) return &p;
  }
  return nullptr;
}

const MixedPrecisionPreset& mixed_precision_config_defaults() { return kConfigDefaults; }

}  // namespace mblint
