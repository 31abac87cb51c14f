#include "lint/facts/job_layout.h"

#include <fmt/format.h>

namespace mblint {

RankOrder job_rank_order(const Job& job) {
  Setting mapping = config_bool(job, "dist.use_tp_pp_dp_mapping");
  return mapping.value.value_or(false) ? RankOrder::TpCpEpPpDp : RankOrder::TpCpEpDpPp;
}

namespace {

bool written(const Quantity& q) { return q.where.value.valid() || q.where.statement.valid() || q.defaulted; }

}  // namespace

std::optional<RankLayout> job_rank_layout(const Job& job, const Derived& d, std::string* why_not,
                                          std::vector<std::string>* assumed) {
  if (!d.world_size.known()) {
    if (why_not) *why_not = "the world size is not known (pass --nodes and --gpus-per-node)";
    return std::nullopt;
  }
  auto size = [&](const Quantity& q, std::optional<int64_t> fallback) -> std::optional<int64_t> {
    if (q.known()) return *q;
    if (assumed && fallback && !written(q)) {
      assumed->push_back(fmt::format("{} is not set anywhere: Megatron's default {}", q.name, *fallback));
      return fallback;
    }
    if (why_not) {
      *why_not = q.how.empty() ? fmt::format("{} is not known", q.name)
                               : fmt::format("{} is not known ({})", q.name, q.how);
    }
    return std::nullopt;
  };
  auto tp = size(d.tensor_parallel, 1);
  if (!tp) return std::nullopt;
  auto pp = size(d.pipeline_parallel, 1);
  if (!pp) return std::nullopt;
  auto cp = size(d.context_parallel, 1);
  if (!cp) return std::nullopt;
  auto ep = size(d.expert_parallel, 1);
  if (!ep) return std::nullopt;
  // Megatron-Core's ETP default is TP (Bridge >= 0.6 uses 1 with EP > 1,
  // which Derived resolves when it can).
  auto etp = size(d.expert_tensor_parallel, *ep == 1 ? std::optional<int64_t>(*tp) : std::nullopt);
  if (!etp) return std::nullopt;
  ParallelSizes sizes{.world = *d.world_size, .tp = *tp, .pp = *pp, .cp = *cp, .ep = *ep, .etp = *etp,
                      .order = job_rank_order(job)};
  return make_rank_layout(sizes, why_not);
}

}  // namespace mblint
