// moe_layer_recompute is the old switch for recomputing whole MoE layers.
// Megatron-Core rewrites it into selective recompute of 'moe' and rejects
// it next to full recompute.
#include "rules/support/runtime_support.h"

#include <algorithm>

#include <fmt/ranges.h>

namespace mblint {

extern const RuleInfo kMoeLayerRecompute;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Setting legacy = read_flag(job, "model.moe_layer_recompute");
  if (!legacy.value.value_or(false)) return;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  if (!granularity.known) return;
  Diagnostic diag = make_diagnostic(kMoeLayerRecompute, "", first_span(job, {span_for(legacy)}));
  diag.notes.push_back(note_for(granularity));
  if (granularity.is("full")) {
    diag.message = "moe_layer_recompute cannot be combined with recompute_granularity full: Megatron-Core rejects it";
    diag.help = "drop moe_layer_recompute (full recompute already covers the MoE layers)";
    diag.fixes.push_back(flag_fix(job, legacy, false, FixSafety::Safe));
  } else {
    diag.severity = Severity::Warning;
    diag.message = granularity.value
                       ? "moe_layer_recompute is deprecated: Megatron-Core adds 'moe' to recompute_modules"
                       : "moe_layer_recompute is deprecated: Megatron-Core turns it into recompute_granularity "
                         "selective with recompute_modules [core_attn, moe], so core attention is recomputed too";
    diag.help = "say it directly: recompute_granularity selective and 'moe' in recompute_modules";
    Fix fix = advice_fix("set recompute_granularity to selective, add 'moe' to recompute_modules and drop "
                         "moe_layer_recompute",
                         FixSafety::Safe);
    // What Megatron-Core makes of it, written out, for the re-check: the
    // modules as they stand (core_attn when selective recompute names none)
    // with 'moe'.
    NameList modules = read_names(job, "model.recompute_modules");
    std::vector<std::string> names{"core_attn"};
    if (granularity.is("selective") && modules.items) names = *modules.items;
    if (std::find(names.begin(), names.end(), "moe") == names.end()) names.push_back("moe");
    fix.changes = {{"model.recompute_granularity", "selective"},
                   {"model.recompute_modules", fmt::format("[{}]", fmt::join(names, ", "))},
                   {"model.moe_layer_recompute", "false"}};
    diag.fixes.push_back(std::move(fix));
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kMoeLayerRecompute = {
    .code = "MB809",
    .name = "moe-layer-recompute",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "the deprecated moe_layer_recompute: rejected with full recompute, otherwise rewritten to selective 'moe'",
    .doc = R"md(`moe_layer_recompute` predates `recompute_modules`. Megatron-Core's
`TransformerConfig.__post_init__` (every release) warns "--moe-layer-recompute is deprecated" and:

* with `recompute_granularity: full` raises "Do not set --moe-layer-recompute with full recompute
  granularity." (error: the job stops before the model is built);
* otherwise sets `recompute_granularity: selective` and appends `moe` to `recompute_modules`
  (warning). Without any recompute configured, the default `recompute_modules` is `[core_attn]`, so
  core attention is recomputed as well, which the switch does not say.

Spelling it as selective recompute with `moe` in `recompute_modules` keeps the run the same.)md",
    .bad = {"override.yaml",
     "model:\n  moe_layer_recompute: true\n  recompute_granularity: full\n  recompute_method: uniform\n"
     "  recompute_num_layers: 1\n",
     "override.yaml --recipe qwen3_30b_a3b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  moe_layer_recompute: false\n  recompute_granularity: selective\n  recompute_modules: [moe]\n"},
    .check = check,
    .checks = "MC I8",
};

}  // namespace mblint
