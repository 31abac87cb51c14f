// The estimate fits, but with less headroom than the team allows.
#include <cmath>

#include "rules/support/memory_support.h"

namespace mblint {

extern const RuleInfo kMemoryHeadroom;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const auto& e = job_estimate(context);
  if (!e || e->capacity <= 0) return;
  double limit = context.thresholds.memory_headroom;
  MemoryRange range = total_range(*e);
  // Above the capacity within the measured error: estimated-oom's finding.
  if (range.high > e->capacity || range.high <= limit * e->capacity) return;
  const GpuType* gpu = context.derived.gpu;
  Diagnostic diag = make_diagnostic(
      kMemoryHeadroom,
      fmt::format("estimated {:.1f} GiB per GPU, up to {:.1f} GiB within the estimate's measured error, is {:.0f}% of "
                  "the {:.1f} GiB of the {} (above {:.0f}%): {}",
                  e->total, range.high, std::floor(100 * range.high / e->capacity), e->capacity, gpu ? gpu->display : "GPU",
                  100 * limit, largest_parts(*e)),
      memory_span(context));
  diag.notes.push_back(Note{fmt::format("most loaded rank: {}; fragmentation, a longer sequence in the data or a "
                                        "library upgrade can push it over",
                                        e->rank),
                            {}});
  diag.notes.push_back(Note{error_band_note(), {}});
  auto remedies = memory_remedies(context, *e, limit * e->capacity);
  report_with_remedies(out, std::move(diag), remedies);
}

}  // namespace

extern const RuleInfo kMemoryHeadroom = {
    .code = "MB981",
    .name = "memory-headroom",
    .group = RuleGroup::Memory,
    .severity = Severity::Warning,
    .summary = "the estimated per-GPU memory, at the high end of its measured error, is above the headroom threshold (90% of the GPU by default)",
    .doc = R"md(The estimate (see `estimated-oom`) fits, but the high end of its measured error (the estimate
under-estimated by 8.65%, the p90 of 217 measured runs) is within the last 10% of the GPU's memory
(the threshold is `thresholds.memory_headroom`). When that high end is above the capacity,
`estimated-oom` reports it instead. Allocator fragmentation varies from run to run, and
Megatron Bridge's memory-tuning notes report a Llama3-70B job whose 58.8 GB peak failed on an
80 GB H100 until `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`. The suggested changes are
re-estimated and re-checked against every error rule.)md",
    .bad = {"model_config.yaml",
     "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n  --seq-length: 4096\n"
     "  --max-position-embeddings: 4096\n  --micro-batch-size: 4\n  --global-batch-size: 64\n"
     "  --tensor-model-parallel-size: 2\n  --sequence-parallel: true\n  --use-distributed-optimizer: true\n"
     "  --bf16: true\n",
     "model_config.yaml --nodes 1 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n  --seq-length: 4096\n"
     "  --max-position-embeddings: 4096\n  --micro-batch-size: 2\n  --global-batch-size: 64\n"
     "  --tensor-model-parallel-size: 2\n  --sequence-parallel: true\n  --use-distributed-optimizer: true\n"
     "  --bf16: true\n"},
    .check = check,
    .checks = "MC 4, MC 5, MC 6",
};

}  // namespace mblint
