#include "lint/job_layout.h"

#include <fmt/format.h>

namespace mblint {

RankOrder job_rank_order(const Job& job) {
  Setting mapping = config_bool(job, "dist.use_tp_pp_dp_mapping");
  return mapping.value.value_or(false) ? RankOrder::TpCpEpPpDp : RankOrder::TpCpEpDpPp;
}

std::optional<RankLayout> job_rank_layout(const Job& job, const Derived& d, std::string* why_not) {
  for (const Quantity* q : {&d.world_size, &d.tensor_parallel, &d.pipeline_parallel, &d.context_parallel,
                            &d.expert_parallel, &d.expert_tensor_parallel}) {
    if (!q->known()) {
      if (why_not) {
        if (q == &d.world_size) {
          *why_not = "the world size is not known (pass --nodes and --gpus-per-node)";
        } else {
          *why_not = q->how.empty() ? fmt::format("{} is not known", q->name)
                                    : fmt::format("{} is not known ({})", q->name, q->how);
        }
      }
      return std::nullopt;
    }
  }
  ParallelSizes sizes{.world = *d.world_size,
                      .tp = *d.tensor_parallel,
                      .pp = *d.pipeline_parallel,
                      .cp = *d.context_parallel,
                      .ep = *d.expert_parallel,
                      .etp = *d.expert_tensor_parallel,
                      .order = job_rank_order(job)};
  return make_rank_layout(sizes, why_not);
}

}  // namespace mblint
