// GQA key/value groups vs tensor parallelism; the rule changed in
// Megatron-Core 0.16 (groups may also divide TP, replicating KV heads).
#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kQueryGroupsDivisibleByTp;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& groups = d.num_query_groups;
  if (!tp.known() || !groups.known() || *tp <= 1 || *groups <= 0) return;
  if (const ConfigValue* mla = find_path(context.job.config, "model.multi_latent_attention");
      mla && as_bool(mla).value_or(false)) {
    return;  // MLA has no query groups
  }
  bool divisor_allowed = context.job.versions.megatron_core >= Version{0, 16, 0};
  bool multiple = *groups % *tp == 0;
  bool divisor = *tp % *groups == 0;
  if (multiple || (divisor_allowed && divisor)) return;
  std::string version = to_string(context.job.versions.megatron_core);
  std::string message =
      divisor_allowed
          ? fmt::format("num_query_groups {} is neither a multiple nor a divisor of tensor_model_parallel_size {}",
                        *groups, *tp)
          : fmt::format("num_query_groups {} is not a multiple of tensor_model_parallel_size {} (Megatron-Core {} "
                        "needs a multiple; divisors are accepted from 0.16)",
                        *groups, *tp, version);
  Diagnostic diag = finding(kQueryGroupsDivisibleByTp, std::move(message), {&tp, &groups});
  std::vector<int64_t> choices;
  for (int64_t t = 2; t <= 64; t *= 2) {
    if (*groups % t == 0 || (divisor_allowed && t % *groups == 0)) choices.push_back(t);
  }
  std::vector<int64_t> near;
  for (int64_t t : choices) {
    if (t <= 8) near.push_back(t);
  }
  diag.help = near.empty() ? "use tensor_model_parallel_size 1"
                           : fmt::format("use tensor_model_parallel_size {}", join_or(near));
  if (!near.empty()) diag.fixes.push_back(set_value_fix(tp, near.back()));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kQueryGroupsDivisibleByTp = {
    .code = "MB202",
    .name = "query-groups-divisible-by-tp",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "tensor parallelism must fit the key/value (query) groups of grouped-query attention",
    .doc = R"md(With grouped-query attention each tensor-parallel rank needs whole key/value groups. Up to
Megatron-Core 0.15, `TransformerConfig` requires `num_query_groups % TP == 0` ("must be a
multiple of tensor_model_parallel_size"). From 0.16 it also accepts a `num_query_groups` that
divides TP, replicating the key/value heads ("must be a multiple or divisor of"). Which check
applies follows `--megatron-core-version` (default: the newest release). Multi-latent attention
(DeepSeek) has no query groups and is not checked.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 6\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 6"},
    .good = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 8\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .check = check,
    .checks = "MC B2, PS 12",
};

}  // namespace mblint
