// train.step_batch_size_schedule ("0:768 250B:1536 ..."): a global batch that
// steps up at token thresholds. Megatron-LM >= 0.18 reads it; Megatron
// Bridge does not pass it on.
#include "rules/support/batch_support.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <variant>

namespace mblint {

extern const RuleInfo kStepBatchSizeSchedule;

namespace {

constexpr Version kScheduleAdded{0, 18, 0};

struct Entry {
  std::string text;
  int64_t threshold = 0;  // in samples once divided by the sequence length
  int64_t batch = 0;
};

// Megatron-Core's _parse_numeric_value: a number with an optional K/M/B/T
// suffix, int(float(x) * multiplier).
std::optional<int64_t> parse_number(std::string text) {
  std::string upper;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  double multiplier = 1;
  if (!upper.empty()) {
    switch (upper.back()) {
      case 'T': multiplier = 1e12; break;
      case 'B': multiplier = 1e9; break;
      case 'M': multiplier = 1e6; break;
      case 'K': multiplier = 1e3; break;
      default: break;
    }
    if (multiplier != 1) upper.pop_back();
  }
  if (upper.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(upper.c_str(), &end);
  if (end != upper.c_str() + upper.size() || !std::isfinite(value) || std::fabs(value * multiplier) > 9e18) {
    return std::nullopt;
  }
  return static_cast<int64_t>(value * multiplier);
}

// Entries or the first problem ("entry \"x\" has no ':'").
std::variant<std::vector<Entry>, std::string> parse_schedule(const std::string& text, std::optional<int64_t> seq) {
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::vector<Entry> entries;
  size_t i = 0;
  while (i < spaced.size()) {
    while (i < spaced.size() && std::isspace(static_cast<unsigned char>(spaced[i]))) ++i;
    size_t start = i;
    while (i < spaced.size() && !std::isspace(static_cast<unsigned char>(spaced[i]))) ++i;
    if (start == i) break;
    Entry entry;
    entry.text = spaced.substr(start, i - start);
    size_t colon = entry.text.find(':');
    if (colon == std::string::npos) {
      return fmt::format("entry \"{}\" is not THRESHOLD:BATCH_SIZE", entry.text);
    }
    auto threshold = parse_number(entry.text.substr(0, colon));
    auto batch = parse_number(entry.text.substr(colon + 1));
    if (!threshold || !batch) return fmt::format("entry \"{}\" is not a number pair", entry.text);
    entry.threshold = seq && *seq > 0 ? *threshold / *seq : *threshold;
    entry.batch = *batch;
    entries.push_back(std::move(entry));
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.threshold < b.threshold; });
  return entries;
}

// The schedule's own rules (_validate_schedule), first failure only.
std::string schedule_problem(const std::vector<Entry>& entries) {
  if (entries.empty()) return "the schedule has no entries";
  if (entries.front().threshold != 0) {
    return fmt::format("its first threshold is {} samples, not 0 (entry \"{}\")", entries.front().threshold,
                       entries.front().text);
  }
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].threshold == entries[i - 1].threshold) {
      return fmt::format("entries \"{}\" and \"{}\" have the same threshold ({} samples)", entries[i - 1].text,
                         entries[i].text, entries[i].threshold);
    }
  }
  for (const Entry& e : entries) {
    if (e.batch <= 0) return fmt::format("entry \"{}\" has batch size {}", e.text, e.batch);
  }
  return "";
}

Diagnostic make(const Quantity& schedule, std::string message, std::string help) {
  Diagnostic diag = finding_at(kStepBatchSizeSchedule, std::move(message), schedule, {});
  diag.help = std::move(help);
  return diag;
}

