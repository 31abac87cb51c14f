// Context parallelism lives in TransformerEngine's attention: attention
// implementations that bypass it, or pin other kernels, cannot run it.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kCpUnsupportedAttention;

namespace {

// "local" as written in YAML, or an enum spelled "AttnBackend.local".
bool is_local(const TextSetting& setting) {
  if (!setting.value) return false;
  const std::string& v = *setting.value;
  return v == "local" || (v.size() > 6 && v.compare(v.size() - 6, 6, ".local") == 0);
}

struct Reason {
  std::string message;
  Provenance where;
  std::string help;
};

std::optional<Reason> local_attention(const Job& job) {
  TextSetting backend = config_text(job, "model.attention_backend");
  if (is_local(backend)) {
    return Reason{"attention_backend local builds Megatron-Core's own DotProductAttention, which asserts "
                  "\"Context parallelism is only supported by TEDotProductAttention!\"",
                  backend.where, "use attention_backend auto (or flash / fused), or context_parallel_size 1"};
  }
  // Megatron-LM: --transformer-impl local builds the local layer spec.
  TextSetting impl = config_text(job, "model.transformer_impl");
  if (job.dialect == Dialect::MegatronLM && impl.value && *impl.value == "local") {
    return Reason{"--transformer-impl local builds Megatron-Core's own DotProductAttention, which asserts "
                  "\"Context parallelism is only supported by TEDotProductAttention!\"",
                  impl.where, "use --transformer-impl transformer_engine, or --context-parallel-size 1"};
  }
  return std::nullopt;
}

std::optional<Reason> sparse_attention(const Job& job) {
  TextSetting variant = config_text(job, "model.experimental_attention_variant");
  if (!variant.value || *variant.value != "dsa") return std::nullopt;
  CpCommType comm = read_cp_comm_type(job);
  if (!comm.known) return std::nullopt;
  bool all_gather = !comm.null && !comm.not_text &&
                    std::all_of(comm.types.begin(), comm.types.end(),
                                [](const std::string& t) { return normalise_cp_comm_type(t) == "allgather"; });
  if (all_gather) return std::nullopt;
  return Reason{fmt::format("DeepSeek sparse attention (experimental_attention_variant dsa) supports context "
                            "parallelism only with cp_comm_type allgather, not {}",
                            comm.null ? std::string("the default (p2p)") : comm.display),
                comm.null ? variant.where : comm.where, "set cp_comm_type to allgather, or context_parallel_size 1"};
}

std::optional<Reason> batch_invariant(const Job& job) {
  Setting mode = config_bool(job, "model.batch_invariant_mode");
  if (!mode.value || !*mode.value) return std::nullopt;
  return Reason{"batch_invariant_mode does not support context parallelism (it routes through kernels whose "
                "schedule cannot be pinned): Megatron-Core asserts \"Batch invariant mode does not support context "
                "parallelism\"",
                mode.where, "use context_parallel_size 1 with batch_invariant_mode, or turn it off"};
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& cp = context.derived.context_parallel;
  if (!splits(cp)) return;
  for (auto reason : {local_attention(context.job), sparse_attention(context.job), batch_invariant(context.job)}) {
    if (!reason) continue;
    Span where = primary_span(reason->where);
    Diagnostic diag = make_diagnostic(
        kCpUnsupportedAttention,
        fmt::format("context_parallel_size {} cannot be used here: {}", *cp, reason->message),
        where.valid() ? where : span_for(cp));
    add_notes(diag, {&cp}, where.valid() ? nullptr : &cp);
    report(out, std::move(diag), std::move(reason->help), {set_value_fix(cp, 1)});
  }
}

}  // namespace

extern const RuleInfo kCpUnsupportedAttention = {
    .code = "MB407",
    .name = "cp-unsupported-attention",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "context parallelism needs TransformerEngine attention, allgather for DSA, and no batch-invariant mode",
    .doc = R"md(Context parallelism is implemented inside TransformerEngine's attention
(`TEDotProductAttention`). Three settings take the attention elsewhere:

* `attention_backend: local` (Megatron Bridge swaps in Megatron-Core's `DotProductAttention`), or
  Megatron-LM's `--transformer-impl local`: the local attention asserts "Context parallelism is only
  supported by TEDotProductAttention!" when the model is built.
* DeepSeek sparse attention (`experimental_attention_variant: dsa`): Megatron-Core's
  `TransformerConfig` asserts "DSAttention context parallelism currently supports
  cp_comm_type=allgather only." for any other `cp_comm_type`, including the default.
* `batch_invariant_mode`: "Batch invariant mode does not support context parallelism".

All three stop the job before the first step.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 2\n  attention_backend: local\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  context_parallel_size: 2\n  attention_backend: flash\n"},
    .check = check,
    .checks = "MC D7, MC D8",
};

}  // namespace mblint
