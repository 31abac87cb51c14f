// moe_flex_dispatcher_backend only selects the backend of the flex
// dispatcher; with any other dispatcher it does nothing.
#include "rules/support/moe_support.h"

namespace mblint {

extern const RuleInfo kFlexBackendWithoutFlexDispatcher;

namespace {

using namespace moe;

// Written by the user for this job: not a recipe value, not a default, and
// not one of the fields a full dump writes out whatever their value.
bool written_for_this_job(const Job& job, const Field& field) {
  if (!field.present || field.defaulted || !located(field)) return false;
  Layer layer = field.value.where.layer;
  if (layer == Layer::Recipe || layer == Layer::Rewrite || layer == Layer::SchemaDefault) return false;
  return !(job.config_complete && layer == Layer::ConfigFile);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_moe(context.derived)) return;
  Field backend = read_field(job, "model.moe_flex_dispatcher_backend");
  Field dispatcher = read_field(job, "model.moe_token_dispatcher_type");
  std::optional<std::string> name = backend.text();
  std::optional<std::string> type = dispatcher.text();
  if (!name || (*name != "deepep" && *name != "hybridep") || !type || *type == "flex") return;
  if (!written_for_this_job(job, backend)) return;
  Diagnostic diag = make_diagnostic(
      kFlexBackendWithoutFlexDispatcher,
      fmt::format("moe_flex_dispatcher_backend {} has no effect: the token dispatcher is {}, and only the flex "
                  "dispatcher uses a backend",
                  *name, *type),
      span_for(backend));
  add_field_notes(diag, {&backend, &dispatcher}, &backend);
  report(out, std::move(diag),
         "set moe_token_dispatcher_type to flex as well (what Megatron Bridge's apply_flex_dispatcher_backend "
         "does), or drop the backend setting",
         {set_field_fix(dispatcher, "flex")});
}

}  // namespace

extern const RuleInfo kFlexBackendWithoutFlexDispatcher = {
    .code = "MB726",
    .name = "flex-backend-without-flex-dispatcher",
    .group = RuleGroup::Moe,
    .severity = Severity::Warning,
    .summary = "a DeepEP/HybridEP backend is set but the token dispatcher is not flex",
    .doc = R"md(DeepEP and HybridEP are backends of the `flex` token dispatcher: both
`moe_token_dispatcher_type: flex` and `moe_flex_dispatcher_backend: deepep|hybridep` are needed.
Setting only the backend leaves the `alltoall` (or `allgather`) dispatcher in place: the run works,
but without the dispatcher the user asked for. Megatron Bridge's `apply_flex_dispatcher_backend(cfg.model,
moe_flex_dispatcher_backend=...)` sets both (and turns `moe_shared_expert_overlap` off).

Many NVIDIA recipes set a backend next to the `alltoall` dispatcher on purpose (so that switching the
dispatcher is one change), and a full config dump writes the field whatever it holds; the rule only
fires for a backend the job's own YAML, flags or overrides write.)md",
    .bad = {"override.yaml",
     "model:\n  moe_token_dispatcher_type: alltoall\n  moe_flex_dispatcher_backend: hybridep\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: hybridep\n"},
    .check = check,
    .checks = "PS 54",
};

}  // namespace mblint
