// cp_comm_type a2a+p2p runs all-to-all inside a group of context-parallel
// ranks and point-to-point between groups: the group sizes must be given.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHierarchicalCpSizesMissing;

namespace {

bool hierarchical(const CpCommType& cp, bool megatron_lm) {
  // Megatron Bridge looks for the text inside each entry; Megatron-LM for an
  // entry equal to it.
  return std::any_of(cp.types.begin(), cp.types.end(), [&](const std::string& type) {
    return megatron_lm ? type == "a2a+p2p" : type.find("a2a+p2p") != std::string::npos;
  });
}

// [a2a size, p2p size]: the a2a level as large as the key/value heads per
// tensor-parallel rank and one node allow.
std::optional<std::pair<int64_t, int64_t>> suggested_sizes(const RuleContext& context) {
  const Derived& d = context.derived;
  if (!splits(d.context_parallel)) return std::nullopt;
  int64_t cp = *d.context_parallel;
  auto heads = heads_per_rank(context);
  int64_t best = 1;
  for (int64_t a : divisors(cp)) {
    if (a == cp) continue;
    if (heads && (heads->query % a != 0 || heads->key_value % a != 0)) continue;
    if (d.gpus_per_node.known() && d.tensor_parallel.known() && *d.tensor_parallel * a > *d.gpus_per_node) continue;
    best = a;
  }
  if (best <= 1) return std::nullopt;
  return std::pair{best, cp / best};
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  CpCommType cp = read_cp_comm_type(job);
  if (!cp.known || !hierarchical(cp, megatron_lm)) return;
  SettingValue written = read_setting(job, "model.hierarchical_context_parallel_sizes");
  if (!written.node() || !written.node()->is_null()) return;
  Diagnostic diag = make_diagnostic(
      kHierarchicalCpSizesMissing,
      megatron_lm ? std::string("--cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes: Megatron-LM "
                                "asserts it at start-up")
                  : std::string("cp_comm_type a2a+p2p needs hierarchical_context_parallel_sizes: Megatron Bridge "
                                "rejects the config (older releases silently ran without context-parallel "
                                "communication)"),
      primary_span(cp.where));
  const Quantity& cps = context.derived.context_parallel;
  add_notes(diag, {&cps}, nullptr);
  auto sizes = suggested_sizes(context);
  if (sizes) {
    diag.help = fmt::format("set hierarchical_context_parallel_sizes to [{}, {}] (all-to-all within groups of {}, "
                            "point-to-point across {}; the product must be context_parallel_size {})",
                            sizes->first, sizes->second, sizes->first, sizes->second, *cps);
    Fix fix{fmt::format("set hierarchical_context_parallel_sizes to [{}, {}]", sizes->first, sizes->second),
            FixSafety::Unsafe,
            {}};
    // Advice (where to write the list is the user's), re-checked all the same.
    fix.changes.push_back(
        {"model.hierarchical_context_parallel_sizes", fmt::format("[{}, {}]", sizes->first, sizes->second)});
    diag.fixes.push_back(std::move(fix));
  } else {
    diag.help = "set hierarchical_context_parallel_sizes to [a2a size, p2p size] with product context_parallel_size, "
                "or use cp_comm_type p2p or a2a";
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kHierarchicalCpSizesMissing = {
    .code = "MB403",
    .name = "hierarchical-cp-sizes-missing",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "cp_comm_type a2a+p2p needs hierarchical_context_parallel_sizes",
    .doc = R"md(Hierarchical context parallelism (`cp_comm_type: a2a+p2p`) runs all-to-all communication inside
small groups of context-parallel ranks (usually within a node) and ring point-to-point between
the groups. The group sizes come from `hierarchical_context_parallel_sizes`, e.g. `[2, 4]` for
CP = 8: 2-way all-to-all, 4-way ring; their product must be `context_parallel_size`.

Without them, Megatron Bridge's `ConfigContainer.validate()` now stops with
"hierarchical_context_parallel_sizes must be set when cp_comm_type contains 'a2a+p2p'" (older
stacks silently created no hierarchical groups: every rank attended only to its own chunk, with
high throughput and broken training). Megatron-LM's `validate_args` asserts
"--hierarchical-context-parallel-sizes must be set when a2a+p2p is used in cp comm".

The suggested sizes keep the all-to-all level within one node and dividing the heads each
tensor-parallel rank holds.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .good = {.content =
     "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n"},
    .check = check,
    .checks = "MC D4, BR V7, PS 24",
};

}  // namespace mblint
