// A pipeline layout string Megatron-Core cannot read: wrong characters, no
// embedding first or loss last, decoder layers after the MTP layers.
#include "rules/support/pipeline_support.h"

#include <algorithm>

namespace mblint {

extern const RuleInfo kPipelineLayoutInvalid;

namespace {

// What is wrong with the layout on its own, first problem first (the order
// Megatron-Core checks in).
std::vector<std::string> layout_problems(const ExpandedLayout& layout) {
  std::vector<std::string> problems;
  if (!layout.error.empty()) {
    problems.push_back(layout.error);
    return problems;  // nothing else is read past an invalid character
  }
  std::string flat;
  for (const std::string& stage : layout.stages) flat += stage;
  if (flat.empty() || flat.front() != kEmbedding) {
    problems.push_back(flat.empty() ? "the layout places no layers at all; it must start with the embedding E"
                                    : fmt::format("the first layer must be the embedding E, not '{}'", flat.front()));
  }
  if (!flat.empty() && flat.back() != kLoss) {
    problems.push_back(fmt::format("the last layer must be the loss L, not '{}'", flat.back()));
  }
  for (auto [code, what] : {std::pair{kEmbedding, "embedding E"}, std::pair{kLoss, "loss L"}}) {
    auto n = std::count(flat.begin(), flat.end(), code);
    if (n > 1) problems.push_back(fmt::format("the {} appears {} times; it must appear exactly once", what, n));
  }
  size_t first_mtp = flat.find(kMtp);
  if (first_mtp != std::string::npos && flat.find(kDecoder, first_mtp) != std::string::npos) {
    problems.push_back("transformer layers (t) follow an MTP layer (m); decoder layers must come before the MTP "
                       "layers");
  }
  if (flat.find(kEncoder) != std::string::npos) {
    problems.push_back("encoder layers are not supported in a pipeline layout");
  }
  return problems;
}

// A valid layout for this model: the written layout's stage count when it
// parsed, else PP x VPP stages.
std::string example_for(const RuleContext& context, const Layout& layout) {
  const Derived& d = context.derived;
  if (!d.num_layers.known()) return "";
  int64_t stages = static_cast<int64_t>(layout.expanded.stages.size());
  if (!layout.expanded.error.empty() || stages <= 1) {
    if (!d.pipeline_parallel.known()) return "";
    stages = *d.pipeline_parallel * std::max<int64_t>(1, d.virtual_pipeline.value.value_or(1));
  }
  Quantity mtp = config_int(context.job, "model.mtp_num_layers");
  auto example = example_layout(*d.num_layers, stages, mtp.value.value_or(0));
  if (!example) return "";
  return fmt::format(", e.g. \"{}\" for {} layers over {} stages", *example, *d.num_layers, stages);
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  Layout layout = read_layout(context.job);
  if (!layout.present || !layout.known) return;
  std::vector<std::string> problems = layout_problems(layout.expanded);
  if (problems.empty()) return;
  Diagnostic diag = make_diagnostic(kPipelineLayoutInvalid,
                                    fmt::format("pipeline_model_parallel_layout is invalid: {}", problems.front()),
                                    span_for(layout.quantity));
  for (size_t i = 1; i < problems.size(); ++i) diag.notes.push_back(Note{"also: " + problems[i], {}});
  if (layout.quantity.where.layer == Layer::Recipe) diag.notes.push_back(note_for(layout.quantity));
  report(out, std::move(diag),
         "write E and the first stage's layers, `|` between stages, `(...)*n` or `t*n` to repeat, and end the "
         "last stage with L" +
             example_for(context, layout));
}

}  // namespace

extern const RuleInfo kPipelineLayoutInvalid = {
    .code = "MB503",
    .name = "pipeline-layout-invalid",
    .group = RuleGroup::Pipeline,
    .severity = Severity::Error,
    .summary = "the pipeline layout string is not one Megatron-Core can read",
    .doc = R"md(`pipeline_model_parallel_layout` places every layer on a pipeline stage explicitly: `E` is the
embedding, `t` a transformer layer, `m` a multi-token-prediction layer, `L` the loss, `|`
separates stages (in layer order: all pipeline ranks' first virtual stages, then their second
ones, ...). `(...)*n` and `x*n` repeat, commas are cosmetic: `"Et*3|(tttt|)*6tmL"`.

Megatron-Core parses it when the model config is finalized (`PipelineParallelLayerLayout`) and
raises at start-up for a character outside `E t m L |` after the repetitions are unrolled
("Invalid layer character"), for a first layer that is not `E` or a last layer that is not `L`
("The first layer must be embedding", "The last layer must be loss"), for `E` or `L` given
more than once ("Embedding must be specified exactly once"), and for transformer layers after an
MTP layer ("decoder layers must be placed before MTP layers"). Only one level of parentheses
is unrolled: `((t|)*2)*3` leaves a parenthesis behind. The layout written as a list of lists
(`[["embedding", "decoder"], ...]`) is checked the same way; encoder layers are not supported.

How the layout fits the rest of the config (stage count, layer counts, MTP placement) is
`pipeline-layout-mismatch`.)md",
    .bad = {"override.yaml",
     "model:\n  virtual_pipeline_model_parallel_size: null\n  pipeline_model_parallel_layout: \"Et*20|t*20|t*20|t*20\"\n",
     "override.yaml --recipe llama3_70b_pretrain_32gpu_h100_bf16_config --nodes 4 --gpus-per-node 8"},
    .good = {.content =
     "model:\n  virtual_pipeline_model_parallel_size: null\n  pipeline_model_parallel_layout: \"Et*20|t*20|t*20|t*20L\"\n"},
    .check = check,
    .checks = "MC E12",
};

}  // namespace mblint
