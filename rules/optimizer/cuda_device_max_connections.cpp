// CUDA_DEVICE_MAX_CONNECTIONS: 1 is required for tensor/context parallelism
// before Blackwell (kernel ordering of the TP/CP communication), forbidden
// with FSDP (it serializes FSDP's overlapping streams), and not needed on
// Blackwell and later.
#include "rules/support/config_support.h"
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kCudaDeviceMaxConnections;

namespace {

constexpr std::string_view kVariable = "CUDA_DEVICE_MAX_CONNECTIONS";

std::optional<bool> flag(const Job& job, std::string_view path) { return switch_value(job, path); }

std::optional<bool> any_of(std::optional<bool> a, std::optional<bool> b) {
  if (a.value_or(false) || b.value_or(false)) return true;
  if (a && b) return false;
  return std::nullopt;
}

Span launch_or(const Job& job, Span fallback) { return job.launch_span.valid() ? job.launch_span : fallback; }

// Megatron-LM core_v0.12.0 tests `tp > 1 or cp > 1 and arch < 10`: Python
// binds the architecture test to CP only, so TP > 1 asserts on every GPU.
// core_v0.13.0 added the parentheses.
constexpr Version kPrecedenceFixed{0, 13, 0};

bool every_gpu_asserts(const Job& job, const Derived& d) {
  return job.dialect == Dialect::MegatronLM && job.versions.megatron_core < kPrecedenceFixed &&
         splits(d.tensor_parallel);
}

void require_one(const RuleContext& context, const EnvLookup& env, std::vector<Diagnostic>& out,
                 std::vector<Note> extra = {}) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  const Quantity& tp = d.tensor_parallel;
  const Quantity& cp = d.context_parallel;
  bool tp_on = splits(tp);
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  bool any_gpu = every_gpu_asserts(job, d);
  std::string setting = env.state == EnvState::Unset ? std::string("is not set")
                                                     : fmt::format("is {}", env.value.value_or("?"));
  std::string gpus = d.gpu ? fmt::format("{} GPUs ({})", d.gpu->display, d.gpu->architecture) : std::string("any GPU");
  const Quantity& parallel = tp_on ? tp : cp;
  std::string message;
  if (any_gpu) {
    message = fmt::format("{} {}, but {} {} needs it to be 1 on {} with Megatron-LM {}: its validate_args asserts it "
                          "(\"Using tensor model parallelism or context parallelism require setting the environment "
                          "variable CUDA_DEVICE_MAX_CONNECTIONS to 1\"), and its test `tp > 1 or cp > 1 and arch < 10` "
                          "applies the Blackwell exemption to context parallelism only",
                          kVariable, setting, parallel.name, *parallel, gpus, to_string(job.versions.megatron_core));
  } else {
    message = fmt::format("{} {}, but {} {} on {} needs it to be 1{}", kVariable, setting, parallel.name, *parallel, gpus,
                          megatron_lm ? ": Megatron-LM's validate_args asserts it (\"Using tensor model parallelism or "
                                        "context parallelism require setting the environment variable "
                                        "CUDA_DEVICE_MAX_CONNECTIONS to 1\")"
                                      : " so that the tensor/context-parallel communication kernels are issued in "
                                        "order and overlap with the GEMMs");
  }
  Diagnostic diag = make_diagnostic(kCudaDeviceMaxConnections, std::move(message),
                                    env.state == EnvState::Set ? primary_span(env.where)
                                                               : launch_or(job, span_for(parallel)));
  diag.severity = megatron_lm ? Severity::Error : Severity::Warning;
  if (env.from_config) diag.notes.push_back(note_for(env, kVariable));
  add_notes(diag, {&parallel}, nullptr);
  for (Note& note : extra) diag.notes.push_back(std::move(note));
  if (d.gpu && (job.cluster.gpu_where.statement.valid() || job.cluster.gpu_where.value.valid())) {
    diag.notes.push_back(Note{job.cluster.gpu_where.origin.empty()
                                  ? fmt::format("the GPUs are {} ({})", d.gpu->display, d.gpu->architecture)
                                  : job.cluster.gpu_where.origin,
                              primary_span(job.cluster.gpu_where)});
  }
  report(out, std::move(diag),
         any_gpu ? "export CUDA_DEVICE_MAX_CONNECTIONS=1 in the launch script (Megatron-LM core_v0.13.0 and newer "
                   "no longer require it on Blackwell)"
                 : "export CUDA_DEVICE_MAX_CONNECTIONS=1 in the launch script");
}

