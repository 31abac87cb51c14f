// Hybrid context parallelism re-partitions the DP x CP ranks per batch into
// context-parallel groups sized to each sequence; it pairs ranks, and
// Megatron-LM restricts what it runs with.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHybridContextParallelUnsupported;

namespace {

void refuse(const Setting& hybrid, std::string message, std::string help, const Quantity* involved,
            std::vector<Diagnostic>& out) {
  Span where = span_for(hybrid).valid() ? span_for(hybrid) : (involved ? span_for(*involved) : Span{});
  Diagnostic diag = make_diagnostic(kHybridContextParallelUnsupported, std::move(message), where);
  if (involved && involved->path.empty()) {
    diag.notes.push_back(derived_note(*involved));  // a derived size: its formula
  } else if (involved) {
    add_notes(diag, {involved}, nullptr);
  }
  report(out, std::move(diag), std::move(help), {set_setting_fix(hybrid, false, FixSafety::Unsafe)});
}

// Switches validate_args refuses next to --hybrid-context-parallel.
struct RefusedSwitch {
  std::string_view path;
  std::string_view message;
  std::string_view help;
};

constexpr RefusedSwitch kRefusedSwitches[] = {
    {"model.enable_cuda_graph",
     "hybrid context parallelism is not supported with CUDA graphs (--enable-cuda-graph): Megatron-LM asserts it at "
     "start-up",
     "drop --enable-cuda-graph or --hybrid-context-parallel"},
    {"dist.use_megatron_fsdp",
     "hybrid context parallelism is not supported with Megatron FSDP (--use-megatron-fsdp): Megatron-LM asserts it "
     "at start-up",
     "drop --use-megatron-fsdp or --hybrid-context-parallel"},
};

// Megatron-LM's validate_args restrictions, the first that applies.
void check_megatron_lm(const RuleContext& context, const Setting& hybrid, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Quantity& pp = context.derived.pipeline_parallel;
  if (splits(pp)) {
    refuse(hybrid,
           fmt::format("hybrid context parallelism is not supported with pipeline parallelism "
                       "(pipeline_model_parallel_size {}): Megatron-LM asserts it at start-up",
                       *pp),
           "use --pipeline-model-parallel-size 1, or drop --hybrid-context-parallel", &pp, out);
    return;
  }
  for (const RefusedSwitch& row : kRefusedSwitches) {
    Setting flag = read_flag(job, row.path);
    if (flag.value && *flag.value) {
      refuse(hybrid, std::string(row.message), std::string(row.help), nullptr, out);
      return;
    }
  }
  Setting per_token = read_flag(job, "model.calculate_per_token_loss");
  if (per_token.value && !*per_token.value) {
    refuse(hybrid,
           "hybrid context parallelism must be used with --calculate-per-token-loss: Megatron-LM asserts "
           "it at start-up",
           "add --calculate-per-token-loss", nullptr, out);
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (context.job.versions.megatron_core < Version{0, 16, 0}) return;
  Setting hybrid = read_flag(context.job, "model.hybrid_context_parallel");
  if (!hybrid.value || !*hybrid.value) return;
  const Derived& d = context.derived;
  if (d.data_parallel.known() && d.context_parallel.known()) {
    int64_t ranks = *d.data_parallel * *d.context_parallel;
    if (ranks % 2 != 0) {
      Quantity group;
      group.name = "data-parallel x context-parallel size";
      group.value = ranks;
      group.how = fmt::format("data-parallel size {} x context_parallel_size {} ({})", *d.data_parallel,
                              *d.context_parallel, d.data_parallel.how);
      refuse(hybrid,
             fmt::format("hybrid context parallelism needs an even number of data-parallel x context-parallel "
                         "ranks, but there are {}: Megatron-Core asserts \"Hybrid context parallel requires an "
                         "even number of ranks\"",
                         ranks),
             "use a world size that gives an even DP x CP, or turn hybrid_context_parallel off", &group, out);
      return;
    }
  }
  if (context.job.dialect == Dialect::MegatronLM) check_megatron_lm(context, hybrid, out);
}

}  // namespace

extern const RuleInfo kHybridContextParallelUnsupported = {
    .code = "MB408",
    .name = "hybrid-context-parallel-unsupported",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "hybrid context parallelism needs an even DP x CP and (Megatron-LM) no PP, CUDA graphs or FSDP",
    .doc = R"md(Hybrid context parallelism (`model.hybrid_context_parallel`, Megatron-LM
`--hybrid-context-parallel`, Megatron-Core >= 0.16) regroups the data-parallel x context-parallel
ranks for every batch into context-parallel groups sized to each sequence, so short and long
sequences share one step.

* Megatron-Core's `initialize_model_parallel` builds those groups in pairs and asserts "Hybrid
  context parallel requires an even number of ranks" when a DP x CP group is odd (Megatron Bridge
  and Megatron-LM).
* Megatron-LM's `validate_args` also rejects it with pipeline parallelism, CUDA graphs
  (`--enable-cuda-graph`), Megatron FSDP, and without `--calculate-per-token-loss`
  ("Hybrid context parallelism not supported with pipeline parallelism", ...). It also requires
  the `single` dataloader type, which mblint does not read.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 1\n  hybrid_context_parallel: true\ntrain:\n  global_batch_size: 96\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 3"},
    .good = {"override.yaml",
     "model:\n  context_parallel_size: 1\n  hybrid_context_parallel: true\ntrain:\n  global_batch_size: 96\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .check = check,
    .checks = "MC A9, MC D9",
};

}  // namespace mblint
