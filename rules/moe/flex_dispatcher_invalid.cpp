// The flex token dispatcher and its backends (DeepEP, HybridEP, NCCL-EP):
// which dispatcher they need and what they do not support.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kFlexDispatcherInvalid;

namespace {

using namespace moe;

struct Flex {
  Field dispatcher;
  Field backend;
  Field deepep;  // deprecated moe_enable_deepep
  Field pad;
  Field factor;
};

void report(std::vector<Diagnostic>& out, std::string message, std::initializer_list<const Field*> fields,
            std::string help, std::vector<Fix> fixes) {
  report(out, diagnostic_at(kFlexDispatcherInvalid, std::move(message), fields), std::move(help), std::move(fixes));
}

void check_deprecated_deepep(const Flex& f, std::vector<Diagnostic>& out) {
  if (f.deepep.boolean() != true) return;
  std::optional<std::string> type = f.dispatcher.text();
  if (type && *type != "flex") {
    report(out,
           fmt::format("moe_enable_deepep is true with the {} token dispatcher: Megatron-Core raises ValueError (\"DeepEP "
                       "backend is only supported with flex token dispatcher.\")",
                       *type),
           {&f.deepep, &f.dispatcher},
           "set moe_token_dispatcher_type to flex and moe_flex_dispatcher_backend to deepep (moe_enable_deepep is "
           "deprecated)",
           {set_field_fix(f.dispatcher, "flex")});
  }
  if (f.backend.text() == "hybridep") {
    report(out,
           "moe_enable_deepep is true with moe_flex_dispatcher_backend hybridep: Megatron-Core raises ValueError (\"Only "
           "one backend is supported for flex token dispatcher.\")",
           {&f.deepep, &f.backend}, "remove moe_enable_deepep (deprecated) and keep the backend you want",
           {set_field_fix(f.deepep, "false")});
  }
}

void check_backend(const RuleContext& context, const Flex& f, std::vector<Diagnostic>& out) {
  std::optional<std::string> type = f.dispatcher.text();
  std::optional<std::string> backend = f.backend.text();
  if (f.deepep.boolean() == true) backend = "deepep";  // moe_enable_deepep selects DeepEP
  if (!type || !backend) return;
  if (*backend == "ncclep" && *type != "flex") {
    report(out,
           fmt::format("moe_flex_dispatcher_backend ncclep with the {} token dispatcher: Megatron-Core raises ValueError "
                       "(\"moe_flex_dispatcher_backend='ncclep' requires moe_token_dispatcher_type='flex'.\")",
                       *type),
           {&f.backend, &f.dispatcher}, "set moe_token_dispatcher_type to flex", {set_field_fix(f.dispatcher, "flex")});
  }
  if (*type != "flex") return;
  bool pads = f.pad.boolean() == true;
  if (pads && *backend == "deepep") {
    report(out,
           "moe_pad_expert_input_to_capacity with the flex dispatcher's deepep backend: Megatron-Core raises ValueError "
           "(\"Flex token dispatcher with deepep backend does not support moe_pad_expert_input_to_capacity\")",
           {&f.pad, &f.backend, &f.dispatcher}, "set moe_pad_expert_input_to_capacity to false, or use alltoall",
           {set_field_fix(f.pad, "false")});
  }
  bool drops = f.factor.known() && !f.factor.is_null();
  if (*backend == "ncclep" && (pads || drops)) {
    report(out,
           "token dropping or padding with the flex dispatcher's ncclep backend: the dispatcher raises ValueError (\"drop "
           "and pad is not supported yet with the 'ncclep' backend.\") when the model is built",
           {pads ? &f.pad : &f.factor, &f.backend}, "remove moe_expert_capacity_factor and "
           "moe_pad_expert_input_to_capacity, or use the deepep or hybridep backend", {});
  }
  const Derived& d = context.derived;
  // The dispatcher's TP is the expert tensor-parallel group.
  if ((*backend == "deepep" || *backend == "ncclep") && is_moe(d) && d.expert_tensor_parallel.known() &&
      d.expert_parallel.known() && *d.expert_tensor_parallel * *d.expert_parallel == 1) {
    Field tp = from_quantity(d.expert_tensor_parallel);
    Field ep = from_quantity(d.expert_parallel);
    report(out,
           fmt::format("the flex dispatcher's {} backend with expert_tensor_parallel_size 1 and "
                       "expert_model_parallel_size 1: the dispatcher asserts \"{} dispatcher requires TPxEP > 1\" "
                       "when the model is built",
                       *backend, *backend == "deepep" ? "DeepEP" : "NCCL EP"),
           {&f.dispatcher, &f.backend, &ep, &tp}, "use moe_token_dispatcher_type alltoall (nothing to dispatch across), "
           "or expert_model_parallel_size > 1",
           {set_field_fix(f.dispatcher, "alltoall")});
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Flex f{read_field(job, "model.moe_token_dispatcher_type"), read_field(job, "model.moe_flex_dispatcher_backend"),
         read_field(job, "model.moe_enable_deepep"), read_field(job, "model.moe_pad_expert_input_to_capacity"),
         read_field(job, "model.moe_expert_capacity_factor")};
  check_deprecated_deepep(f, out);
  check_backend(context, f, out);
}

}  // namespace

extern const RuleInfo kFlexDispatcherInvalid = {
    .code = "MB715",
    .name = "flex-dispatcher-invalid",
    .group = RuleGroup::Moe,
    .severity = Severity::Error,
    .summary = "a DeepEP/HybridEP/NCCL-EP setting the flex token dispatcher rejects",
    .doc = R"md(The `flex` token dispatcher runs one communication group over all TP x EP ranks through a
backend: DeepEP (`deepep`), HybridEP (`hybridep`) or NCCL EP (`ncclep`). Megatron-Core stops the job
when the model config is finalized or the model is built:

* the deprecated `moe_enable_deepep` without `moe_token_dispatcher_type: flex` — `ValueError("DeepEP
  backend is only supported with flex token dispatcher.")` — or together with the `hybridep`
  backend — `ValueError("Only one backend is supported for flex token dispatcher.")`;
* the `ncclep` backend with another dispatcher — `ValueError("moe_flex_dispatcher_backend='ncclep'
  requires moe_token_dispatcher_type='flex'.")`;
* flex with DeepEP and `moe_pad_expert_input_to_capacity` — `ValueError("Flex token dispatcher with
  deepep backend does not support moe_pad_expert_input_to_capacity")`;
* flex with NCCL EP and token dropping or padding — `ValueError("drop and pad is not supported yet
  with the 'ncclep' backend.")` when the dispatcher is built;
* flex with DeepEP or NCCL EP when `ETP x EP == 1` (the dispatcher's TP is the expert
  tensor-parallel group) — the dispatcher asserts "DeepEP dispatcher requires TPxEP > 1" when the
  model is built.

Megatron-LM and Megatron Bridge behave the same. (Megatron Bridge's own check of the backend against
the GPU is `flex-backend-unsupported-gpu`; a backend set without the flex dispatcher is
`flex-backend-without-flex-dispatcher`.))md",
    .bad = {"override.yaml",
     "model:\n  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: deepep\n"
     "  moe_expert_capacity_factor: 1.0\n  moe_pad_expert_input_to_capacity: true\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config --nodes 1 --gpus-per-node 8 --gpu h100"},
    .good = {.content =
     "model:\n  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: deepep\n"
     "  moe_expert_capacity_factor: 1.0\n  moe_pad_expert_input_to_capacity: false\n"},
    .check = check,
    .checks = "MC G19",
};

}  // namespace mblint
