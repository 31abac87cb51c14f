// hierarchical_context_parallel_sizes factor the context-parallel group into
// levels: their product must be context_parallel_size.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kHierarchicalCpSizesProduct;

namespace {

// Two-level sizes with product `cp`, keeping the first level when it divides.
std::vector<int64_t> fixed_sizes(const std::vector<int64_t>& sizes, int64_t cp) {
  if (sizes.empty() || cp <= 0) return {};
  int64_t first = sizes.front();
  if (first > 0 && cp % first == 0 && first < cp) return {first, cp / first};
  for (int64_t a : divisors(cp)) {
    if (a > 1 && a < cp && a <= 8) first = a;
  }
  if (first <= 1 || first >= cp || cp % first != 0) return {};
  return {first, cp / first};
}

std::string list_text(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  IntList sizes = read_int_list(job, "model.hierarchical_context_parallel_sizes");
  if (!sizes.known() || sizes.values->empty()) return;
  const Quantity& cp = context.derived.context_parallel;
  if (!cp.known()) return;
  int64_t product = 1;
  for (int64_t v : *sizes.values) product *= v;
  if (product == *cp) return;
  Quantity list;
  list.name = "hierarchical_context_parallel_sizes";
  list.path = sizes.path;
  list.where = sizes.where;
  list.value = product;
  list.display = sizes.display;
  Diagnostic diag = finding(
      kHierarchicalCpSizesProduct,
      fmt::format("the product of hierarchical_context_parallel_sizes {} is {}, but context_parallel_size is {}",
                  sizes.display, product, *cp),
      {&list, &cp});
  std::vector<int64_t> fixed = fixed_sizes(*sizes.values, *cp);
  if (!fixed.empty()) {
    diag.help = fmt::format("use hierarchical_context_parallel_sizes {}, or context_parallel_size {}", list_text(fixed),
                            product);
    Fix fix{fmt::format("set hierarchical_context_parallel_sizes to {}", list_text(fixed)), FixSafety::Unsafe, {}};
    if (auto edit = replace_value(sizes.where, list_text(fixed))) fix.edits.push_back(*edit);
    fix.changes.push_back(SettingChange{sizes.path, list_text(fixed)});  // for the re-check
    diag.fixes.push_back(std::move(fix));
  } else {
    diag.help = fmt::format("make the sizes multiply to {}, or use context_parallel_size {}", *cp, product);
  }
  diag.fixes.push_back(set_value_fix(cp, product));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kHierarchicalCpSizesProduct = {
    .code = "MB404",
    .name = "hierarchical-cp-sizes-product",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "the product of hierarchical_context_parallel_sizes must equal context_parallel_size",
    .doc = R"md(`hierarchical_context_parallel_sizes` (Megatron-LM `--hierarchical-context-parallel-sizes`) splits
the context-parallel group into nested levels for `cp_comm_type: a2a+p2p`: `[2, 4]` is 2-way
all-to-all inside 4-way point-to-point, CP = 8. The levels must cover the group exactly.

Megatron Bridge's `ConfigContainer.validate()` asserts "Product of hierarchical_context_parallel_sizes
[...] (=n) must equal context_parallel_size (=c)." whenever the sizes are set (whatever
`cp_comm_type` is); Megatron-LM's `validate_args` and Megatron-Core's `initialize_model_parallel`
assert the same. The job fails at start-up. A common cause: changing `context_parallel_size` with
`-cp` or an override while the sizes stay in the YAML.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 4]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 4"},
    .good = {.content =
     "model:\n  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n  hierarchical_context_parallel_sizes: [2, 2]\n"},
    .check = check,
    .checks = "MC A8, BR V8, PS 25",
};

}  // namespace mblint
