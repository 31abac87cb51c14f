// A model provider that builds the whole model on one pipeline stage: Megatron
// Bridge's Gemma4DenseProvider (Gemma 4 E4B) raises for any pipeline
// parallelism or virtual stage.
#include "rules/support/pipeline_support.h"

#include "lint/model/catalog.h"

namespace mblint {

extern const RuleInfo kPipelineUnsupportedByProvider;

namespace {

// The job builds Gemma4DenseProvider: its recipe's model is the catalog's
// Gemma 4 E4B, or a dump names the provider.
bool gemma4_dense(const Job& job) {
  if (job.recipe && job.recipe->model && std::string_view(job.recipe->model) == "gemma4_e4b") return true;
  std::optional<std::string> target = config_text(job, "model._target_").value;
  return target && target->find("Gemma4DenseProvider") != std::string::npos;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge || !gemma4_dense(job)) return;
  const Quantity& pp = context.derived.pipeline_parallel;
  Quantity vpp = raw_virtual_pipeline(job);
  bool pipelined = pp.known() && *pp > 1;
  bool virtual_stages = vpp.known() && *vpp > 0;
  if (!pipelined && !virtual_stages) return;
  std::string what = pipelined ? fmt::format("pipeline_model_parallel_size {}", *pp)
                               : fmt::format("virtual_pipeline_model_parallel_size {}", *vpp);
  std::string message = fmt::format(
      "{} on Gemma 4 E4B: Megatron Bridge's Gemma4DenseProvider.provide raises NotImplementedError "
      "(\"Gemma4DenseProvider currently supports PP=1 only\") while the model is built",
      what);
  Diagnostic diag = virtual_stages ? finding(kPipelineUnsupportedByProvider, std::move(message), {&pp, &vpp})
                                   : finding(kPipelineUnsupportedByProvider, std::move(message), {&pp});
  std::vector<Fix> parts;
  if (pipelined) parts.push_back(set_value_fix(pp, 1));
  if (virtual_stages && vpp.path == "model.virtual_pipeline_model_parallel_size") parts.push_back(set_null_fix(vpp));
  std::vector<Fix> fixes;
  if (!parts.empty()) {
    fixes.push_back(parts.size() == 1 ? parts.front()
                                      : combined_fix("set pipeline_model_parallel_size to 1 and "
                                                     "virtual_pipeline_model_parallel_size to null",
                                                     parts));
  }
  report(out, std::move(diag),
         "run Gemma 4 E4B on one pipeline stage (pipeline_model_parallel_size 1, no virtual pipeline) and scale "
         "with tensor or data parallelism",
         std::move(fixes));
}

}  // namespace

extern const RuleInfo kPipelineUnsupportedByProvider = {
    .code = "MB511",
    .name = "pipeline-unsupported-by-provider",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "a model provider that builds only one pipeline stage (Gemma 4 E4B) with pipeline parallelism",
    .doc = R"md(Some of Megatron Bridge's model providers build the whole model on one pipeline stage.
`Gemma4DenseProvider`, which the Gemma 4 E4B recipe builds (`recipes/gemma/h100/gemma4.py`), raises
`NotImplementedError("Gemma4DenseProvider currently supports PP=1 only.")` in `provide` when
`pipeline_model_parallel_size` is not 1 or a virtual pipeline stage is asked for
(`src/megatron/bridge/models/gemma/gemma4_provider.py:200`, 067f987df03b): the job stops on every
rank while the model is built, after the queue wait. Its per-layer embeddings and shared key/value
layers are wired across the whole stack (`wire_gemma4_kv_sharing`, `_attach_ple_modules`).

mblint knows the provider by the recipe's model (the catalog's `gemma4_e4b`) or a dump's
`model._target_`. `mblint plan` therefore proposes only one pipeline stage for it. Other providers'
pipeline limits have rules of their own (`hybrid-virtual-pipeline`).)md",
    .bad = {"override.yaml", "model:\n  pipeline_model_parallel_size: 2\n",
            "override.yaml --recipe gemma4_e4b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .good = {.content = "model:\n  pipeline_model_parallel_size: 1\n  tensor_model_parallel_size: 4\n"},
    .check = check,
};

}  // namespace mblint
