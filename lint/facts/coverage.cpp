#include "lint/facts/coverage.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "lint/facts/derived.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

constexpr const char* kSupplyRecipe =
    "pass --recipe NAME, or `recipe:` in a `context:` entry of .mblint.yaml; `mblint recipes PATTERN` finds the "
    "name (e.g. `mblint recipes llama3_8b`)";
constexpr const char* kSupplyAllocation =
    "pass --nodes N and --gpus-per-node G, or set them in a `context:` entry of .mblint.yaml";

// The settings every core check needs, by the group that explains them.
enum class Group { Parallel, Shape, Batch };

struct Needed {
  const Quantity* quantity;
  Group group;
};

std::vector<Needed> needed_settings(const Derived& d) {
  std::vector<Needed> out = {
      {&d.tensor_parallel, Group::Parallel},     {&d.pipeline_parallel, Group::Parallel},
      {&d.context_parallel, Group::Parallel},    {&d.expert_parallel, Group::Parallel},
      {&d.num_layers, Group::Shape},             {&d.hidden_size, Group::Shape},
      {&d.num_attention_heads, Group::Shape},    {&d.num_moe_experts, Group::Shape},
      {&d.global_batch_size, Group::Batch},      {&d.micro_batch_size, Group::Batch},
      {&d.seq_length, Group::Batch},
  };
  // Virtual stages matter only with a pipeline (the bubble, the layer split).
  if (!d.pipeline_parallel.known() || *d.pipeline_parallel > 1) out.push_back({&d.virtual_pipeline, Group::Parallel});
  return out;
}

bool bridge_recipe_job(const Job& job) {
  if (job.dialect != Dialect::Bridge || job.config_complete) return false;
  return job.entry == EntryPoint::None || job.entry == EntryPoint::RunRecipe || job.entry == EntryPoint::TrainSh ||
         job.entry == EntryPoint::ConfigFileScript;
}

CoverageGap* find_gap(Coverage& coverage, std::string_view what) {
  for (CoverageGap& gap : coverage.gaps) {
    if (gap.what == what) return &gap;
  }
  return nullptr;
}

CoverageGap& gap_for(Coverage& coverage, CoverageGap gap) {
  if (CoverageGap* found = find_gap(coverage, gap.what)) return *found;
  coverage.gaps.push_back(std::move(gap));
  return coverage.gaps.back();
}

// The recipe the job needs and does not have: why, and where it was named.
CoverageGap recipe_gap(const Job& job) {
  CoverageGap gap{"recipe unknown", "", kSupplyRecipe, {}, {}};
  for (const Unresolved& u : job.unresolved) {
    if (u.what == "recipe") {
      gap.why = u.why;
      gap.where = u.where;
      return gap;
    }
  }
  if (!job.recipe_name.empty()) {
    gap.why = fmt::format("'{}' is not in mblint's catalog", job.recipe_name);
    gap.where = primary_span(job.recipe_where);
  } else if (job.entry == EntryPoint::None) {
    gap.why = "no --recipe given: the file is applied to a recipe mblint does not know";
  } else {
    gap.why = "no --recipe given, and the launch does not name one";
  }
  return gap;
}

// The text a value was written as, when it is an expression mblint could
// not evaluate (`$TP`, `${oc.env:TP}`).
std::string written_as(const Job& job, const Quantity& q) {
  if (q.path.empty()) return {};
  const ConfigValue* node = find_path(job.config, q.path);
  if (node && node->kind == ValueKind::Unknown) return node->text;
  return {};
}

// `$1`, `${2}`, `$@`: the script's positional parameters.
bool positional_parameter(std::string_view text) {
  if (text.starts_with("${")) text.remove_prefix(2);
  else if (text.starts_with("$")) text.remove_prefix(1);
  else return false;
  return !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '@' || text[0] == '*');
}

void add_unknown_value(Coverage& coverage, const Job& job, const Quantity& q) {
  std::string text = written_as(job, q);
  std::string supply = positional_parameter(text)
                           ? fmt::format("give the script's arguments after `--` (mblint check SCRIPT -- ARG...), "
                                         "or pass --set {}=VALUE",
                                         q.path)
                           : fmt::format("give it a literal value, or pass --set {}=VALUE", q.path);
  CoverageGap gap{fmt::format("{} unknown", q.name),
                  text.empty() ? fmt::format("{} is set to a value mblint cannot read", q.name)
                               : fmt::format("{} is `{}`, which is not known here", q.name, text),
                  supply,
                  q.where.value.valid() ? q.where.value : span_for(q), {q.name}};
  coverage.gaps.push_back(std::move(gap));
}

