// The most loaded GPU needs more memory than it has: the job dies with CUDA
// out of memory, usually after its queue wait.
#include <algorithm>

#include "lint/facts/estimate_vision.h"
#include "rules/support/memory_support.h"

namespace mblint {

extern const RuleInfo kEstimatedOom;

namespace {

Note world_unknown_note() {
  return Note{"the world size is not known (give --nodes and --gpus-per-node): the optimizer state, sharded over the "
              "data-parallel ranks, is left out",
              {}};
}

// "estimated 84.0 GiB per GPU exceeds ..." beyond the measured error of the
// estimate (an error), or within it (a warning: the run may or may not fit).
Diagnostic oom_diagnostic(const RuleContext& context, const MemoryEstimate& e, const MemoryRange& range) {
  const GpuType* gpu = context.derived.gpu;
  std::string name = gpu ? gpu->display : "GPU";
  bool beyond = range.low > e.capacity;
  std::string message =
      beyond ? fmt::format("estimated {:.1f} GiB per GPU exceeds the {:.1f} GiB of the {} beyond the estimate's measured "
                           "error (needs {:.0f}-{:.0f} GiB): {}",
                           e.total, e.capacity, name, range.low, range.high, largest_parts(e))
             : fmt::format("estimated {:.1f} GiB per GPU is within the estimate's measured error of the {:.1f} GiB of the "
                           "{} (needs {:.0f}-{:.0f} GiB of {:.1f} GiB): it may run out of memory: {}",
                           e.total, e.capacity, name, range.low, range.high, e.capacity, largest_parts(e));
  Diagnostic diag = make_diagnostic(kEstimatedOom, message, memory_span(context));
  if (!beyond) diag.severity = Severity::Warning;
  diag.notes.push_back(Note{fmt::format("most loaded rank: {}; {:.1f} GiB allocated at the peak + {:.1f} GiB "
                                        "overhead (`mblint estimate` shows every part)",
                                        e.rank, e.peak_allocated, e.overhead),
                            {}});
  diag.notes.push_back(Note{error_band_note(), {}});
  // Memory the estimate names but does not count, at its setting: the need
  // is larger by that much.
  for (const UncountedMemory& u : e.uncounted) diag.notes.push_back(Note{u.what, u.where});
  return diag;
}

// What the estimate assumed that can change the weights, gradients or
// optimizer state (a vision tower's image bound changes the activations only).
size_t fixed_part_assumptions(const MemoryEstimate& e) {
  return e.assumptions.size() - std::min(activation_only_assumptions(e), e.assumptions.size());
}

// Whether the estimate assumed the data-parallel size and nothing else that
// counts (it adds exactly one assumption for an unknown one,
// estimate_read.cpp): the weights and gradients do not depend on it unless
// FSDP shards them.
bool only_data_parallel_assumed(const RuleContext& context, const MemoryEstimate& e) {
  const Quantity& dp = context.derived.data_parallel;
  if ((dp.known() && *dp > 0) || fixed_part_assumptions(e) != 1) return false;
  for (std::string_view path : {"ddp.use_megatron_fsdp", "dist.use_megatron_fsdp", "dist.use_torch_fsdp2"}) {
    Setting fsdp = read_flag(context.job, path);
    if (!fsdp.value || *fsdp.value) return false;  // on, or not known
  }
  return true;
}

// What a job on a catalog recipe takes before any activation
// (partial_job_estimate): its weights, gradients and optimizer state, or,
// when only the world size had to be assumed, its weights and gradients
// (the optimizer state is sharded over data-parallel ranks mblint does not
// know). The least the most loaded rank allocates, judged with the same
// measured error. An estimate that assumed anything else that these parts
// depend on decides nothing.
struct FixedPartFinding {
  MemoryEstimate fixed;
  std::string what;   // "weights, gradients and optimizer state"
  std::string parts;  // "weights 15.0 GiB, gradients 29.9 GiB, ..."
  bool world_unknown = false;
};

std::optional<FixedPartFinding> fixed_part_finding(const RuleContext& context, const MemoryEstimate& e) {
  FixedPartFinding f;
  f.fixed = fixed_part(e);
  if (fixed_part_assumptions(e) == 0) {
    f.what = "weights, gradients and optimizer state";
    f.parts = fmt::format("weights {:.1f} GiB, gradients {:.1f} GiB, optimizer {:.1f} GiB", e.weights, e.gradients,
                          e.optimizer);
    return f;
  }
  if (!only_data_parallel_assumed(context, e)) return std::nullopt;
  f.fixed.peak_allocated = f.fixed.total = e.weights + e.gradients;
  f.what = "weights and gradients";
  f.parts = fmt::format("weights {:.1f} GiB, gradients {:.1f} GiB", e.weights, e.gradients);
  f.world_unknown = true;
  return f;
}

// `shown_total`: the whole estimate `mblint estimate` prints (e's, unless e
// was made without the vocabulary).
std::optional<Diagnostic> fixed_part_diagnostic(const RuleContext& context, const MemoryEstimate& e,
                                                const FixedPartFinding& f, double shown_total) {
  MemoryRange range = total_range(f.fixed);
  if (range.high <= e.capacity) return std::nullopt;
  const GpuType* gpu = context.derived.gpu;
  std::string name = gpu ? gpu->display : "GPU";
  bool beyond = range.low > e.capacity;
  double gib = f.fixed.peak_allocated;
  std::string message =
      beyond ? fmt::format("{} alone are estimated at {:.1f} GiB per GPU, beyond the {:.1f} GiB of the {} even within "
                           "the estimate's measured error (needs {:.0f}-{:.0f} GiB before any activation): {}",
                           f.what, gib, e.capacity, name, range.low, range.high, f.parts)
             : fmt::format("{} alone are estimated at {:.1f} GiB per GPU, within the estimate's measured error of "
                           "the {:.1f} GiB of the {} (needs {:.0f}-{:.0f} GiB before any activation): it will likely "
                           "run out of memory: {}",
                           f.what, gib, e.capacity, name, range.low, range.high, f.parts);
  Diagnostic diag = make_diagnostic(kEstimatedOom, message, fixed_part_span(context));
  if (!beyond) diag.severity = Severity::Warning;
  diag.notes.push_back(Note{fmt::format("most loaded rank: {}; the activations of a job on a catalog recipe are "
                                        "judged only beyond {:.2f} times the GPU's memory (where recipe code leaves "
                                        "settings mblint does not read, the estimate is an upper bound): `mblint "
                                        "estimate` shows the whole estimate, {:.1f} GiB",
                                        e.rank, kRecipeOverEstimateBound, shown_total),
                            {}});
  if (activation_only_assumptions(e) > 0) {
    std::string tower = e.vision ? vision_part_label(*e.vision) : "vision tower and projector";
    diag.notes.push_back(Note{fmt::format("the {}'s activations are not counted here either: they depend on how many "
                                          "images or clips a micro-batch holds, which mblint bounds but does not know",
                                          tower),
                              {}});
  }
  if (f.world_unknown) {
    diag.notes.push_back(world_unknown_note());
  }
  diag.notes.push_back(Note{error_band_note(), {}});
  return diag;
}

// A job on a catalog recipe whose whole estimate is beyond the estimate's
// measured over-count on layouts that ran (kRecipeOverEstimateBound): what its
// recompute, sequence and micro-batch settings keep decides it (Llama 3.1 70B
// pretraining at 128K without recompute: 385.6 GiB of activations on an H100).
// With the world size unknown the optimizer state, sharded over it, is left
// out. A vision tower's bounded images decide nothing.
std::optional<Diagnostic> recipe_whole_diagnostic(const RuleContext& context, const MemoryEstimate& e,
                                                  const FixedPartFinding& f) {
  if (activation_only_assumptions(e) > 0) return std::nullopt;
  MemoryEstimate judged = f.world_unknown ? without_optimizer(e) : e;
  MemoryRange range = total_range(judged);
  double bound = kRecipeOverEstimateBound * e.capacity;
  if (range.low <= bound) return std::nullopt;
  const GpuType* gpu = context.derived.gpu;
  std::string name = gpu ? gpu->display : "GPU";
  std::string message = fmt::format(
      "estimated {:.1f} GiB per GPU, {:.1f} times the {:.1f} GiB of the {} (needs {:.0f}-{:.0f} GiB): more than the "
      "estimate over-counts any layout known to fit, so the job runs out of memory: {}",
      judged.total, judged.total / e.capacity, e.capacity, name, range.low, range.high, largest_parts(judged));
  Diagnostic diag = make_diagnostic(kEstimatedOom, message, memory_span(context));
  diag.notes.push_back(Note{fmt::format("most loaded rank: {}; a job on a catalog recipe is judged on its whole "
                                        "estimate only beyond {:.2f} times its GPU's memory: where recipe code "
                                        "leaves settings mblint does not read the estimate is an upper bound, and "
                                        "NVIDIA's published layouts, each of which ran, are estimated at up to that "
                                        "many times theirs (docs/memory.md)",
                                        e.rank, kRecipeOverEstimateBound),
                            {}});
  const Derived& d = context.derived;
  Choice recompute = read_choice(context.job, "model.recompute_granularity");
  diag.notes.push_back(note_for(recompute));
  for (const Quantity* q : {&d.seq_length, &d.micro_batch_size}) {
    if (q->known()) diag.notes.push_back(note_for(*q));
  }
  if (f.world_unknown) {
    diag.notes.push_back(world_unknown_note());
  }
  diag.notes.push_back(Note{error_band_note(), {}});
  return diag;
}

// A recipe job whose tokenizer's size is read at run time (a Hugging Face
// tokenizer with use_tokenizer_vocab_size, or beside a model with no
// vocabulary): the estimate without the embedding and output layer, a lower
// bound of everything judged (the vocabulary only adds to it); nullopt when
// that estimate still assumed one.
std::optional<MemoryEstimate> without_vocabulary(const RuleContext& context) {
  std::optional<MemoryEstimate> lower =
      estimate_with(context, {{"tokenizer.use_tokenizer_vocab_size", make_bool(false)}, {"model.vocab_size", make_int(1)}});
  if (!lower || lower->vocab_assumed) return std::nullopt;
  return lower;
}

constexpr const char* kVocabularyUnknownNote =
    "the vocabulary is not known (the tokenizer's size is read from its files at run time): judged without the "
    "embedding and output layer, which only add to it";

// What estimated-oom finds on a job on a catalog recipe, and what it judged.
struct RecipeVerdict {
  Diagnostic diag;
  MemoryEstimate judged;            // without the vocabulary where it is not known
  bool whole = false;               // on the whole estimate (recipe_whole_diagnostic), else the fixed part
  bool world_unknown = false;       // the optimizer state left out
  bool vocabulary_unknown = false;  // the embedding and output layer left out
};

std::optional<RecipeVerdict> judge_recipe_job(const RuleContext& context) {
  std::optional<MemoryEstimate> e = partial_job_estimate(context);
  if (!e) return std::nullopt;
  double shown_total = e->total;  // what `mblint estimate` prints
  bool vocabulary_unknown = e->vocab_assumed;
  if (vocabulary_unknown) e = without_vocabulary(context);
  if (!e || e->capacity <= 0) return std::nullopt;
  std::optional<FixedPartFinding> fixed = fixed_part_finding(context, *e);
  if (!fixed) return std::nullopt;
  std::optional<Diagnostic> diag = fixed_part_diagnostic(context, *e, *fixed, shown_total);
  bool whole = false;
  if (!diag) {
    diag = recipe_whole_diagnostic(context, *e, *fixed);
    whole = diag.has_value();
  }
  if (!diag) return std::nullopt;
  if (vocabulary_unknown) diag->notes.insert(diag->notes.end() - 1, Note{kVocabularyUnknownNote, {}});
  return RecipeVerdict{std::move(*diag), std::move(*e), whole, fixed->world_unknown, vocabulary_unknown};
}

// The help of a finding mblint cannot re-estimate changes for: on a world it
// does not know, or without the vocabulary.
std::string unestimated_help(const RecipeVerdict& v) {
  std::string_view supply = v.vocabulary_unknown ? "give the tokenizer's size, --set model.vocab_size=N "
                                                   "tokenizer.use_tokenizer_vocab_size=false, and"
                                                 : "with --nodes and --gpus-per-node";
  if (v.whole) {
    return fmt::format("keep fewer activations: recompute (model.recompute_granularity), more context or pipeline "
                       "parallelism, a shorter sequence ({} mblint re-estimates each change)",
                       supply);
  }
  return fmt::format("divide the weights over more GPUs: raise tensor_model_parallel_size or "
                     "pipeline_model_parallel_size ({} mblint re-estimates each change)",
                     supply);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (const auto& whole = job_estimate(context)) {
    if (whole->capacity <= 0) return;
    MemoryRange range = total_range(*whole);
    if (range.high <= whole->capacity) return;
    double limit = context.thresholds.memory_headroom * whole->capacity;
    report_with_remedies(out, oom_diagnostic(context, *whole, range), memory_remedies(context, *whole, limit));
    return;
  }
  std::optional<RecipeVerdict> v = judge_recipe_job(context);
  if (!v) return;
  if (v->world_unknown || v->vocabulary_unknown) {
    v->diag.help = unestimated_help(*v);
    out.push_back(std::move(v->diag));
    return;
  }
  // The remedies are judged as the finding is: on the whole estimate, or on
  // the weights, gradients and optimizer state under the capacity.
  std::vector<MemoryRemedy> remedies =
      v->whole ? memory_remedies(context, v->judged, context.thresholds.memory_headroom * v->judged.capacity)
               : memory_remedies(context, v->judged, v->judged.capacity, MemoryMeasure::FixedPart);
  report_with_remedies(out, std::move(v->diag), remedies);
}

}  // namespace

extern const RuleInfo kEstimatedOom = {
    .code = "MB980",
    .name = "estimated-oom",
    .group = RuleGroup::Memory,
    .severity = Severity::Error,
    .summary = "the estimated per-GPU memory exceeds the GPU's capacity",
    .doc = R"md(`mblint estimate` models what the most loaded rank allocates: bf16 weights, fp32 main gradients,
the optimizer state (Adam: fp32 master weights and two moments, sharded over DP·CP by the distributed
optimizer), the activations of the micro-batches the pipeline schedule keeps in flight (Korthikanti et
al. 2022 per-layer terms with TP, SP, CP, recompute, flash or unfused attention, SwiGLU, MoE routing),
the logits and fp32 cross-entropy on the last stage, fixed buffers, and a stated overhead (CUDA context,
NCCL, allocator fragmentation). Its median error against 217 measured Megatron-LM CI runs is 1.5%
(`tools/memory_eval.py`).

The verdict knows the estimate's measured error: 9 of 10 measured peaks lie within 8.65% of the
estimate (the p90 of its under-estimation on those 217 runs; `kEstimateErrorBand`, docs/memory.md).
When even the low end of that range is above the GPU's memory, the job fails with `CUDA out of
memory`: an error. When the range straddles the capacity ("needs 76-86 GiB of 79.1 GiB"), the job
may or may not fit: a warning that says so. The message names the largest parts; each suggested change was applied to a copy of the job, re-estimated and re-checked
against every other error rule before it is offered, best first.

A Megatron-LM command line or a full config dump states every memory setting, so the whole estimate
is judged. A job on a catalog recipe does not: where recipe or provider code leaves settings mblint
does not read, the estimate keeps its defaults and is an upper bound. So what its layout, precision
and optimizer decide is judged, the weights, gradients and optimizer state of the most loaded rank,
with the same measured error (with the world size unknown, the weights and gradients alone, as the
optimizer state's sharding depends on it; an estimate that had to assume any other value these parts
depend on is not judged, except the vocabulary: where the tokenizer's size is read at run time the
estimate is made again without the embedding and output layer, a lower bound, and only that is judged);
and its whole estimate is judged only beyond how far it over-counts on
layouts known to fit: NVIDIA's 220 published layouts, each of which ran, are estimated at up to 2.14
times their GPU's memory (`kRecipeOverEstimateBound`, 2.15; `tools/memory_published.py`). A recipe job
whose low end is above that many times its GPU is an error, with notes at the recompute, sequence and
micro-batch values that keep its activations (Llama 3.1 70B pretraining at 128K on 32 H100 without
recompute: 481.6 GiB per GPU, 385.6 of it activations). A vision-language job is judged on its fixed
part only, a full config dump too: its tower's activations depend on how many images a micro-batch
holds, which mblint bounds but does not know.

Needs the GPU type (`--gpu`, or the recipe's) and the model shape.)md",
    .bad = {"model_config.yaml",
     "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n  --seq-length: 4096\n"
     "  --max-position-embeddings: 4096\n  --micro-batch-size: 2\n  --global-batch-size: 64\n"
     "  --tensor-model-parallel-size: 1\n  --bf16: true\n",
     "model_config.yaml --nodes 1 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "MODEL_ARGS:\n  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n  --seq-length: 4096\n"
     "  --max-position-embeddings: 4096\n  --micro-batch-size: 2\n  --global-batch-size: 64\n"
     "  --tensor-model-parallel-size: 4\n  --sequence-parallel: true\n  --use-distributed-optimizer: true\n"
     "  --bf16: true\n"},
    .check = check,
    .checks = "MC 4, MC 5, MC 6",
};

}  // namespace mblint
