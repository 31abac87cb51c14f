// Shared by the memory rules: the job's estimate, and changes that lower it,
// each re-estimated on a modified copy of the job and kept only when no other
// error rule objects to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/facts/estimate.h"
#include "rules/support/rule_support.h"

namespace mblint {

struct MemoryChange {
  std::string path;   // config path, e.g. "ddp.use_distributed_optimizer"
  ConfigValue value;
};

struct MemoryRemedy {
  std::string what;                  // "enable ddp.use_distributed_optimizer"
  std::vector<MemoryChange> changes;
  MemoryEstimate estimate;           // the job re-estimated with the changes
  double saving = 0;                 // GiB
  bool fits = false;                 // the high end of its measured error under the headroom threshold
  int cost = 0;                      // how much the change costs the run (0: free)
  Fix fix;                           // "enable ...: -18.3 GiB -> 61.2 GiB, fits"
};

// A copy of the job with `changes` set on the command line.
Job changed_job(const Job& job, const std::vector<MemoryChange>& changes);

// The error diagnostics the rules other than the memory rules report on
// `job` ("rule: message", sorted); none when the context cannot run rules.
std::vector<std::string> other_errors(const RuleContext& context, const Job& job, const Derived& derived);

// The estimate of a training job that states all its memory settings (a
// Megatron-LM command line or a full config dump), or nullopt; worked out
// once per job.
const std::optional<MemoryEstimate>& job_estimate(const RuleContext& context);

// The estimate of a Megatron Bridge training job that does not state all its
// memory settings (a catalog recipe with overrides), or nullopt. Only its
// weights, gradients and optimizer state may be judged: the layout, the
// precision and the optimizer the job resolves to decide them, while its
// activations depend on recompute and offloading choices that recipe code can
// make where mblint does not read them. A full config dump gets one only when
// its whole estimate is an upper bound (a vision tower's images bounded).
std::optional<MemoryEstimate> partial_job_estimate(const RuleContext& context);

// The estimate of the job with `changes` applied (the changed job re-derived).
std::optional<MemoryEstimate> estimate_with(const RuleContext& context, const std::vector<MemoryChange>& changes);

// What a remedy is judged by: the whole estimate, or what estimated-oom
// judges of a job on a catalog recipe (fixed_part()).
enum class MemoryMeasure : uint8_t { Whole, FixedPart };

// An estimate's weights, gradients and optimizer state alone, as an estimate
// of their own: no activations or other buffers, and `total` is that sum too
// (total_range() adds the overhead).
MemoryEstimate fixed_part(const MemoryEstimate& e);

// Changes that lower the most loaded rank's total, re-estimated, best first
// (those whose total, at the high end of the estimate's measured error, fits
// under `limit` GiB first, cheapest first; then by total),
// without any that makes another error rule fire. Pairs of changes are
// tried when no single change fits.
// With MemoryMeasure::FixedPart the same for the weights, gradients and
// optimizer state (the fix's description says so).
std::vector<MemoryRemedy> memory_remedies(const RuleContext& context, const MemoryEstimate& current, double limit,
                                          MemoryMeasure measure = MemoryMeasure::Whole);

// The note that says what the range in a memory rule's message means.
std::string error_band_note();

// "activations 40.1 GiB, optimizer 18.3 GiB"
std::string largest_parts(const MemoryEstimate& e, size_t count = 2);

// Help text listing the remedies: "enable ...: -18.3 GiB -> 61.2 GiB, fits; ...".
std::string remedies_help(const std::vector<MemoryRemedy>& remedies, size_t count = 4);

// Reports a memory finding with its remedies: the first `count` as its help
// and its fixes.
void report_with_remedies(std::vector<Diagnostic>& out, Diagnostic diag, const std::vector<MemoryRemedy>& remedies,
                          size_t count = 4);

// Where a memory diagnostic points: the micro-batch size, else the parallel
// sizes, else the job's launch.
Span memory_span(const RuleContext& context);

// Where a finding about the weights, gradients and optimizer state alone
// points: the tensor, else the pipeline, else the expert parallel size (what
// divides them), else the job's launch.
Span fixed_part_span(const RuleContext& context);

}  // namespace mblint