void add_allocation_gap(Coverage& coverage, const Job& job, const Derived& d) {
  if (d.world_size.known()) return;
  CoverageGap gap{"allocation unknown", "", kSupplyAllocation, {}, {"nodes", "GPUs per node"}};
  if (job.kind != InputKind::LaunchScript && job.kind != InputKind::MegatronLmTestConfig &&
      job.kind != InputKind::NemoYaml) {
    gap.why = "no launch script gives the number of nodes and GPUs";
  } else {
    const Quantity& missing = !d.nodes.known() ? d.nodes : d.gpus_per_node;
    gap.why = !missing.how.empty() ? missing.how : fmt::format("the launch does not say how many {}", missing.name);
    gap.where = span_for(missing);
  }
  coverage.gaps.push_back(std::move(gap));
}

void add_setting_gaps(Coverage& coverage, const Job& job, const Derived& d) {
  bool needs_recipe = bridge_recipe_job(job) && !job.recipe;
  for (const Needed& needed : needed_settings(d)) {
    const Quantity& q = *needed.quantity;
    if (q.known()) continue;
    if (span_for(q).valid() && q.where.layer != Layer::Recipe) {
      add_unknown_value(coverage, job, q);  // written, as an expression mblint cannot evaluate
    } else if (needs_recipe) {
      gap_for(coverage, recipe_gap(job)).unknown.push_back(q.name);
    } else if (job.recipe && needed.group == Group::Shape && !job.recipe->dims) {
      gap_for(coverage, CoverageGap{"model shape unknown",
                                    fmt::format("recipe {} builds model {}, whose shape is not in mblint's catalog",
                                                job.recipe->name, job.recipe->model),
                                    "pass the shape with --set model.num_layers=N (and hidden_size, "
                                    "num_attention_heads, num_moe_experts)",
                                    primary_span(job.recipe_where),
                                    {}})
          .unknown.push_back(q.name);
    } else if (job.recipe) {
      gap_for(coverage, CoverageGap{"recipe values unknown",
                                    fmt::format("recipe {} does not fix them (it sets them conditionally, or in "
                                                "code mblint does not read)",
                                                job.recipe->name),
                                    "pass --set KEY=VALUE for each", primary_span(job.recipe_where), {}})
          .unknown.push_back(q.name);
    } else {
      gap_for(coverage, CoverageGap{"settings unknown", "they are not given in anything mblint read",
                                    "write them where mblint can read them, or pass --set KEY=VALUE", {}, {}})
          .unknown.push_back(q.name);
    }
  }
}

}  // namespace

Coverage job_coverage(const Job& job, const Derived& derived) {
  Coverage coverage;
  add_allocation_gap(coverage, job, derived);
  add_setting_gaps(coverage, job, derived);
  // What the builder could not follow stays a gap even when every core
  // setting is known: the command it skipped may change them.
  for (const Unresolved& u : job.unresolved) {
    if (u.what == "recipe" && find_gap(coverage, "recipe unknown")) continue;
    std::string what = fmt::format("{} not followed", u.what);
    if (u.what == "recipe") what = "recipe unknown";
    gap_for(coverage, CoverageGap{what, u.why, u.supply, u.where, {}});
  }
  return coverage;
}

bool is_checked_job(const Job& job) {
  switch (job.kind) {
    case InputKind::BridgeOverrideYaml:
    case InputKind::BridgeDump:
    case InputKind::MegatronLmTestConfig:
    case InputKind::NemoYaml: return true;
    case InputKind::LaunchScript: return job.entry != EntryPoint::None && job.entry != EntryPoint::Unknown;
    case InputKind::NotAConfig: return false;
  }
  return false;
}

JobCoverage coverage_entry(const Job& job, const Derived& derived) {
  JobCoverage entry;
  entry.where = job.launch_span.valid() ? job.launch_span : make_span(job.primary, 0, 0);
  entry.entry = std::string(entry_point_name(job.entry));
  entry.dialect = std::string(dialect_name(job.dialect));
  if (job.recipe) entry.recipe = job.recipe->name;
  entry.coverage = derived.coverage;
  return entry;
}

std::string coverage_labels(const Coverage& coverage) {
  std::vector<std::string> labels;
  for (const CoverageGap& gap : coverage.gaps) {
    if (std::find(labels.begin(), labels.end(), gap.what) == labels.end()) labels.push_back(gap.what);
  }
  return fmt::format("{}", fmt::join(labels, ", "));
}

}  // namespace mblint
