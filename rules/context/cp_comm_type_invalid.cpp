// cp_comm_type is one context-parallel communication type for every layer,
// or a list with one type per transformer layer.
#include "rules/support/parallel_support.h"

namespace mblint {

extern const RuleInfo kCpCommTypeInvalid;

namespace {

bool known_type(std::string_view type) {
  std::string t = normalise_cp_comm_type(type);
  return t == "p2p" || t == "a2a" || t == "allgather" || t == "a2a+p2p";
}

void report_length(const RuleContext& context, const CpCommType& cp, std::vector<Diagnostic>& out) {
  const Quantity& layers = context.derived.num_layers;
  const Quantity& cps = context.derived.context_parallel;
  if (!layers.known() || static_cast<int64_t>(cp.types.size()) == *layers) return;
  Diagnostic diag = make_diagnostic(
      kCpCommTypeInvalid,
      fmt::format("cp_comm_type lists {} communication types but the model has {} layers: a list needs one entry per "
                  "transformer layer",
                  cp.types.size(), *layers),
      primary_span(cp.where));
  add_notes(diag, {&layers, &cps}, nullptr);
  bool uniform = std::all_of(cp.types.begin(), cp.types.end(), [&](const std::string& t) { return t == cp.types[0]; });
  diag.help = uniform && !cp.types.empty()
                  ? fmt::format("write cp_comm_type as the single string '{}' for every layer", cp.types[0])
                  : fmt::format("give exactly {} entries, or a single string for every layer", *layers);
  if (uniform && !cp.types.empty()) {
    if (auto edit = replace_value(cp.where, cp.types[0])) {
      Fix fix{fmt::format("set cp_comm_type to {}", cp.types[0]), FixSafety::Safe, {*edit}};
      fix.changes.push_back({"model.cp_comm_type", cp.types[0]});  // for the re-check
      diag.fixes.push_back(std::move(fix));
    }
  }
  out.push_back(std::move(diag));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& cps = context.derived.context_parallel;
  if (!splits(cps)) return;  // only read with context parallelism
  CpCommType cp = read_cp_comm_type(context.job);
  if (!cp.known || cp.null) return;
  if (cp.not_text) {
    report(out,
           make_diagnostic(kCpCommTypeInvalid,
                           fmt::format("cp_comm_type {} is neither a string nor a list of strings", cp.display),
                           primary_span(cp.where)),
           "use p2p, a2a, allgather or a2a+p2p, or a list with one of them per layer");
    return;
  }
  for (size_t i = 0; i < cp.types.size(); ++i) {
    if (known_type(cp.types[i])) continue;
    Span where = i < cp.type_where.size() ? primary_span(cp.type_where[i]) : primary_span(cp.where);
    Diagnostic diag = make_diagnostic(
        kCpCommTypeInvalid,
        fmt::format("'{}' is not a context-parallel communication type: TransformerEngine accepts p2p, a2a, "
                    "allgather and a2a+p2p",
                    cp.types[i]),
        where.valid() ? where : primary_span(cp.where));
    add_notes(diag, {&cps}, nullptr);
    report(out, std::move(diag), "use p2p (the default), a2a, allgather or a2a+p2p");
    return;
  }
  if (cp.is_list) report_length(context, cp, out);
}

}  // namespace

extern const RuleInfo kCpCommTypeInvalid = {
    .code = "MB405",
    .name = "cp-comm-type-invalid",
    .group = RuleGroup::Context,
    .severity = Severity::Error,
    .summary = "cp_comm_type must be a known type, or a list with one type per layer",
    .doc = R"md(`model.cp_comm_type` (Megatron-LM `--cp-comm-type`) chooses how the context-parallel ranks
exchange keys and values: `p2p` (ring, the default), `a2a` (all-to-all over heads), `allgather`,
or `a2a+p2p` (hierarchical). It is either one string for every layer or a list with exactly one
entry per transformer layer.

With context parallelism (CP > 1), Megatron Bridge's `ConfigContainer.validate()` asserts "Length of
cp_comm_type (n) must equal num_layers (l)." and "cp_comm_type must be a str or list of str";
Megatron-Core's `TransformerConfig` asserts the same length ("should equal to the total number of
transformer layers"). An unknown type passes the config and fails in TransformerEngine's
context-parallel attention at the first step ("Unsupported communication type"). Without context
parallelism the setting is not read.)md",
    .bad = {"override.yaml",
     "model:\n  context_parallel_size: 2\n  cp_comm_type: [p2p, p2p]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "model:\n  context_parallel_size: 2\n  cp_comm_type: p2p\n"},
    .check = check,
    .checks = "MC D6, BR V6",
};

}  // namespace mblint
