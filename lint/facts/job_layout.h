// A job's rank layout: its parallel sizes, world size and rank order
// (dist.use_tp_pp_dp_mapping) read through Derived, so `mblint layout`, the
// planner and the NVLink-domain rules place ranks the same way.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/facts/derived.h"
#include "lint/facts/rank_layout.h"
#include "lint/model/job.h"

namespace mblint {

RankOrder job_rank_order(const Job& job);

// nullopt when a size or the world size is unknown, or Megatron would refuse
// them; `why_not` says which. A parallel size the job does not write
// anywhere takes Megatron's default (1; ETP = TP) when `assumed` is given,
// which then says so.
std::optional<RankLayout> job_rank_layout(const Job& job, const Derived& derived, std::string* why_not = nullptr,
                                          std::vector<std::string>* assumed = nullptr);

}  // namespace mblint
