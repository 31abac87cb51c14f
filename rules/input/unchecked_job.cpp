// A job mblint could check only partly: what it does not know, why, and how
// to supply it. Silence has to be earned: without this note a job whose
// recipe or allocation is unknown would pass with "no problems found".
#include <algorithm>

#include <fmt/format.h>

#include "rules/support/rule_support.h"

namespace mblint {

extern const RuleInfo kUncheckedJob;

namespace {

std::string gap_text(const CoverageGap& gap) {
  return gap.why.empty() ? gap.what : fmt::format("{} ({})", gap.what, gap.why);
}

Span job_span(const RuleContext& context) {
  for (const CoverageGap& gap : context.derived.coverage.gaps) {
    if (gap.where.valid()) return gap.where;
  }
  if (context.job.launch_span.valid()) return context.job.launch_span;
  return make_span(context.job.primary, 0, 0);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Coverage& coverage = context.derived.coverage;
  if (coverage.complete()) return;
  std::vector<std::string> gaps;
  for (const CoverageGap& gap : coverage.gaps) gaps.push_back(gap_text(gap));
  Diagnostic d = make_diagnostic(
      kUncheckedJob,
      fmt::format("this job was checked only partly: {}; the checks that need these values did not run",
                  fmt::join(gaps, "; ")),
      job_span(context));
  if (context.thresholds.require_complete) d.severity = Severity::Error;
  std::vector<std::string> supplies;
  for (const CoverageGap& gap : coverage.gaps) {
    if (gap.unknown.size() > 1) {
      d.notes.push_back(Note{fmt::format("{}: {} not known", gap.what, fmt::join(gap.unknown, ", ")), gap.where});
    } else if (gap.where.valid() && gap.where != d.where) {
      d.notes.push_back(Note{fmt::format("{}: {}", gap.what, gap.why), gap.where});
    }
    if (std::find(supplies.begin(), supplies.end(), gap.supply) == supplies.end()) supplies.push_back(gap.supply);
  }
  d.help = fmt::format("{}", fmt::join(supplies, "; "));
  out.push_back(std::move(d));
}

}  // namespace

extern const RuleInfo kUncheckedJob = {
    .code = "MB030",
    .name = "unchecked-job",
    .group = RuleGroup::Input,
    .severity = Severity::Note,
    .summary = "the job could be checked only partly: its recipe, allocation, model shape or a value is unknown",
    .doc = R"md(mblint's core checks need the job's allocation (nodes and GPUs per node), its parallel sizes
(tensor, pipeline, context, expert and, with a pipeline, virtual pipeline), the model's shape
(layers, hidden size, attention heads, experts) and the batch and sequence length. When one of
them is unknown - the recipe is not given (`--config-file` entry points take it from mblint's
`--recipe`) or comes from `$1`, the node count comes from the environment, a value is written as
`$TP` with `TP` unknown, the recipe builds a model whose shape mblint's catalog does not hold, or
a sourced file or `eval` before the launch was not followed - the checks that need it cannot
decide, and a run without findings would not mean a correct job. mblint never guesses such a
value; it reports once per job what is unknown, why, and how to supply it (`--recipe`,
`--nodes`/`--gpus-per-node`, `--set KEY=VALUE`, or a `context:` entry in `.mblint.yaml`).

Checks that the known values decide still run: TP 4 x PP 4 on 8 GPUs is an error whatever the
unknown recipe sets for context parallelism. A job whose every setting is known but whose model
the memory estimate does not cover (wildcard LoRA targets on a gated delta net, DeepSeek V4's
compressed attention, a trained Hugging Face vision tower; each with its reason) is checked only
partly too: "memory not estimated", since `estimated-oom` and `memory-headroom` could not judge it.

`--require-complete` (or `require_complete: true` in `.mblint.yaml`) makes this finding an
error, for CI gates that accept only fully checked jobs. The summary line counts the jobs
checked fully and partly, and `--format json` lists each job's coverage.)md",
    .bad = {"override.yaml", "model:\n  tensor_model_parallel_size: 2\n", "override.yaml --nodes 1 --gpus-per-node 8"},
    .good = {"override.yaml", "model:\n  tensor_model_parallel_size: 2\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .check = check,
};

}  // namespace mblint
