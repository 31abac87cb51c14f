// Activation memory grows with the sequence; context parallelism splits the
// sequence across ranks. Starting points from NVIDIA's guidance, as advice.
#include "rules/support/parallel_support.h"
#include "rules/support/speed_support.h"

namespace mblint {

extern const RuleInfo kLongSequenceWithoutContextParallel;

namespace {

int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

struct Advice {
  int64_t suggested = 0;
  std::string rule_of_thumb;
};

std::optional<Advice> advice(const Derived& d) {
  int64_t seq = *d.seq_length;
  int64_t cp = *d.context_parallel;
  bool moe = d.num_moe_experts.known() && *d.num_moe_experts > 0;
  if (moe) {
    if (seq <= 4096) return std::nullopt;
    int64_t suggested = next_power_of_two((seq + 4095) / 4096);
    if (cp >= suggested) return std::nullopt;
    return Advice{suggested, fmt::format("for MoE models, start from CP ~ seq_length / 4096 rounded to a power of "
                                         "two ({} here)",
                                         suggested)};
  }
  if (!d.num_moe_experts.known()) return std::nullopt;
  if (seq >= 32768 && cp < 4) {
    return Advice{4, "32K+ sequences: start from CP 4 to 8 (a2a+p2p for large CP); without it, attention "
                     "activations usually run out of memory"};
  }
  if (seq >= 8192 && seq < 32768 && cp == 1) return Advice{2, "8K to 32K sequences: start from CP 2"};
  return std::nullopt;
}

// The suggestion must split the sequence and fit the world.
bool feasible(const Derived& d, int64_t cp) {
  if (*d.seq_length % (2 * cp) != 0) return false;
  if (!d.world_size.known() || !d.tensor_parallel.known() || !d.pipeline_parallel.known()) return true;
  return *d.world_size % (*d.tensor_parallel * *d.pipeline_parallel * cp) == 0;
}

// What the suggested CP does, where mblint can predict it: the most loaded
// GPU's activations and the tokens/s/GPU ("; predicted: activations 31.2 ->
// 16.0 GiB per GPU, about 4% fewer tokens/s/GPU"), or "".
// The note is not gated on speed: its premise is memory.
std::string predicted_effect(const RuleContext& context, int64_t cp) {
  std::vector<MemoryChange> change = {
      {config_path_or(context.derived.context_parallel, "model.context_parallel_size"), make_int(cp)}};
  std::vector<std::string> parts;
  const std::optional<MemoryEstimate>& now = job_estimate(context);
  if (now) {
    if (std::optional<MemoryEstimate> after = estimate_with(context, change)) {
      parts.push_back(fmt::format("activations {:.1f} -> {:.1f} GiB per GPU", now->activations, after->activations));
    }
  }
  if (std::optional<SpeedEstimate> speed = job_speed(context)) {
    if (std::optional<std::string> gain = gain_text(context, *speed, change)) {
      parts.push_back(*gain);
    }
  }
  return parts.empty() ? "" : fmt::format("; predicted: {}", fmt::join(parts, ", "));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  const Quantity& seq = d.seq_length;
  const Quantity& cp = d.context_parallel;
  if (!seq.known() || !cp.known() || *seq <= 0 || *cp <= 0) return;
  if (chosen_by_recipe({&seq.where, &cp.where})) return;  // NVIDIA's tuned choice
  auto a = advice(d);
  if (!a || !feasible(d, a->suggested)) return;
  report(out,
         finding(kLongSequenceWithoutContextParallel,
                 fmt::format("sequence length {} with context_parallel_size {}: {}", *seq, *cp, a->rule_of_thumb),
                 {&seq, &cp}),
         fmt::format("consider context_parallel_size {} (the world size still fits it{}), and compare memory "
                     "and step time",
                     a->suggested, predicted_effect(context, a->suggested)),
         {set_value_fix(cp, a->suggested)});
}

}  // namespace

extern const RuleInfo kLongSequenceWithoutContextParallel = {
    .code = "MB412",
    .name = "long-sequence-without-context-parallel",
    .group = RuleGroup::Context,
    .severity = Severity::Note,
    .summary = "long sequences usually want context parallelism (CP 2 from 8K, 4-8 from 32K, seq/4096 for MoE)",
    .doc = R"md(Attention activations grow with the sequence length, and tensor parallelism does not split the
sequence. Context parallelism does: each of the CP ranks holds `seq_length / CP` tokens. NVIDIA's
guidance (the `parallelism-strategies` skill, the recipe recommender and the MoE long-context
notes) gives starting points:

* 8K to 32K tokens: CP 2;
* 32K tokens and more: CP 4 to 8 (hierarchical `a2a+p2p` for large CP); without it long contexts
  usually run out of memory on activations;
* MoE models above 4K tokens: CP about `seq_length / 4096`, rounded up to a power of two, keeping
  DP >= 1.

These are heuristics, reported as notes only when the suggested CP divides the sequence
(`seq_length % (2 x CP) == 0`) and the world size fits it, and not when both the sequence length
and CP are a recipe's own (NVIDIA tuned those). Small models may not need it; measure.

Where mblint can predict them, the help gives what the suggested CP does: the most loaded GPU's
activations from the memory estimate (for a Megatron-LM command line or a full config dump, see
`estimated-oom`), and the change in tokens/s/GPU from the speed model (a known GPU type and a
modelled model, docs/speed-model.md). CP often costs some throughput (its ring exchanges key/value
blocks); it is the memory it frees that the note is about, so a predicted slowdown does not silence
it.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 1\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  context_parallel_size: 2\n"},
    .check = check,
    .checks = "PS 20, PS 21, PS 23",
};

}  // namespace mblint
