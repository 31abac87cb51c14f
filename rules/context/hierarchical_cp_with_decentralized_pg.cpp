// Megatron Bridge's decentralized process groups (HyperCommGrid) build no
// hierarchical context-parallel groups.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHierarchicalCpWithDecentralizedPg;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  Setting decentralized = config_bool(job, "dist.use_decentralized_pg");
  if (!decentralized.value || !*decentralized.value) return;
  IntList sizes = read_int_list(job, "model.hierarchical_context_parallel_sizes");
  if (!sizes.known()) return;  // None, or not readable
  Span where = primary_span(sizes.where).valid() ? primary_span(sizes.where) : span_for(decentralized);
  Diagnostic diag = make_diagnostic(
      kHierarchicalCpWithDecentralizedPg,
      fmt::format("hierarchical_context_parallel_sizes {} cannot be used with dist.use_decentralized_pg: Megatron "
                  "Bridge's decentralized process groups raise NotImplementedError for hierarchical context "
                  "parallelism",
                  sizes.display),
      where);
  diag.notes.push_back(note_for(decentralized));
  report(out, std::move(diag),
         "set dist.use_decentralized_pg to false (the default process groups support a2a+p2p), or use "
         "cp_comm_type a2a or p2p without hierarchical sizes",
         {set_setting_fix(decentralized, false, FixSafety::Unsafe)});
}

}  // namespace

extern const RuleInfo kHierarchicalCpWithDecentralizedPg = {
    .code = "MB411",
    .name = "hierarchical-cp-with-decentralized-pg",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "hierarchical context parallelism does not work with dist.use_decentralized_pg",
    .doc = R"md(`dist.use_decentralized_pg` makes Megatron Bridge build its process groups itself (with
HyperCommGrid) instead of through Megatron-Core's `parallel_state`. That path has no
hierarchical context-parallel groups: when `model.hierarchical_context_parallel_sizes` is set it
raises "Decentralized process groups (use_decentralized_pg=True) do not support
hierarchical_context_parallel_sizes" (`NotImplementedError`) at start-up. Older stacks silently
fell back to flat context parallelism.

Use the default process groups for `cp_comm_type: a2a+p2p`, or drop the hierarchical sizes and use
`a2a` or `p2p`.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 2\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 1]\n"
     "dist:\n  use_decentralized_pg: true\n  use_gloo_process_groups: false\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content =
     "model:\n  context_parallel_size: 2\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 1]\n"
     "dist:\n  use_decentralized_pg: false\n  use_gloo_process_groups: false\n"},
    .check = check,
    .checks = "PS 26",
};

}  // namespace mblint
