// train.rampup_batch_size = [start, increment, samples]: grows the global
// batch from `start` by `increment` over `samples` samples. Megatron-Core
// checked it up to 0.17 and ignores it from 0.18; Megatron Bridge refuses it
// with sample- or epoch-based training.
#include "rules/support/pipeline_support.h"

namespace mblint {

extern const RuleInfo kBatchSizeRampup;

namespace {

constexpr Version kRampupRemoved{0, 18, 0};

struct Rampup {
  const ConfigValue* node = nullptr;
  Quantity list;  // for locations: display = the list as written
  std::vector<std::optional<int64_t>> items;
};

std::optional<Rampup> read_rampup(const Job& job) {
  const ConfigValue* node = config_node(job, "train.rampup_batch_size");
  if (!node || node->is_null() || node->is_unknown()) return std::nullopt;
  Rampup r;
  r.node = node;
  r.list = quantity_at("train.rampup_batch_size", std::nullopt, node->where);
  r.list.display = to_display(*node);
  if (node->is_list()) {
    for (const ConfigValue& item : node->items) r.items.push_back(as_int(&item));
  }
  return r;
}

Diagnostic make(const Rampup& r, std::string message, std::string help) {
  Diagnostic diag = make_diagnostic(kBatchSizeRampup, std::move(message), span_for(r.list));
  add_notes(diag, {}, &r.list);
  if (r.list.where.layer == Layer::Recipe) diag.notes.push_back(note_for(r.list));
  diag.help = std::move(help);
  return diag;
}

// Megatron Bridge's TrainingConfig.finalize, whatever the Megatron-Core version.
bool check_training_mode(const RuleContext& context, const Rampup& r, std::vector<Diagnostic>& out) {
  if (context.job.dialect != Dialect::Bridge) return false;
  for (std::string_view path : {"train.train_samples", "train.num_epochs"}) {
    const ConfigValue* mode = config_node(context.job, path);
    if (!mode || mode->is_null() || mode->is_unknown()) continue;
    bool samples = path == "train.train_samples";
    Quantity q = quantity_at(path, as_int(mode), mode->where);
    q.display = to_display(*mode);
    Diagnostic diag = make(r,
                           fmt::format("rampup_batch_size is not supported with {}-based training: Megatron Bridge "
                                       "rejects it",
                                       samples ? "sample" : "epoch"),
                           fmt::format("remove rampup_batch_size (set it to null), or train by train_iters instead of "
                                       "{}",
                                       q.name));
    diag.notes.push_back(note_for(q));
    out.push_back(std::move(diag));
    return true;
  }
  return false;
}

// Every batch size the ramp passes through must split into microbatches.
std::optional<int64_t> first_unsplittable(int64_t start, int64_t increment, int64_t end, int64_t step) {
  for (int64_t b = start, n = 0; b <= end && n < 100000; b += increment, ++n) {
    if (b % step != 0) return b;
  }
  return std::nullopt;
}

void check_values(const RuleContext& context, const Rampup& r, std::vector<Diagnostic>& out) {
  const Derived& d = context.derived;
  std::string help_format = "write rampup_batch_size as [start batch size, batch size increment, ramp-up samples]";
  if (!r.node->is_list() || r.items.size() != 3) {
    out.push_back(make(r, fmt::format("rampup_batch_size {} must have exactly 3 values", r.list.display), help_format));
    return;
  }
  if (!r.items[0] || !r.items[1] || !r.items[2]) return;
  int64_t start = *r.items[0], increment = *r.items[1], samples = *r.items[2];
  if (start <= 0 || increment <= 0 || samples < 0) {
    out.push_back(make(r,
                       fmt::format("rampup_batch_size {}: the start batch size and the increment must be positive "
                                   "and the ramp-up samples non-negative",
                                   r.list.display),
                       help_format));
    return;
  }
  const Quantity& gbs = d.global_batch_size;
  if (!gbs.known()) return;
  int64_t interval = *gbs - start;
  if (interval < 0 || interval % increment != 0) {
    Diagnostic diag = make(r,
                           interval < 0 ? fmt::format("rampup_batch_size starts at {}, above global_batch_size {}",
                                                      start, *gbs)
                                        : fmt::format("global_batch_size {} - start batch size {} = {} is not a "
                                                      "multiple of the increment {}",
                                                      *gbs, start, interval, increment),
                           "choose a start batch size and increment that reach global_batch_size exactly");
    add_notes(diag, {&gbs}, nullptr);
    out.push_back(std::move(diag));
    return;
  }
  bool decrease = config_bool(context.job, "train.decrease_batch_size_if_needed").value.value_or(false);
  if (decrease || !d.micro_batch_size.known() || !d.batch_data_parallel.known()) return;
  int64_t step = *d.micro_batch_size * *d.batch_data_parallel;
  if (auto bad = first_unsplittable(start, increment, *gbs, step)) {
    Diagnostic diag = make(r,
                           fmt::format("the ramp passes through global batch {}, not divisible by micro_batch_size {} "
                                       "x data-parallel size {} = {}: the run stops when it gets there",
                                       *bad, *d.micro_batch_size, *d.batch_data_parallel, step),
                           fmt::format("use a start batch size and increment that are multiples of {}", step));
    out.push_back(std::move(diag));
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  std::optional<Rampup> r = read_rampup(context.job);
  if (!r) return;
  if (check_training_mode(context, *r, out)) return;
  const Version& mcore = context.job.versions.megatron_core;
  if (mcore >= kRampupRemoved) {
    Diagnostic diag = make(*r,
                           fmt::format("rampup_batch_size is ignored by Megatron-Core {}: batch-size ramp-up was "
                                       "removed in 0.18, the run uses global_batch_size from the first step",
                                       to_string(mcore)),
                           context.job.dialect == Dialect::MegatronLM
                               ? "use --step-batch-size-schedule for a growing batch, or drop --rampup-batch-size"
                               : "remove rampup_batch_size (set it to null); Megatron Bridge has no replacement");
    diag.severity = Severity::Warning;
    diag.notes.push_back(Note{fmt::format("Megatron-Core version {}{}", to_string(mcore),
                                          context.job.versions.megatron_core_given ? "" : " (mblint's default; "
                                                                                            "set --megatron-core-version)"),
                              {}});
    Fix drop{"set rampup_batch_size to null", FixSafety::Safe, {}};
    if (auto edit = replace_value(r->list.where, "null")) drop.edits.push_back(*edit);
    if (!r->list.path.empty()) drop.changes.push_back(SettingChange{r->list.path, "null"});  // for the re-check
    diag.fixes.push_back(std::move(drop));
    out.push_back(std::move(diag));
    return;
  }
  if (context.job.dialect == Dialect::MegatronLM) {
    const ConfigValue* iters = config_node(context.job, "train.train_iters");
    if (iters && as_int(iters).value_or(0) > 0) {
      Quantity q = quantity_at("train.train_iters", as_int(iters), iters->where);
      Diagnostic diag = make(*r,
                             "Megatron-LM allows batch-size ramp-up only with sample-based training, but "
                             "--train-iters is set",
                             "train by --train-samples (with --lr-decay-samples), or drop --rampup-batch-size");
      diag.notes.push_back(note_for(q));
      out.push_back(std::move(diag));
      return;
    }
  }
  check_values(context, *r, out);
}

}  // namespace

extern const RuleInfo kBatchSizeRampup = {
    .code = "MB606",
    .name = "batch-size-rampup",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "a batch-size ramp-up that fails, or that the Megatron-Core version ignores",
    .doc = R"md(`train.rampup_batch_size: [start, increment, samples]` (Megatron-LM `--rampup-batch-size`)
grows the global batch from `start` by `increment` until `samples` samples are consumed.

* **Megatron-Core up to 0.17** checks it when the microbatch calculator is built: three
  values, a positive start and increment, `global_batch_size - start` non-negative and a multiple
  of the increment ("expected global batch size interval (...) to be divisible by global batch
  size increment (...)"); and every batch on the way must split into `micro_batch_size x DP`
  (checked when the ramp reaches it, mid-run). Megatron-LM also refuses it with iteration-based
  training ("expected no batch-size rampup for iteration-based training").
* **Megatron-Core 0.18 and later** no longer ramp: the option is deprecated and ignored (a
  warning in the log), so the run trains with the full `global_batch_size` from step one, which
  changes the schedule the config was written for. Megatron-LM offers
  `--step-batch-size-schedule` instead.
* **Megatron Bridge** (any version) rejects ramp-up with sample- or epoch-based training
  ("Batch size rampup not supported with sample-based training yet").

mblint assumes the newest Megatron-Core unless `--megatron-core-version` says otherwise.)md",
    .bad = {"override.yaml", "train:\n  rampup_batch_size: [16, 16, 100000]\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  rampup_batch_size: null\n"},
    .check = check,
    .checks = "MC F10, BR sched rampup",
};

}  // namespace mblint
