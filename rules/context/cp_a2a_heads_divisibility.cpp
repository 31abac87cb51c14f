// All-to-all context parallelism trades the sequence split for a head split:
// each tensor-parallel rank's query and key/value heads are divided among
// the ranks of the all-to-all group.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kCpA2aHeadsDivisibility;

namespace {

// The largest all-to-all group size below `current` that divides both head
// counts (1 when none).
int64_t fitting_a2a_size(const HeadsPerRank& heads, int64_t current) {
  int64_t best = 1;
  for (int64_t a : divisors(gcd64(heads.query, heads.key_value))) {
    if (a < current) best = a;
  }
  return best;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  const Quantity& cp = d.context_parallel;
  if (!splits(cp)) return;
  CpCommType comm = read_cp_comm_type(job);
  if (!comm.known || comm.not_text) return;
  bool a2a = false;
  bool hierarchical = false;
  for (const std::string& type : comm.types) {
    std::string t = normalise_cp_comm_type(type);
    a2a |= t == "a2a";
    hierarchical |= t == "a2a+p2p";
  }
  if (!a2a && !hierarchical) return;
  auto heads = heads_per_rank(context);
  if (!heads) return;
  // The all-to-all level: all of CP for a2a, the first hierarchical size for a2a+p2p.
  int64_t group = *cp;
  IntList levels = read_int_list(job, "model.hierarchical_context_parallel_sizes");
  if (!a2a) {
    if (!levels.known() || levels.values->empty()) return;
    group = levels.values->front();
  }
  if (group <= 1 || (heads->query % group == 0 && heads->key_value % group == 0)) return;
  std::string kind = a2a ? "a2a" : "a2a+p2p";
  std::string level = a2a ? fmt::format("the {} context-parallel ranks", group)
                          : fmt::format("the {} ranks of its all-to-all level", group);
  Diagnostic diag = make_diagnostic(
      kCpA2aHeadsDivisibility,
      fmt::format("cp_comm_type {} splits attention heads across {}, but each tensor-parallel rank holds {} query "
                  "and {} key/value heads: TransformerEngine asserts \"The number of attention heads needs to be "
                  "divisible by CP size!\"",
                  kind, level, heads->query, heads->key_value),
      primary_span(comm.where).valid() ? primary_span(comm.where) : span_for(cp));
  add_notes(diag, {&cp, &d.tensor_parallel, &d.num_attention_heads, &d.num_query_groups}, nullptr);
  if (!a2a) diag.notes.push_back(note_at(levels.name, levels.display, levels.where));
  int64_t fitting = fitting_a2a_size(*heads, group);
  if (a2a && fitting > 1 && *cp % fitting == 0) {
    diag.help = fmt::format("use cp_comm_type p2p, or a2a+p2p with hierarchical_context_parallel_sizes [{}, {}] "
                            "(all-to-all only as far as the key/value heads go)",
                            fitting, *cp / fitting);
  } else {
    diag.help = "use cp_comm_type p2p (ring attention has no head constraint)";
  }
  if (!comm.is_list) {
    if (auto edit = replace_value(comm.where, "p2p")) {
      Fix fix{"set cp_comm_type to p2p", FixSafety::Unsafe, {*edit}};
      fix.changes.push_back({"model.cp_comm_type", "p2p"});  // for the re-check
      diag.fixes.push_back(std::move(fix));
    }
  }
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kCpA2aHeadsDivisibility = {
    .code = "MB406",
    .name = "cp-a2a-heads-divisibility",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "all-to-all context parallelism needs the heads per TP rank divisible by its group size",
    .doc = R"md(With `cp_comm_type: a2a` (Ulysses-style context parallelism) the context-parallel ranks swap
their sequence shards for head shards before attention: every rank then attends over the whole
sequence for `heads / CP` of the heads. The heads in question are those one tensor-parallel rank
holds: `num_attention_heads / TP` query heads and `num_query_groups / TP` key/value heads (one
replicated key/value head when there are fewer groups than TP ranks). With `a2a+p2p` the
all-to-all level is the first of `hierarchical_context_parallel_sizes`.

TransformerEngine's context-parallel attention asserts "The number of attention heads needs to be
divisible by CP size!" when either count is not divisible, at the first step. Grouped-query
models hit it first through their few key/value heads: pure a2a is limited to CP <= key/value
heads per rank; use `a2a+p2p` for larger CP.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  context_parallel_size: 4\n  cp_comm_type: a2a\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 2 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n  context_parallel_size: 2\n  cp_comm_type: a2a\n"},
    .check = check,
    .checks = "MC D3, PS 28",
};

}  // namespace mblint
