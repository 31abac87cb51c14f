// With a comm_overlap section, Megatron Bridge's CommOverlapConfig writes its
// own value of each model overlap switch over the model's: a switch written
// in `model` alone does nothing.
#include "rules/support/moe_support.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kCommOverlapOverridesModel;

namespace {

// The model switches CommOverlapConfig.setup() assigns (training/comm_overlap.py,
// `_get_model_comm_overlap_cfgs` then `_apply_cfgs`): false unless comm_overlap
// sets them. tp_comm_overlap is comm_overlap's required field.
constexpr std::string_view kSwitches[] = {"tp_comm_overlap", "overlap_moe_expert_parallel_comm",
                                          "delay_wgrad_compute", "defer_embedding_wgrad_compute"};

// The value set-up gives the switch; nullopt when unknown. TP overlap is
// also switched off below TP 2 or without sequence parallelism.
std::optional<bool> applied_value(const moe::Switch& applied, std::string_view name, const Derived& d) {
  if (!applied.value || !*applied.value || name != "tp_comm_overlap") return applied.value;
  if (!d.tensor_parallel.known() || !d.sequence_parallel.value) return std::nullopt;
  return *d.tensor_parallel >= 2 && *d.sequence_parallel.value;
}

void check_switch(const Job& job, const Derived& d, const ConfigValue& section, std::string_view name,
                  std::vector<Diagnostic>& out) {
  moe::Field model = moe::read_field(job, fmt::format("model.{}", name));
  if (model.source != SettingSource::Written || !written_by_user(model.value.where.layer)) return;
  std::optional<bool> wanted = model.boolean();
  moe::Switch switch_ = moe::overlap_switch(job, name);
  std::optional<bool> applied = applied_value(switch_, name, d);
  // TP overlap turned off by TP/SP is tp-comm-overlap-without-sequence-parallel's.
  if (!wanted || !applied || *applied == *wanted || *applied != switch_.value) return;
  bool from_comm_overlap = switch_.from.path.starts_with("comm_overlap.");
  std::string comm_path = fmt::format("comm_overlap.{}", name);
  Diagnostic diag = finding_at(
      kCommOverlapOverridesModel,
      fmt::format("model.{} = {} has no effect: Megatron Bridge's CommOverlapConfig sets it to {}{}", name,
                  *wanted ? "true" : "false", *applied ? "true" : "false",
                  from_comm_overlap ? fmt::format(" from {}", comm_path)
                                    : fmt::format(" ({} is unset)", comm_path)),
      moe::as_quantity(model), {});
  if (from_comm_overlap) diag.notes.push_back(moe::note_for(switch_.from));
  if (Span where = primary_span(section.where); where.valid() && !from_comm_overlap) {
    diag.notes.push_back(Note{section.where.layer == Layer::Recipe ? "the recipe builds a CommOverlapConfig"
                                                                    : "the comm_overlap section is here",
                              where});
  }
  report(out, std::move(diag),
         fmt::format("set {} to {} instead (CommOverlapConfig owns the model's overlap switches)", comm_path,
                     *wanted ? "true" : "false"),
         {advice_fix(fmt::format("set {} to {} and remove model.{}", comm_path, *wanted ? "true" : "false", name))});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (job.dialect != Dialect::Bridge || job.config_complete || !job.trains) return;
  const ConfigValue* section = config_node(job, "comm_overlap");
  if (!section || !section->is_map()) return;
  for (std::string_view name : kSwitches) check_switch(job, context.derived, *section, name, out);
}

}  // namespace

extern const RuleInfo kCommOverlapOverridesModel = {
    .code = "MB915",
    .name = "comm-overlap-overrides-model",
    .group = RuleGroup::Optimizer,
    .severity = Severity::Warning,
    .summary = "a model overlap switch that Megatron Bridge's CommOverlapConfig silently replaces",
    .doc = R"md(When the config has a `comm_overlap` section (most recipes build one), Megatron Bridge calls
`CommOverlapConfig.setup()` before the model is built, and it assigns the model's overlap
switches from its own values, over whatever `model` says (`training/comm_overlap.py`:
`_get_model_comm_overlap_cfgs` starts from false and takes only the `comm_overlap.*` fields that
are set; `_apply_cfgs` writes them into the model; Megatron Bridge v0.1.0 to v0.6.0):

| model switch | value after set-up |
|---|---|
| `tp_comm_overlap` | `comm_overlap.tp_comm_overlap` (off below TP 2 or without sequence parallelism) |
| `overlap_moe_expert_parallel_comm` | `comm_overlap.overlap_moe_expert_parallel_comm`, else false |
| `delay_wgrad_compute` | `comm_overlap.delay_wgrad_compute`, else false |
| `defer_embedding_wgrad_compute` | `comm_overlap.defer_embedding_wgrad_compute`, else false |

So `model.overlap_moe_expert_parallel_comm=true` on a recipe with a `comm_overlap` section trains
without the expert-parallel overlap, and none of the checks the overlap needs run. The rule
reports a switch the user wrote in `model` whose value set-up replaces; the fix is to write it in
`comm_overlap`. Without a `comm_overlap` section (`comm_overlap: null`, or a recipe without one)
the model's value stands. A full dump is taken as it is (it may have been written after set-up).
The data-parallel settings set-up also replaces are `comm-overlap-overrides-ddp`.)md",
    .bad = {"override.yaml", "model:\n  overlap_moe_expert_parallel_comm: true\n",
            "override.yaml --recipe qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "comm_overlap:\n  overlap_moe_expert_parallel_comm: true\n"},
    .check = check,
};

}  // namespace mblint
