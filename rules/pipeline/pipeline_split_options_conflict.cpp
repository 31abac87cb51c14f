// The ways of splitting layers over pipeline stages exclude each other: an
// explicit layout, uneven first/last stages, and counting the embedding and
// loss as layers.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kPipelineSplitOptionsConflict;

namespace {

struct SplitOptions {
  Quantity first;
  Quantity last;
  Quantity embedding;  // account_for_embedding_in_pipeline_split as 1/0
  Quantity loss;

  std::vector<const Quantity*> uneven() const {
    std::vector<const Quantity*> set;
    for (const Quantity* q : {&first, &last}) {
      if (q->known()) set.push_back(q);
    }
    return set;
  }
  std::vector<const Quantity*> accounted() const {
    std::vector<const Quantity*> set;
    for (const Quantity* q : {&embedding, &loss}) {
      if (q->known() && *q->value == 1) set.push_back(q);
    }
    return set;
  }
};

SplitOptions read_options(const Derived& d) {
  return {d.first_stage_layers, d.last_stage_layers, as_quantity(d.account_for_embedding),
          as_quantity(d.account_for_loss)};
}

std::string names(const std::vector<const Quantity*>& quantities) {
  std::string out;
  for (size_t i = 0; i < quantities.size(); ++i) {
    if (i) out += " and ";
    out += quantities[i]->name;
  }
  return out;
}

const Quantity& latest(const std::vector<const Quantity*>& quantities) {
  const Quantity* best = quantities.front();
  for (const Quantity* q : quantities) {
    if (&most_specific({best, q}) == q) best = q;
  }
  return *best;
}

Diagnostic conflict(std::string message, std::vector<const Quantity*> involved) {
  const Quantity& primary = latest(involved);
  Diagnostic diag = make_diagnostic(kPipelineSplitOptionsConflict, std::move(message), span_for(primary));
  for (const Quantity* q : involved) {
    if (q != &primary) diag.notes.push_back(note_for(*q));
  }
  add_notes(diag, {}, &primary);
  return diag;
}

void push_removal_fixes(Diagnostic& diag, const std::vector<const Quantity*>& removable) {
  for (const Quantity* q : removable) {
    if (q->display == "true") {
      Fix fix;
      fix.description = fmt::format("set {} to false", q->name);
      fix.safety = FixSafety::Unsafe;
      if (auto edit = replace_value(q->where, "false")) fix.edits.push_back(*edit);
      if (!q->path.empty()) fix.changes.push_back(SettingChange{q->path, "false"});  // for the re-check
      diag.fixes.push_back(std::move(fix));
    } else {
      diag.fixes.push_back(set_null_fix(*q));
    }
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  SplitOptions options = read_options(context.derived);
  std::vector<const Quantity*> uneven = options.uneven();
  std::vector<const Quantity*> accounted = options.accounted();
  if (!uneven.empty() && !accounted.empty()) {
    std::vector<const Quantity*> involved = uneven;
    involved.insert(involved.end(), accounted.begin(), accounted.end());
    Diagnostic diag = conflict(fmt::format("{} cannot be combined with {}: Megatron-Core rejects the model config",
                                           names(uneven), names(accounted)),
                               involved);
    diag.help = "choose one way of balancing the stages: explicit first/last stage layer counts, or counting the "
                "embedding and loss as layers";
    push_removal_fixes(diag, involved);
    out.push_back(std::move(diag));
  }
  Layout layout = read_layout(context.job);
  if (!layout.present || !layout.known) return;  // a layout a recipe computes may also be None
  std::vector<const Quantity*> others = uneven;
  others.insert(others.end(), accounted.begin(), accounted.end());
  if (others.empty()) return;
  std::vector<const Quantity*> involved = others;
  involved.push_back(&layout.quantity);
  Diagnostic diag = conflict(fmt::format("pipeline_model_parallel_layout cannot be combined with {}: the layout "
                                         "already places every layer",
                                         names(others)),
                             involved);
  diag.help = fmt::format("remove {} (or the layout)", names(others));
  push_removal_fixes(diag, others);
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kPipelineSplitOptionsConflict = {
    .code = "MB505",
    .name = "pipeline-split-options-conflict",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "an explicit pipeline layout, uneven first/last stages and account_for_* exclude each other",
    .doc = R"md(There are three ways to tell Megatron-Core how to spread the layers over the pipeline stages
when an even split does not fit: an explicit `pipeline_model_parallel_layout`, the layer counts
of the first and last stage (`num_layers_in_first_pipeline_stage`,
`num_layers_in_last_pipeline_stage`), and counting the embedding and the loss as one layer each
(`account_for_embedding_in_pipeline_split`, `account_for_loss_in_pipeline_split`). They cannot
be combined. `TransformerConfig.__post_init__` raises at start-up (Megatron Bridge and
Megatron-LM alike):

* first/last stage layer counts with `account_for_*`: "num_layers_in_first_pipeline_stage and
  num_layers_in_last_pipeline_stage cannot be set at the same time with
  account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split";
* a layout with any of the others: "pipeline_model_parallel_layout cannot be set with other
  pipeline layout arguments".

A stage count of 0 is still "set": only null removes it.)md",
    .bad = {"override.yaml",
     "model:\n  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n"
     "  num_layers_in_first_pipeline_stage: 7\n  num_layers_in_last_pipeline_stage: 7\n"
     "  account_for_loss_in_pipeline_split: true\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: null\n"
     "  num_layers_in_first_pipeline_stage: 7\n  num_layers_in_last_pipeline_stage: 7\n"},
    .check = check,
    .checks = "MC E9, MC E10, BR model layout exclusive",
};

}  // namespace mblint
