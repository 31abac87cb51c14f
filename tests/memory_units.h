// The unit the memory-estimate tests compare in, and a model's parameter
// count read back from the estimate's weights.
#pragma once

#include "lint/facts/estimate.h"

namespace mblint::test {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The parameters `m`'s rank holds: its weights in bf16 (2 bytes each), with
// no FP8 weight cache and no LoRA, which change the bytes and not the count.
inline double bf16_parameters(MemoryModel m) {
  m.fp8 = m.fp8_weight_cache = false;
  m.lora_rank = 0;
  m.param_bytes = 2;
  return estimate_model(m).weights * kGiB / 2;
}

}  // namespace mblint::test
