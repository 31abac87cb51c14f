// Megatron Bridge builds a hybrid (Mamba) language model without virtual
// pipeline stages: its provider asserts the virtual pipeline size is None.
// Falcon-H1's provider asserts the same. The multimodal Nemotron providers
// build the hybrid stack themselves, where Megatron-Core takes virtual stages
// only from the pattern's '|' segments.
#include "rules/support/pipeline_support.h"

#include "lint/facts/estimate_vision.h"
#include "lint/model/catalog.h"
#include "lint/model/hybrid_pattern.h"

namespace mblint {

extern const RuleInfo kHybridVirtualPipeline;

namespace {

// The release that renamed MambaModelProvider to HybridModelProvider (#4449).
constexpr Version kHybridProviderSince{0, 6, 0};

// Where the job's hybrid pattern comes from, when it is the catalog's record
// of the recipe's model rather than a value the job sets.
std::optional<Note> catalog_pattern_note(const Job& job, const HybridPatternSetting& pattern) {
  if (!pattern.from_catalog) return std::nullopt;
  return Note{fmt::format("recipe {} builds a hybrid (Mamba) model of {} layers", job.recipe_name,
                          split_hybrid_pattern(pattern.text).layers()),
              job.recipe_where.value};
}

// The Nemotron VL and Omni providers assemble a LLaVA model around the
// hybrid stack instead of calling HybridModelProvider.provide.
bool multimodal(const Job& job) {
  if (job.recipe && job.recipe->model && find_vision_dims(job.recipe->model)) return true;
  TextSetting target = config_text(job, "model._target_");
  return target.value && (target.value->find("VLModelProvider") != std::string::npos ||
                          target.value->find("OmniModelProvider") != std::string::npos);
}

// A dump of a Falcon-H1 model: its provider (models/falcon_h1/falconh1_provider.py,
// v0.5.0 on) asserts the same and carries no hybrid layer pattern.
bool falcon_h1(const Job& job) {
  std::optional<std::string> target = config_text(job, "model._target_").value;
  return target && target->find("FalconH1ModelProvider") != std::string::npos;
}

std::string provider_name(const Job& job) {
  if (falcon_h1(job)) return "FalconH1ModelProvider";
  return job.versions.bridge < kHybridProviderSince ? "MambaModelProvider" : "HybridModelProvider";
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge) return;
  Quantity vpp = raw_virtual_pipeline(job);
  if (!vpp.known() || *vpp <= 0) return;
  std::optional<HybridPatternSetting> pattern = hybrid_layer_pattern(job);
  if (!pattern && !falcon_h1(job)) return;
  const Quantity& pp = context.derived.pipeline_parallel;
  bool pipes = pattern && pattern->segments > 1;
  std::string message;
  std::string help;
  if (!pattern || !multimodal(job)) {
    message = fmt::format(
        "virtual_pipeline_model_parallel_size {} on a hybrid (Mamba) model: Megatron Bridge's {}.provide asserts "
        "that the virtual pipeline size is None (\"Virtual pipeline model parallelism is temporarily unsupported\"), "
        "so the job stops while building the model",
        *vpp, provider_name(job));
    help = "set virtual_pipeline_model_parallel_size to null (Megatron Bridge runs hybrid models on the "
           "non-interleaved schedule); to shorten the pipeline bubble, use fewer pipeline stages or more "
           "micro-batches per step";
  } else if (!pipes && pp.known() && *pp > 1) {
    message = fmt::format(
        "virtual_pipeline_model_parallel_size {} with pipeline_model_parallel_size {}, but the hybrid layer pattern "
        "has no '|' pipeline segments: Megatron-Core's select_pipeline_segment raises ValueError for a virtual "
        "pipeline stage of such a pattern",
        *vpp, *pp);
    help = "set virtual_pipeline_model_parallel_size to null, or cut model.hybrid_layer_pattern into "
           "pipeline_model_parallel_size x virtual_pipeline_model_parallel_size segments with '|'";
  } else {
    return;
  }
  Diagnostic diag = finding(kHybridVirtualPipeline, std::move(message), {&vpp, &pp});
  if (std::optional<Note> note = pattern ? catalog_pattern_note(job, *pattern) : std::nullopt) {
    diag.notes.push_back(*note);
  }
  std::vector<Fix> fixes;
  if (vpp.path == "model.virtual_pipeline_model_parallel_size") fixes.push_back(set_null_fix(vpp));
  report(out, std::move(diag), std::move(help), std::move(fixes));
}

}  // namespace

extern const RuleInfo kHybridVirtualPipeline = {
    .code = "MB509",
    .name = "hybrid-virtual-pipeline",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "Megatron Bridge builds hybrid (Mamba) models without a virtual pipeline",
    .doc = R"md(Megatron Bridge builds a hybrid Mamba/attention model (Nemotron-H, Nemotron Nano v2,
Nemotron 3 Nano and Super, any model with `hybrid_layer_pattern` or the older
`hybrid_override_pattern`) in its provider's `provide`, which asserts that
`virtual_pipeline_model_parallel_size` is None before it builds anything: "Virtual pipeline model
parallelism is temporarily unsupported in Hybrid models" (`models/hybrid/hybrid_provider.py:291` at
067f987df03b and in v0.6.0; `MambaModelProvider.provide` in `models/mamba/mamba_provider.py` from
v0.2.0 to v0.5.x, "...in SSM/Mamaba models"). Any value fails, 1 included: Bridge passes the field as
written. The job stops on every rank while the model is built, after the queue wait and the
start-up.

Falcon-H1's provider (`models/falcon_h1/falconh1_provider.py`, v0.5.0 on) asserts the same; mblint
recognises it by a dump's `model._target_`.

Falcon-H1's provider (`models/falcon_h1/falconh1_provider.py`, v0.5.0 on) asserts the same; mblint
recognises it by a dump's `model._target_`.

The multimodal Nemotron providers (Nemotron VL, Nemotron Omni) do not call that `provide`: they
build the hybrid language model inside a LLaVA model themselves, and there Megatron-Core decides.
Its `select_pipeline_segment` (`megatron/core/models/hybrid/hybrid_layer_allocation.py`, at
2a75ac12c54b, the commit Bridge 067f987df03b pins) takes each virtual stage's layers from the
pattern's `|` segments (segment `v x PP + rank`) and raises ValueError for a virtual stage when the
pattern has no `|` and PP > 1. For those models the rule fires only then.

Megatron-LM launches are not judged here: Megatron-LM's `validate_args` derives the virtual pipeline
size from the pattern's segments itself (mblint's argument reader does the same).

The rule reads the model's pattern from the job, else from the catalog's record of the recipe's
model; it tells the multimodal providers by the recipe's vision tower or the dump's `_target_`.
NVIDIA's hybrid recipes set no virtual pipeline; `mblint plan` does not propose one for hybrid
models.)md",
    .bad = {"override.yaml", "model:\n  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: 2\n",
            "override.yaml --recipe nemotronh_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .good = {.content = "model:\n  pipeline_model_parallel_size: 2\n  virtual_pipeline_model_parallel_size: null\n"},
    .check = check,
};

}  // namespace mblint
