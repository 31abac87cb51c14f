// Tensor-parallel groups are consecutive ranks (order tp-cp-ep-dp-pp): a TP
// group stays inside one NVLink domain only if TP divides the domain size.
// The groups come from the same rank layout `mblint layout` draws.
#include "lint/facts/job_layout.h"
#include "rules/support/rule_support.h"
#include "rules/support/speed_support.h"

namespace mblint {

extern const RuleInfo kTpCrossesNvlinkDomain;

namespace {

// Whether some TP group spans two NVLink domains (consecutive blocks of
// `domain` ranks). TP is the fastest axis in either order, so the TP groups
// do not depend on the other sizes; without a known world size, enough
// ranks to fill two domains stand in for it.
bool tp_groups_cross(const Derived& d, int64_t tp, int64_t domain) {
  int64_t world = d.world_size.known() && *d.world_size % tp == 0 ? *d.world_size : 0;
  if (world == 0) world = tp * ((2 * domain + tp - 1) / tp);
  RankGrid grid = decoder_grid(tp, 1, world / tp, 1, RankOrder::TpCpEpDpPp);
  return count_crossings(grid, "tp", domain).crossing > 0;
}

// "the speed model puts the exposed tensor-parallel communication at about
// 31% of the predicted 12.4 s step (about 4% if the group fitted in one NVLink
// domain); "
// when it predicts the job and crossing costs something; "" otherwise. The
// model sends a TP group over the network only when TP exceeds the domain.
std::string crossing_cost(const RuleContext& context, const std::optional<SpeedEstimate>& speed, int64_t tp) {
  if (!speed) return "";
  std::optional<SpeedEstimate> inside = speed_with_domain(context, tp);
  if (!inside || speed->breakdown.tp <= inside->breakdown.tp) return "";
  return fmt::format("the speed model puts the exposed tensor-parallel communication at {} ({} if the "
                     "group fitted in one NVLink domain); ",
                     cost_text(*speed, speed->breakdown.tp),
                     fmt::format("about {:.0f}%", step_share(*inside, inside->breakdown.tp) * 100));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& domain = d.nvlink_domain;
  if (!tp.known() || !domain.known() || *tp <= 1 || *domain <= 0) return;
  // All ranks in one domain: nothing can cross.
  if (d.world_size.known() && *d.world_size <= *domain) return;
  bool too_large = *tp > *domain;
  if (!tp_groups_cross(d, *tp, *domain)) return;
  std::vector<int64_t> fitting;
  for (int64_t t : valid_tensor_parallel_sizes(context, std::min(*domain, *tp - 1))) {
    if (*domain % t == 0) fitting.push_back(t);
  }
  if (fitting.size() > 2) fitting.erase(fitting.begin(), fitting.end() - 2);
  std::string message =
      too_large ? fmt::format("tensor_model_parallel_size {} is larger than the NVLink domain ({}): "
                              "tensor-parallel all-reduces in every layer cross the inter-node network",
                              *tp, count_of(*domain, "GPU"))
                : fmt::format("tensor_model_parallel_size {} does not divide the NVLink domain ({}): TP groups "
                              "are consecutive ranks, so some of them straddle two domains",
                              *tp, count_of(*domain, "GPU"));
  Diagnostic diag = finding_at(kTpCrossesNvlinkDomain, std::move(message), tp, {&tp, &domain});
  std::optional<SpeedEstimate> speed = job_speed(context);
  std::string gain;
  if (speed && !fitting.empty()) {
    std::string path = config_path_or(tp, "model.tensor_model_parallel_size");
    auto g = gain_text(context, *speed, {MemoryChange{path, make_int(fitting.back())}});
    if (g) gain = fmt::format(" (TP {}: {})", fitting.back(), *g);
  }
  diag.help = crossing_cost(context, speed, *tp);
  diag.help += fitting.empty() ? "keep tensor parallelism inside one NVLink domain; scale across nodes with "
                                 "pipeline or data parallelism"
                               : fmt::format("use tensor_model_parallel_size {}{} and scale across nodes with "
                                             "pipeline or data parallelism",
                                             join_or(fitting), gain);
  if (!fitting.empty()) diag.fixes.push_back(set_value_fix(tp, fitting.back()));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kTpCrossesNvlinkDomain = {
    .code = "MB203",
    .name = "tp-crosses-nvlink-domain",
    .group = RuleGroup::Tensor,
    .severity = Severity::Warning,
    .summary = "tensor parallelism should stay inside one NVLink domain",
    .doc = R"md(Tensor parallelism all-reduces activations twice per layer, forward and backward; it is only
fast over NVLink. Megatron orders ranks `tp-cp-ep-dp-pp`, so a TP group is a run of consecutive
ranks: it stays inside one NVLink domain (8 GPUs on HGX H100/B200 nodes, 72 on GB200/GB300
NVL72 racks) only when TP divides the domain size. A TP group that crosses domains runs its
all-reduces over InfiniBand or Ethernet and "destroys throughput" (NVIDIA's parallelism guide).

The domain size comes from `--gpu` (or the GPU type in `#SBATCH --gres`, or the recipe's GPU);
without a GPU type mblint assumes one node is one domain. On single-node NVLink systems (HGX/DGX
A100, H100, H200, B200, B300 boards) NVLink stops at the node, so the domain is capped at the GPUs
per node: TP 8 on nodes of 4 H100s crosses the network (`--nodes 8 --gpus-per-node 4 --gpu h100`).
Rack-scale NVLink systems (GB200/GB300 NVL72, Vera Rubin) keep their 72-GPU domain across their
4-GPU trays.

When the speed model can predict the job (a known GPU with published figures, a modelled
model: see docs/speed-model.md) and TP is larger than the domain, the help says what the
exposed tensor-parallel communication costs as a share of the predicted step, next to what it
would cost inside one NVLink domain, and what the suggested TP size does to tokens/s/GPU,
predicted on the changed job (the other sizes as the job sets them, DP taking up the rest).
The model does not price a group that straddles two domains without exceeding one, so for
those the help leaves the cost out, as it does when the model cannot predict the job.

The rank order is `parallel_state.initialize_model_parallel`'s (`order="tp-cp-ep-dp-pp"`
in Megatron-LM and Megatron Bridge, every release from core_v0.12.0).)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 16\n  pipeline_model_parallel_size: 2\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 8\n  pipeline_model_parallel_size: 4\n  context_parallel_size: 1\n"},
    .check = check,
    .checks = "PS 13, PS 14, PS 17",
};

}  // namespace mblint
