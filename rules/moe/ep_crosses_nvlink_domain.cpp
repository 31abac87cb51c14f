// The token all-to-all runs inside each expert-parallel group, every MoE
// layer, forward and backward; a group that spans NVLink domains sends it
// over the inter-node network.
#include "lint/facts/job_layout.h"
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kEpCrossesNvlinkDomain;

namespace {

using namespace moe;

// Megatron's expert grid (ETP, EP, expert DP, PP), the same layout
// `mblint layout` draws: an EP group is EP ranks ETP apart inside one
// pipeline stage. Domains are consecutive blocks of `domain` ranks.
Crossing ep_crossings(const Job& job, int64_t world, int64_t pp, int64_t ep, int64_t etp, int64_t domain) {
  RankGrid grid = expert_grid(etp, ep, world / (etp * ep * pp), pp, job_rank_order(job));
  return count_crossings(grid, "ep", domain);
}

constexpr int64_t kMaxRanks = int64_t{1} << 22;  // keep the walk over ranks cheap

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& ep = d.expert_parallel;
  const Quantity& etp = d.expert_tensor_parallel;
  const Quantity& pp = d.pipeline_parallel;
  const Quantity& world = d.world_size;
  NvlinkDomain nvlink = nvlink_domain(context.job, d);
  const Quantity& domain = nvlink.size;
  if (!is_moe(d) || !ep.known() || !etp.known() || !pp.known() || !world.known() || !domain.known()) return;
  if (*ep <= 1 || *etp <= 0 || *pp <= 0 || *domain <= 0 || *world > kMaxRanks) return;
  if (*world % (*ep * *etp * *pp) != 0) return;  // expert-world-size-divisibility
  if (*d.num_moe_experts % *ep != 0) return;       // ep-divides-experts: the model does not build
  int64_t span = *ep * *etp;
  // An NVLink domain larger than a node (NVL72) holds whichever nodes the
  // scheduler put in that rack: only a group larger than a domain must cross.
  bool multi_node_domain = d.gpus_per_node.known() && *domain > *d.gpus_per_node;
  std::string message;
  if (multi_node_domain) {
    if (span <= *domain) return;
    int64_t groups = *world / *ep;
    message = fmt::format("all {} expert-parallel groups (expert_model_parallel_size {} x expert_tensor_parallel_size {}) "
                          "cross NVLink domains — each spans {} GPUs but an NVLink domain holds {}: their token "
                          "all-to-all runs over the inter-node network, across at least {} domains per group",
                          groups, *ep, *etp, span, *domain, (span + *domain - 1) / *domain);
  } else {
    Crossing c = ep_crossings(context.job, *world, *pp, *ep, *etp, *domain);
    if (c.crossing == 0) return;
    std::string extent =
        span > *domain ? fmt::format("each spans {} GPUs but an NVLink domain holds {}", span, *domain)
                       : fmt::format("they do not line up with the {}-GPU NVLink domains", *domain);
    message = fmt::format("{} of {} expert-parallel groups (expert_model_parallel_size {} x expert_tensor_parallel_size "
                          "{}) cross NVLink domains — {}: their token all-to-all runs over the inter-node network, up "
                          "to {} domains per group",
                          c.crossing, c.groups, *ep, *etp, extent, c.max_blocks);
  }
  Diagnostic diag = finding_at(kEpCrossesNvlinkDomain, std::move(message), ep, {&ep, &etp, &domain});
  Field dispatcher = read_field(context.job, "model.moe_token_dispatcher_type");
  bool flex = dispatcher.text() == "flex";
  std::vector<int64_t> fitting;
  for (int64_t e : divisors(*d.num_moe_experts)) {
    if (e > 1 && e * *etp <= *domain && *domain % (e * *etp) == 0) fitting.push_back(e);
  }
  std::string within = fitting.empty() ? "" : fmt::format(" (expert_model_parallel_size {} fits)", fitting.back());
  report(out, std::move(diag),
         flex ? fmt::format("keep EP x ETP within {} GPUs where memory allows{}; otherwise the flex dispatcher "
                            "already suits inter-node all-to-all, and the EP A2A overlap hides it",
                            *domain, within)
              : fmt::format("keep EP x ETP within {} GPUs where memory allows{}, or use the flex dispatcher "
                            "(DeepEP/HybridEP) and the EP A2A overlap",
                            *domain, within));
}

}  // namespace

extern const RuleInfo kEpCrossesNvlinkDomain = {
    .code = "MB729",
    .name = "ep-crosses-nvlink-domain",
    .group = RuleGroup::Moe,
    .severity = Severity::Note,
    .summary = "expert-parallel groups span NVLink domains: the token all-to-all goes over the network",
    .doc = R"md(Every MoE layer sends each token to the ranks holding its experts and back, forward and backward:
an all-to-all inside the expert-parallel group. Inside an NVLink domain (8 GPUs on HGX nodes, 72 on
NVL72 racks) that traffic uses NVLink; a group that spans domains sends it over InfiniBand or
Ethernet, often the largest communication cost of a large MoE run.

mblint places the ranks the way Megatron-Core does: the expert grid uses the rank order
`tp-ep-dp-pp` over (ETP, EP, expert DP, PP) — Megatron's `tp-cp-ep-dp-pp` with the context-parallel
ranks folded into expert DP, `tp-ep-pp-dp` with `dist.use_tp_pp_dp_mapping` — so an EP group is EP
ranks, ETP apart, inside one pipeline stage, and a node's GPUs are consecutive ranks
(`mblint layout` draws the same groups). On 8-GPU nodes (one node = one NVLink domain) it reports
exactly how many groups cross a node boundary. On NVL72 racks, where a domain holds several nodes,
which nodes share a rack is the scheduler's choice, so only groups larger than the domain
(EP x ETP > 72) are reported.

This is often unavoidable for the largest models (DeepSeek-V3 runs EP 64 across 8 H100 nodes); the
note is there so the cost is a choice. DeepEP/HybridEP (`flex` dispatcher) are built for inter-node
all-to-all, and the EP A2A overlap (`overlap_moe_expert_parallel_comm`) hides it behind compute. The
NVLink domain comes from `--gpu` (or the launch script's GPU type), else from the job's own
`NVLINK_DOMAIN_SIZE`, else one node is taken as the domain.)md",
    .bad = {"override.yaml",
     "model:\n  expert_model_parallel_size: 16\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 2 --gpus-per-node 8 --gpu h100"},
    .good = {.content = "model:\n  expert_model_parallel_size: 8\n"},
    .check = check,
    .checks = "PS 41",
};

}  // namespace mblint
