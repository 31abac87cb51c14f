// The JSON form of a speed estimate, shared by `estimate` and `plan`.
#pragma once

#include <nlohmann/json.hpp>

#include "lint/facts/speed_model.h"

namespace mblint {

// {step_time_s, tokens_per_sec_per_gpu, model_tflops_per_gpu, mfu,
//  breakdown: {compute, tp, cp, ep, pp, dp, bubble, optimizer, other}, slowest_stage}
nlohmann::ordered_json performance_json(const SpeedEstimate& s);

}  // namespace mblint
