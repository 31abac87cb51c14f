#include "lint/report/speed_json.h"

#include <cmath>

namespace mblint {

namespace {
double round3(double value) { return std::round(value * 1000.0) / 1000.0; }
}  // namespace

nlohmann::ordered_json performance_json(const SpeedEstimate& s) {
  const StepBreakdown& b = s.breakdown;
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  o["step_time_s"] = round3(s.step_time_s);
  o["tokens_per_sec_per_gpu"] = std::round(s.tokens_per_sec_per_gpu);
  o["model_tflops_per_gpu"] = std::round(s.model_tflops_per_gpu * 10) / 10;
  o["mfu"] = round3(s.mfu);
  o["breakdown"] = {{"compute", round3(b.compute)}, {"tp", round3(b.tp)},           {"cp", round3(b.cp)},
                    {"ep", round3(b.ep)},           {"pp", round3(b.pp)},           {"dp", round3(b.dp)},
                    {"bubble", round3(b.bubble)},   {"optimizer", round3(b.optimizer)}, {"other", round3(b.other)}};
  o["slowest_stage"] = s.slowest_stage;
  return o;
}

}  // namespace mblint