void forbid_one_with_fsdp(const RuleContext& context, const EnvLookup& env, bool megatron_fsdp,
                          std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  Resolved version = resolve(job, "ddp.megatron_fsdp_version");
  bool fsdp_v2 = version.known() && version.value->kind == ValueKind::Int && version.value->integer == 2;
  // Bridge asserts it on the Megatron-FSDP (v1) path; Megatron-LM for both FSDPs.
  bool fatal = megatron_lm || (megatron_fsdp && !fsdp_v2);
  std::string which = megatron_fsdp ? "Megatron-FSDP" : "Torch FSDP2";
  Diagnostic diag = make_diagnostic(
      kCudaDeviceMaxConnections,
      fmt::format("{}=1 with {}: {}", kVariable, which,
                  fatal ? "start-up fails with \"FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset.\""
                        : "FSDP's communication streams are serialized and stop overlapping with compute"),
      primary_span(env.where));
  diag.severity = fatal ? Severity::Error : Severity::Warning;
  if (env.from_config) diag.notes.push_back(note_for(env, kVariable));
  Resolved fsdp = resolve(job, megatron_fsdp ? "ddp.use_megatron_fsdp" : "dist.use_torch_fsdp2");
  if (megatron_fsdp && !(fsdp.known() && truthy(fsdp).value_or(false))) fsdp = resolve(job, "dist.use_megatron_fsdp");
  if (fsdp.known() && !fsdp.defaulted) diag.notes.push_back(note_for(fsdp));
  report(out, std::move(diag), fmt::format("unset {} or set it above 1 (8 or 32) for FSDP runs", kVariable));
}

void not_needed(const RuleContext& context, const EnvLookup& env, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  Diagnostic diag = make_diagnostic(
      kCudaDeviceMaxConnections,
      fmt::format("{}=1 is not needed on {} ({}): the requirement ends with Blackwell, and 1 keeps independent "
                  "kernels from overlapping",
                  kVariable, d.gpu->display, d.gpu->architecture),
      primary_span(env.where));
  diag.severity = Severity::Note;
  if (env.from_config) diag.notes.push_back(note_for(env, kVariable));
  report(out, std::move(diag),
         "unset it, or use what Megatron Bridge's performance recipes use on Blackwell (8, or 32 with TP/CP "
         "and DP/PP or with DeepEP/HybridEP)");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  EnvLookup env = lookup_launch_env(job, kVariable);
  if (env.state == EnvState::Unknown || (env.state == EnvState::Set && !env.value)) return;
  bool one = env.state == EnvState::Set && *env.value == "1";
  auto megatron_fsdp = any_of(flag(job, "ddp.use_megatron_fsdp"), flag(job, "dist.use_megatron_fsdp"));
  auto torch_fsdp = flag(job, "dist.use_torch_fsdp2");
  if (one && (megatron_fsdp.value_or(false) || torch_fsdp.value_or(false))) {
    forbid_one_with_fsdp(context, env, megatron_fsdp.value_or(false), out);
    return;
  }
  if (every_gpu_asserts(job, d)) {
    // FSDP only warns there; EP-communication overlap had no exemption yet.
    if (!one && megatron_fsdp == false && torch_fsdp == false) require_one(context, env, out);
    return;
  }
  if (!d.gpu) return;
  std::string_view arch = d.gpu->architecture;
  bool before_blackwell = arch == "ampere" || arch == "hopper";
  if (!before_blackwell) {
    if (one && megatron_fsdp == false && torch_fsdp == false) not_needed(context, env, out);
    return;
  }
  if (one) return;
  bool parallel = splits(d.tensor_parallel) || splits(d.context_parallel);
  // As Bridge applies it: comm_overlap's value, else false under a CommOverlapConfig.
  moe::Switch ep_overlap = moe::overlap_switch(job, "overlap_moe_expert_parallel_comm");
  // With FSDP or EP-communication overlap Megatron-LM only warns: those want more connections.
  if (!parallel || megatron_fsdp != false || torch_fsdp != false || ep_overlap.value != false) return;
  std::vector<Note> reset;
  // The switch says which field decided it: the model's true, reset by a CommOverlapConfig.
  if (ep_overlap.from.path.starts_with("model.") && ep_overlap.from.boolean() == true) {
    Note note = moe::note_for(ep_overlap.from);
    note.message += " (the recipe's CommOverlapConfig sets the model's value from comm_overlap.overlap_moe_expert_parallel_comm, "
                    "false when unset: no expert-parallel overlap)";
    reset.push_back(std::move(note));
  }
  require_one(context, env, out, std::move(reset));
}

}  // namespace

