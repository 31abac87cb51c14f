#include "rules/support/batch_support.h"

#include "lint/model/schema.h"

namespace mblint {

namespace {

void fill_from(const ConfigValue& node, Field& field) {
  field.quantity.where = node.where;
  if (node.is_null()) {
    field.state = Field::Unset;
    field.quantity.display = "null";
    return;
  }
  if (node.is_unknown()) {
    field.state = Field::Unknown;
    return;
  }
  field.state = Field::Set;
  field.number = as_number(&node);
  field.quantity.value = as_int(&node);
  field.quantity.display = to_display(node);
}

// What NVIDIA's recipes leave alone, read from Megatron Bridge's recipe
// sources at the catalog's commit (067f987): every recipe sets
// train.train_iters (its value varies and the catalog does not record it),
// and none sets the fields below, so a recipe-based job that does not write
// them has the dataclass defaults.
constexpr std::string_view kUnsetInEveryRecipe[] = {
    "train.train_samples",          "train.num_epochs",          "train.rampup_batch_size",
    "train.step_batch_size_schedule", "scheduler.lr_decay_samples", "scheduler.lr_warmup_samples",
    "scheduler.lr_wsd_decay_samples", "scheduler.lr_warmup_fraction", "scheduler.max_steps",
    "validation.eval_global_batch_size", "validation.eval_micro_batch_size", "dist.eval_context_parallel_size",
};

bool unset_in_every_recipe(std::string_view path) {
  for (std::string_view p : kUnsetInEveryRecipe) {
    if (p == path) return true;
  }
  return false;
}

Provenance recipe_origin(const Job& job, std::string origin) {
  Provenance where = job.recipe_where;
  where.layer = Layer::Recipe;
  where.origin = std::move(origin);
  return where;
}

}  // namespace

Field read_field(const Job& job, std::string_view path) {
  Field field;
  field.quantity = quantity_at(path, std::nullopt, Provenance{});
  if (const ConfigValue* node = config_node(job, path)) {
    fill_from(*node, field);
    return field;
  }
  if (job.dialect == Dialect::MegatronLM) {
    // The command line is the whole config: a flag not given has argparse's
    // default (None, or 0 for the warm-up counts).
    field.state = Field::Unset;
    field.quantity.display = "None";
    field.quantity.defaulted = true;
    return field;
  }
  if (job.recipe && !job.config_complete) {
    if (path == "train.train_iters") {
      field.state = Field::Set;  // to a value the catalog does not record
      field.quantity.where = recipe_origin(job, fmt::format("recipe {} sets train_iters", job.recipe_name));
    } else if (unset_in_every_recipe(path)) {
      field.state = Field::Unset;
      field.quantity.display = "None";
      field.quantity.defaulted = true;
      field.quantity.where = recipe_origin(job, fmt::format("recipe {} leaves {} unset", job.recipe_name,
                                                             field.quantity.name));
    }
    return field;
  }
  if (!job.config_complete) return field;  // unknown: the base config may set it
  size_t dot = path.find('.');
  if (dot == std::string_view::npos) return field;
  const SchemaField* schema = find_schema_field(path.substr(0, dot), path.substr(dot + 1));
  if (!schema) return field;
  std::optional<ConfigValue> value = literal_default(*schema);
  if (!value) return field;
  value->where.layer = Layer::SchemaDefault;
  fill_from(*value, field);
  field.quantity.defaulted = true;
  return field;
}

std::string format_number(double value) {
  if (value == static_cast<double>(static_cast<int64_t>(value)) && value < 1e15 && value > -1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return fmt::format("{:g}", value);
}

TrainingUnit training_unit(const Job& job) {
  Field samples = read_field(job, "train.train_samples");
  if (samples.set()) return TrainingUnit::Samples;
  if (samples.unset()) return TrainingUnit::Iterations;
  return TrainingUnit::Unknown;
}

namespace {

// lr_warmup_fraction, when set, makes the warm-up a share of the decay; true
// when it is unset, so the explicit warm-up count decides.
bool warmup_from_fraction(const Field& fraction, SchedulerSteps& steps) {
  if (fraction.set() && fraction.number && steps.decay) {
    steps.warmup = *fraction.number * *steps.decay;
    steps.warmup_how = fmt::format("lr_warmup_fraction {} x {}", format_number(*fraction.number),
                                   format_number(*steps.decay));
    steps.warmup_inputs = {fraction.quantity};
  }
  return fraction.unset();
}

void iteration_steps(const RuleContext& context, SchedulerSteps& steps) {
  const Job& job = context.job;
  Field iters = read_field(job, "train.train_iters");
  Field max_steps = read_field(job, "scheduler.max_steps");
  Field decay_iters = read_field(job, "scheduler.lr_decay_iters");
  Field warmup_iters = read_field(job, "scheduler.lr_warmup_iters");
  Field fraction = read_field(job, "scheduler.lr_warmup_fraction");
  const Quantity& gbs = context.derived.global_batch_size;
  if (!gbs.known()) return;
  // The iteration count the decay spans: max_steps, else lr_decay_iters,
  // else train_iters.
  const Field* source = max_steps.set()                          ? &max_steps
                        : max_steps.unset() && decay_iters.set() ? &decay_iters
                                                                 : nullptr;
  if (!source && decay_iters.unset() && (max_steps.unset())) source = &iters;
  if (source && source->set() && source->number) {
    steps.decay = *source->number * static_cast<double>(*gbs);
    steps.decay_how = fmt::format("{}{} {} x global batch {}",
                                  source == &iters ? "lr_decay_iters unset: " : "", source->quantity.name,
                                  format_number(*source->number), *gbs);
    steps.decay_inputs = {source->quantity, gbs};
  }
  if (warmup_from_fraction(fraction, steps)) {
    if (auto warmup = warmup_iters.value_or_unset(0)) {
      steps.warmup = *warmup * static_cast<double>(*gbs);
      steps.warmup_how = fmt::format("lr_warmup_iters {} x global batch {}", format_number(*warmup), *gbs);
      steps.warmup_inputs = {warmup_iters.quantity, gbs};
    }
  }
}

void sample_steps(const RuleContext& context, SchedulerSteps& steps) {
  const Job& job = context.job;
  Field samples = read_field(job, "train.train_samples");
  Field decay_samples = read_field(job, "scheduler.lr_decay_samples");
  Field warmup_samples = read_field(job, "scheduler.lr_warmup_samples");
  Field fraction = read_field(job, "scheduler.lr_warmup_fraction");
  const Field* source = decay_samples.set() ? &decay_samples : decay_samples.unset() ? &samples : nullptr;
  if (source && source->number) {
    steps.decay = *source->number;
    steps.decay_how = fmt::format("{}{} {}", source == &samples ? "lr_decay_samples unset: " : "",
                                  source->quantity.name, format_number(*source->number));
    steps.decay_inputs = {source->quantity};
  }
  if (warmup_from_fraction(fraction, steps)) {
    if (auto warmup = warmup_samples.value_or_unset(0)) {
      steps.warmup = *warmup;
      steps.warmup_how = fmt::format("lr_warmup_samples {}", format_number(*warmup));
      steps.warmup_inputs = {warmup_samples.quantity};
    }
  }
}

}  // namespace

SchedulerSteps scheduler_steps(const RuleContext& context) {
  SchedulerSteps steps;
  steps.unit = training_unit(context.job);
  if (steps.unit == TrainingUnit::Iterations) iteration_steps(context, steps);
  if (steps.unit == TrainingUnit::Samples) sample_steps(context, steps);
  return steps;
}

}  // namespace mblint
