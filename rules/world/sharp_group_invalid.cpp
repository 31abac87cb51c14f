// SHARP (in-network reductions) is enabled on one communicator group: the
// data-parallel group or, with a partial distributed optimizer, its replica
// group. Megatron-Core accepts nothing else.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kSharpGroupInvalid;

namespace {

Diagnostic at_group(const TextSetting& group, std::string message) {
  Diagnostic diag = make_diagnostic(kSharpGroupInvalid, std::move(message), primary_span(group.where));
  return diag;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  TextSetting group = config_text(job, "dist.sharp_enabled_group");
  if (!group.value) return;  // None, absent or unknown
  Setting use_sharp = read_flag(job, "dist.use_sharp");
  if (!use_sharp.value) return;
  if (!*use_sharp.value) {
    Diagnostic diag = at_group(group, fmt::format("sharp_enabled_group is '{}' but use_sharp is false: Megatron-Core "
                                                  "accepts a SHARP group only when use_sharp is true",
                                                  *group.value));
    diag.notes.push_back(note_for(use_sharp));
    report(out, std::move(diag), "set dist.use_sharp to true to use SHARP, or remove sharp_enabled_group (null)",
           {set_setting_fix(use_sharp, true, FixSafety::Unsafe)});
    return;
  }
  if (*group.value != "dp" && *group.value != "dp_replica") {
    Diagnostic diag = at_group(group, fmt::format("sharp_enabled_group '{}' is not a group SHARP can be enabled on: "
                                                  "use 'dp' or 'dp_replica'",
                                                  *group.value));
    diag.notes.push_back(note_for(use_sharp));
    diag.help = "use sharp_enabled_group 'dp' (the data-parallel group, the default when it is null)";
    if (auto edit = replace_value(group.where, "dp")) {
      Fix fix{"set sharp_enabled_group to dp", FixSafety::Unsafe, {*edit}};
      fix.changes.push_back({group.path, "dp"});  // for the re-check
      diag.fixes.push_back(std::move(fix));
    }
    out.push_back(std::move(diag));
    return;
  }
  if (*group.value != "dp_replica") return;
  Quantity instances = config_int(job, "ddp.num_distributed_optimizer_instances");
  if (!instances.known() || *instances > 1) return;
  Diagnostic diag = at_group(group, fmt::format("sharp_enabled_group 'dp_replica' needs a partial distributed "
                                                "optimizer, but num_distributed_optimizer_instances is {}: there "
                                                "is no replica group",
                                                *instances));
  add_notes(diag, {&instances}, nullptr);
  diag.help = "use sharp_enabled_group 'dp', or num_distributed_optimizer_instances > 1";
  if (auto edit = replace_value(group.where, "dp")) {
    Fix fix{"set sharp_enabled_group to dp", FixSafety::Unsafe, {*edit}};
    fix.changes.push_back({group.path, "dp"});  // for the re-check
    diag.fixes.push_back(std::move(fix));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kSharpGroupInvalid = {
    .code = "MB106",
    .name = "sharp-group-invalid",
    .group = RuleGroup::World,
    .severity = Severity::Error,
    .summary = "sharp_enabled_group must be dp or dp_replica, needs use_sharp, and dp_replica needs optimizer instances",
    .doc = R"md(`dist.use_sharp` enables NVIDIA SHARP in-network reductions on one communicator group, chosen by
`dist.sharp_enabled_group`: `dp` (the data-parallel group, the default) or `dp_replica` (the
group that connects the instances of a partial distributed optimizer). Megatron Bridge passes
both to Megatron-Core's `initialize_model_parallel`, which asserts at start-up:

* "sharp_enabled_group is only valid when use_sharp is True" when a group is named without
  `use_sharp`;
* "Invalid sharp_enabled_group" for anything but `dp` / `dp_replica`;
* "dp_replica group requires num_distributed_optimizer_instances > 1" when there is only one
  optimizer instance, so no replica group exists.

No recipe of the catalog enables SHARP, so a recipe-based job that does not set `use_sharp` has
it off.)md",
    .bad = {"override.yaml",
     "dist:\n  use_sharp: true\n  sharp_enabled_group: dp_replica\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "dist:\n  use_sharp: true\n  sharp_enabled_group: dp\n"},
    .check = check,
    .checks = "MC A12",
};

}  // namespace mblint
