// The MLP's first linear is split by output columns and the second by input
// rows across the tensor-parallel ranks: the hidden width of the MLP must be
// divisible by TP (dense MLP and shared experts) or ETP (routed experts).
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kFfnSizeDivisibleByTp;

namespace {

struct Width {
  Quantity size;           // the MLP width setting
  const Quantity* split;   // TP or ETP
  std::string_view what;   // "the dense MLP"
  std::vector<int64_t> allowed;  // split sizes the rest of the model accepts (2..8)
};

// Allowed split sizes that divide the width, the closest below `current`.
std::vector<int64_t> split_choices(const Width& w) {
  std::vector<int64_t> fitting;
  for (int64_t t : w.allowed) {
    if (*w.size % t == 0) fitting.push_back(t);
  }
  return closest_below(fitting, *w.split->value, 2);
}

void check_width(const Width& w, bool glu, std::vector<Diagnostic>& out) {
  const Quantity& split = *w.split;
  if (!splits_unevenly(w.size, split)) return;
  std::string first_linear = glu ? fmt::format("its first linear has 2 x {} = {} outputs (gated linear unit) and "
                                               "its second linear {} inputs",
                                               *w.size, 2 * *w.size, *w.size)
                                 : fmt::format("its linears have {} outputs and inputs", *w.size);
  Diagnostic diag = finding(kFfnSizeDivisibleByTp,
                            fmt::format("{} {} is not divisible by {} {}: {} is split across the {} ranks and {}",
                                        w.size.name, *w.size, split.name, *split, w.what, *split, first_linear),
                            {&w.size, &split});
  std::vector<int64_t> choices = split_choices(w);
  int64_t valid = nearest_multiple(*w.size, *split);
  diag.help = choices.empty()
                  ? fmt::format("use {} {} (a multiple of {})", w.size.name, valid, *split)
                  : fmt::format("use {} {}, or {} {} (a multiple of {})", split.name, join_or(choices), w.size.name,
                                valid, *split);
  for (auto it = choices.rbegin(); it != choices.rend(); ++it) diag.fixes.push_back(set_value_fix(split, *it));
  diag.fixes.push_back(set_value_fix(w.size, valid));
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Job& job = context.job;
  Setting glu = gated_linear_unit(job);
  bool gated = glu.value.value_or(false);
  bool moe = d.num_moe_experts.known() && *d.num_moe_experts > 0;
  std::vector<int64_t> tp_sizes = valid_tensor_parallel_sizes(context, 8);
  std::vector<int64_t> expert_sizes = {2, 4, 8};
  // A TP the attention heads already reject is reported by heads-divisible-by-tp
  // (the config fails before the model is built); one report per cause.
  bool tp_fits_heads = !d.tensor_parallel.known() || !d.num_attention_heads.known() || *d.tensor_parallel <= 0 ||
                       *d.num_attention_heads % *d.tensor_parallel == 0;
  if (tp_fits_heads) {
    check_width({config_int(job, "model.ffn_hidden_size"), &d.tensor_parallel, "the dense MLP", tp_sizes}, gated,
                out);
  }
  if (!moe) return;
  check_width({config_int(job, "model.moe_ffn_hidden_size"), &d.expert_tensor_parallel, "each expert's MLP",
               expert_sizes},
              gated, out);
  if (tp_fits_heads) {
    check_width({config_int(job, "model.moe_shared_expert_intermediate_size"), &d.tensor_parallel,
                 "the shared experts' MLP", tp_sizes},
                gated, out);
  }
}

}  // namespace

extern const RuleInfo kFfnSizeDivisibleByTp = {
    .code = "MB206",
    .name = "ffn-size-divisible-by-tp",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "MLP widths (ffn, expert and shared-expert sizes) must be divisible by TP or ETP",
    .doc = R"md(Tensor parallelism splits the MLP's first linear (`fc1`) by output columns and its second
(`fc2`) by input rows, so every rank holds `width / TP` of the MLP's hidden width; with a gated
linear unit (SwiGLU) `fc1` has `2 x width` outputs. Megatron-Core's `divide()` (and
TransformerEngine's linears) assert "X is not divisible by Y" when the model is built:

* `ffn_hidden_size` against `tensor_model_parallel_size` (dense MLP);
* `moe_ffn_hidden_size` against `expert_tensor_parallel_size` (routed experts, grouped linears);
* `moe_shared_expert_intermediate_size` against `tensor_model_parallel_size` (shared experts use
  the dense tensor-parallel group).

The job fails at model build, after the queue. An unset `ffn_hidden_size` (4 x hidden) is not
checked, nor is a TP that does not divide the attention heads (`heads-divisible-by-tp` reports
that one; the config fails before the model is built).)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  ffn_hidden_size: 14335\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 2\n  context_parallel_size: 1\n  ffn_hidden_size: 14336\n"},
    .check = check,
    .checks = "MC B6, MC B7",
};

}  // namespace mblint