extern const RuleInfo kCudaDeviceMaxConnections = {
    .code = "MB016",
    .name = "cuda-device-max-connections",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Warning,
    .summary = "CUDA_DEVICE_MAX_CONNECTIONS must be 1 for TP/CP before Blackwell and must not be 1 with FSDP",
    .doc = R"md(`CUDA_DEVICE_MAX_CONNECTIONS` caps the hardware work queues a process uses. With 1, kernels
are issued in program order, which tensor and context parallelism rely on before Blackwell: the
communication kernels must be scheduled before the GEMMs they overlap with.

* **TP or CP > 1 on Ampere/Hopper** without `CUDA_DEVICE_MAX_CONNECTIONS=1`: Megatron-LM's
  `validate_args` asserts "Using tensor model parallelism or context parallelism require setting
  the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1" (an **error** for Megatron-LM
  launches); Megatron Bridge does not check it, the run is slower (a **warning**). With FSDP or
  MoE expert-parallel communication overlap Megatron-LM only warns (those prefer more
  connections), so mblint says nothing there. Under Bridge the overlap is the value it applies:
  a `CommOverlapConfig` writes `comm_overlap.overlap_moe_expert_parallel_comm` over the model's
  (false when unset: `CommOverlapConfig.setup()` in `training/comm_overlap.py`, Megatron Bridge v0.2.0 to v0.6.0), so
  `model.overlap_moe_expert_parallel_comm=true` under a recipe with one does not overlap.
* **FSDP with `CUDA_DEVICE_MAX_CONNECTIONS=1`**: Megatron Bridge's Megatron-FSDP set-up
  (`_validate_and_apply_megatron_fsdp_v1_configs`) and Megatron-LM (for Megatron-FSDP and Torch
  FSDP2) assert "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset." (**error**). Torch
  FSDP2 under Bridge is not asserted but loses its overlap (warning).
* **Blackwell and later with 1**: the requirement "no longer exists since the Blackwell
  architecture" (Megatron-LM); 1 only prevents overlap (**note**).
* **Megatron-LM core_v0.12.0** (`--megatron-core-version 0.12.0`): `megatron/training/arguments.py`
  tests `tensor_model_parallel_size > 1 or context_parallel_size > 1 and get_device_arch_version() < 10`;
  Python's precedence binds the architecture test to the CP term, so TP > 1 asserts on every GPU,
  Blackwell included (**error**, also when the GPU type is unknown); core_v0.13.0 added the
  parentheses. Bridge's performance recipes
  use 8, or 32 with TP/CP plus DP/PP or with DeepEP/HybridEP.

The value is what the training processes see: the launch script's environment wins; Megatron
Bridge then applies the config's `env_vars` with `os.environ.setdefault`, which include the
recipe's own (mblint's catalog records each recipe's `env_vars`). The GPU comes from `--gpu`, the
`--gres` type or the recipe; without it, and for a YAML file alone (no launch environment), the
rule is silent. The environment the script inherits (shell profile, container) is not seen.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\nexport CUDA_DEVICE_MAX_CONNECTIONS=8\n"
     "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 32 "
     "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
     "--micro-batch-size 1 --global-batch-size 64 --bf16\n",
     "launch.sh --gpu h100"},
    .good = {.content =
     "#!/bin/bash\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n"
     "torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 32 "
     "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
     "--micro-batch-size 1 --global-batch-size 64 --bf16\n"},
    .check = check,
    .checks = "MC L1, BR V19, PS 47, PS 48, PS 50",
};

}  // namespace mblint