void check_megatron_lm(const RuleContext& context, const Quantity& schedule, const std::string& text,
                       std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  // Before 0.18 argparse rejects the flag itself: unknown-flag reports it.
  if (job.versions.megatron_core < kScheduleAdded) return;
  const ConfigValue* gbs = config_node(job, "train.global_batch_size");
  if (gbs && gbs->where.layer != Layer::Rewrite) {
    Diagnostic diag = make(schedule, "--step-batch-size-schedule and --global-batch-size are both given: Megatron-LM "
                                     "rejects the pair",
                           "drop --global-batch-size: the schedule's last batch size is the global batch");
    diag.notes.push_back(note_for(d.global_batch_size));
    out.push_back(std::move(diag));
    return;
  }
  Setting decrease = config_bool(job, "train.decrease_batch_size_if_needed");
  if (decrease.value.value_or(false)) {
    Diagnostic diag = make(schedule, "--step-batch-size-schedule cannot be combined with "
                                     "--decrease-batch-size-if-needed",
                           "drop --decrease-batch-size-if-needed and give batch sizes that split evenly");
    diag.notes.push_back(note_for(decrease));
    out.push_back(std::move(diag));
    return;
  }
  auto parsed = parse_schedule(text, d.seq_length.value);
  if (auto* problem = std::get_if<std::string>(&parsed)) {
    out.push_back(make(schedule, "--step-batch-size-schedule cannot be parsed: " + *problem,
                       "write it as \"0:768 250B:1536 500B:3072\": token thresholds (K/M/B/T suffixes allowed) and "
                       "batch sizes"));
    return;
  }
  const auto& entries = std::get<std::vector<Entry>>(parsed);
  bool thresholds_known = d.seq_length.known();
  std::string problem = schedule_problem(entries);
  if (!problem.empty() && (thresholds_known || problem.find("batch size") != std::string::npos)) {
    out.push_back(make(schedule, "--step-batch-size-schedule is invalid: " + problem,
                       "start at threshold 0, make the thresholds strictly increasing (after dividing by "
                       "--seq-length), and use positive batch sizes"));
    return;
  }
  if (!d.micro_batch_size.known() || !d.batch_data_parallel.known()) return;
  int64_t step = *d.micro_batch_size * *d.batch_data_parallel;
  for (const Entry& e : entries) {
    if (e.batch % step == 0) continue;
    Diagnostic diag = make(schedule,
                           fmt::format("batch size {} of entry \"{}\" is not divisible by micro_batch_size {} x "
                                       "data-parallel size {} = {}: the run stops when the schedule reaches it",
                                       e.batch, e.text, *d.micro_batch_size, *d.batch_data_parallel, step),
                           fmt::format("use batch sizes that are multiples of {}", step));
    diag.notes.push_back(Note{fmt::format("data-parallel size {} = {}", *d.batch_data_parallel, d.batch_data_parallel.how),
                              span_for(d.world_size)});
    out.push_back(std::move(diag));
    return;
  }
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  TextSetting setting = config_text(context.job, "train.step_batch_size_schedule");
  if (!setting.value) return;
  Quantity schedule = quantity_at(setting.path, std::nullopt, setting.where);
  schedule.display = *setting.value;
  if (context.job.dialect == Dialect::MegatronLM) {
    check_megatron_lm(context, schedule, *setting.value, out);
    return;
  }
  Diagnostic diag = make(schedule,
                         "step_batch_size_schedule is ignored: Megatron Bridge does not pass it to the microbatch "
                         "calculator, so the run uses global_batch_size from the first step to the last",
                         "remove step_batch_size_schedule (set it to null) and set global_batch_size to the batch "
                         "you want");
  diag.severity = Severity::Warning;
  Fix drop{"set step_batch_size_schedule to null", FixSafety::Safe, {}};
  if (auto edit = replace_value(schedule.where, "null")) drop.edits.push_back(*edit);
  if (!schedule.path.empty()) drop.changes.push_back(SettingChange{schedule.path, "null"});  // for the re-check
  diag.fixes.push_back(std::move(drop));
  out.push_back(std::move(diag));
}

}  // namespace

extern const RuleInfo kStepBatchSizeSchedule = {
    .code = "MB607",
    .name = "step-batch-size-schedule",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "a step batch-size schedule that Megatron-LM rejects, or that Megatron Bridge ignores",
    .doc = R"md(Megatron-LM 0.18 replaced the batch-size ramp-up with `--step-batch-size-schedule "0:768
250B:1536 500B:3072"`: the global batch becomes 1536 after 250 billion tokens, and so on.
Megatron-Core's `StepBatchsizeNumMicroBatchesCalculator` divides the thresholds by the sequence
length and checks at start-up that the schedule starts at 0, has strictly increasing thresholds
and positive batch sizes ("first schedule entry must have threshold 0", "schedule thresholds
must be strictly increasing"); `validate_args` refuses it together with `--global-batch-size`
("Cannot specify both --step-batch-size-schedule and --global-batch-size") or
`--decrease-batch-size-if-needed`. Each batch size must split into `micro_batch_size x DP`;
that is checked only when the schedule reaches it, mid-run. Megatron-LM before 0.18 has no
such option (`unknown-flag` reports the flag its parser rejects).

Megatron Bridge has the field (`train.step_batch_size_schedule`, inherited from Megatron-Core's
training config) but does not hand it to the microbatch calculator: the run silently trains
with `global_batch_size` throughout (a warning).)md",
    .bad = {"override.yaml", "train:\n  step_batch_size_schedule: \"0:256 100B:512\"\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  step_batch_size_schedule: null\n"},
    .check = check,
    .checks = "MC F6",
};

}  // namespace mblint
