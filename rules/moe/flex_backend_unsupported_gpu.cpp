// Megatron Bridge checks the flex dispatcher's backend against the GPU
// architecture before training (ConfigContainer.validate).
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kFlexBackendUnsupportedGpu;

namespace {

using namespace moe;

enum class Support { Yes, No, Unknown };

// Bridge tests the CUDA compute capability (8.x Ampere, 9.x Hopper, 10.x
// Blackwell) and, for DeepEP, the device name "NVIDIA B200"/"NVIDIA B300".
// Rubin's compute capability is not published: unknown.
Support supports(const GpuType& gpu, std::string_view backend) {
  std::string_view arch = gpu.architecture;
  if (arch == "ampere" || arch == "hopper") return Support::Yes;
  if (arch != "blackwell") return Support::Unknown;
  if (backend == "hybridep") return Support::Yes;
  std::string_view name = gpu.name;
  return name == "b200" || name == "b300" ? Support::Yes : Support::No;
}

Note gpu_note(const Job& job, const GpuType& gpu) {
  return Note{fmt::format("the GPUs are {}", gpu.display), primary_span(job.cluster.gpu_where)};
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge || !is_moe(context.derived)) return;
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  Field backend = read_field(job, "model.moe_flex_dispatcher_backend");
  if (dispatcher.text() != "flex" || !backend.known()) return;
  if (backend.is_null()) {
    Diagnostic diag = diagnostic_at(
        kFlexBackendUnsupportedGpu,
        "the flex token dispatcher without a backend (moe_flex_dispatcher_backend is null): Megatron Bridge silently "
        "falls back to the alltoall dispatcher",
        {&backend, &dispatcher});
    diag.severity = Severity::Warning;
    report(out, std::move(diag),
           "set moe_flex_dispatcher_backend to deepep or hybridep, or moe_token_dispatcher_type to alltoall",
           {set_field_fix(dispatcher, "alltoall", FixSafety::Safe)});
    return;
  }
  const GpuType* gpu = context.derived.gpu;
  std::optional<std::string> name = backend.text();
  if (!gpu || !name || (*name != "deepep" && *name != "hybridep")) return;
  if (supports(*gpu, *name) != Support::No) return;
  Diagnostic diag = diagnostic_at(
      kFlexBackendUnsupportedGpu,
      fmt::format("the flex dispatcher's {} backend on {}: Megatron Bridge raises ValueError (\"DeepEP is supported for "
                  "Ampere, Hopper, and Blackwell (B200/B300) GPUs\") when it validates the config",
                  *name, gpu->display),
      {&backend, &dispatcher});
  diag.notes.push_back(gpu_note(job, *gpu));
  report(out, std::move(diag),
         "use moe_flex_dispatcher_backend hybridep (supported on GB200/GB300 NVL72), or the alltoall dispatcher",
         {set_field_fix(backend, "hybridep"), set_field_fix(dispatcher, "alltoall")});
}

}  // namespace

extern const RuleInfo kFlexBackendUnsupportedGpu = {
    .code = "MB727",
    .name = "flex-backend-unsupported-gpu",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "the flex dispatcher's backend does not run on this GPU, or no backend is set",
    .doc = R"md(Before training, Megatron Bridge's `ConfigContainer.validate()` calls
`validate_flex_dispatcher_backend` when `moe_token_dispatcher_type` is `flex`:

* **DeepEP** runs on Ampere and Hopper (compute capability 8.x, 9.x) and on B200/B300; anywhere else —
  GB200 and GB300 NVL72 racks included — it raises `ValueError("DeepEP is supported for Ampere,
  Hopper, and Blackwell (B200/B300) GPUs. Current GPU: ...")`. Use HybridEP there.
* **HybridEP** runs on compute capability 8.x, 9.x and 10.x (Ampere, Hopper, all Blackwell parts);
  otherwise it raises ValueError.
* A flex dispatcher with `moe_flex_dispatcher_backend: null` is silently switched to `alltoall`
  (a warning).

The GPU type comes from `--gpu` or the launch script; without it the rule is silent. Rubin parts
(`vr200`, `r100`) are not judged: their compute capability is not published. Megatron-LM and NeMo do
not make this check (the backend fails later, when its kernels load). Megatron Bridge's
`apply_flex_dispatcher_backend` helper makes the same test but falls back to `alltoall` with a
warning instead of failing; this rule is about configs that set `flex` directly.)md",
    .bad = {"override.yaml",
     "model:\n  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: deepep\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 4 --gpus-per-node 4 --gpu gb200"},
    .good = {.content = "model:\n  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: hybridep\n"},
    .check = check,
    .checks = "BR V32, PS 55",
};

}  // namespace mblint
