// Selective recompute checkpoints the submodules named in recompute_modules;
// Megatron-Core asserts every name is one it knows, and the set grew from
// release to release.
#include "rules/support/runtime_support.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "lint/model/schema.h"

namespace mblint {

extern const RuleInfo kRecomputeModulesUnknown;

namespace {

// The first release that knows `name`, when a later one does.
std::optional<Version> release_knowing(std::string_view name) {
  for (Version v : {Version{0, 14, 0}, Version{0, 19, 0}, Version{0, 20, 0}}) {
    auto names = allowed_recompute_modules(v);
    if (std::find(names.begin(), names.end(), name) != names.end()) return v;
  }
  return std::nullopt;
}

std::optional<std::string_view> closest(std::string_view name, const std::vector<std::string_view>& allowed) {
  std::optional<std::string_view> best;
  size_t best_distance = 3;  // at most two edits away
  for (std::string_view candidate : allowed) {
    size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  Choice granularity = read_choice(job, "model.recompute_granularity");
  NameList modules = read_names(job, "model.recompute_modules");
  if (!granularity.is("selective") || !modules.items) return;
  Version version = job.versions.megatron_core;
  std::vector<std::string_view> allowed = allowed_recompute_modules(version);
  const ConfigValue* node = config_node(job, "model.recompute_modules");
  for (size_t i = 0; i < modules.items->size(); ++i) {
    const std::string& name = (*modules.items)[i];
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    // Point at the list item when it has its own place.
    Provenance where = modules.where;
    if (node && node->is_list() && i < node->items.size() && node->items[i].where.value.valid()) {
      where = node->items[i].where;
    }
    std::optional<Version> later = release_knowing(name);
    // A recipe that lists it targets a Megatron-Core that knows it; only a
    // release the user names is held against it.
    if (later && where.layer == Layer::Recipe && !job.versions.megatron_core_given) continue;
    std::string why = later && *later > version
                          ? fmt::format("'{}' needs Megatron-Core {} or later", name, to_string(*later))
                          : fmt::format("'{}' is not a recompute module", name);
    Diagnostic diag = make_diagnostic(
        kRecomputeModulesUnknown,
        fmt::format("recompute_modules: {}; Megatron-Core {} accepts {}", why, to_string(version), join_names(allowed)),
        first_span(job, {primary_span(where), span_for(modules)}));
    diag.notes.push_back(note_for(granularity));
    if (!job.versions.megatron_core_given) {
      diag.notes.push_back(Note{fmt::format("Megatron-Core {} assumed (the newest mblint knows); pass "
                                            "--megatron-core-version for another release",
                                            to_string(version)),
                                {}});
    }
    std::optional<std::string_view> suggestion = closest(name, allowed);
    if (later && *later > version) {
      diag.help = fmt::format("run Megatron-Core {} or later, or drop '{}' from recompute_modules", to_string(*later),
                              name);
    } else if (suggestion) {
      diag.help = fmt::format("did you mean '{}'?", *suggestion);
      Fix fix = advice_fix(fmt::format("replace '{}' with '{}'", name, *suggestion));
      // The list with the one name replaced, for the re-check.
      std::vector<std::string> fixed = *modules.items;
      fixed[i] = std::string(*suggestion);
      fix.changes.push_back({"model.recompute_modules", fmt::format("[{}]", fmt::join(fixed, ", "))});
      if (job.dialect != Dialect::MegatronLM) {
        if (auto edit = replace_value(where, std::string(*suggestion)); edit && where.value != modules.where.value) {
          fix.edits.push_back(*edit);
        }
      }
      diag.fixes.push_back(std::move(fix));
    } else {
      diag.help = fmt::format("drop '{}' from recompute_modules", name);
    }
    out.push_back(std::move(diag));
  }
}

}  // namespace

extern const RuleInfo kRecomputeModulesUnknown = {
    .code = "MB805",
    .name = "recompute-modules-unknown",
    .group = RuleGroup::Runtime,
    .severity = Severity::Error,
    .summary = "recompute_modules names a submodule the Megatron-Core release does not know",
    .doc = R"md(With `recompute_granularity: selective`, Megatron-Core checkpoints the submodules listed in
`recompute_modules` and asserts that every name is known ("Invalid choices for recompute_modules:
{...}. Allowed modules are: {...}", `TransformerConfig.__post_init__`). The job stops before the
model is built. The set depends on the release:

| Megatron-Core | accepted names |
|---|---|
| 0.13 | `core_attn`, `moe_act`, `layernorm`, `mla_up_proj`, `mlp`, `moe` |
| 0.14 – 0.18 | the above and `shared_experts` |
| 0.19 | the above and `gdn_norm_out` |
| development (0.20) | the above and `gdp_in_proj`, `gdp_qkv`, `mhc` (DeepSeek-V4) |

The release is the one given with `--megatron-core-version` (default: the newest, 0.19). Names
that only a later release knows are reported with that release; typos get a did-you-mean. With
any other granularity the list is not read and not checked.)md",
    .bad = {"override.yaml",
     "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn, layer_norm]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  recompute_granularity: selective\n  recompute_modules: [core_attn, layernorm]\n"},
    .check = check,
    .checks = "MC I7, PS 65",
};

}  // namespace mblint
