// Calibration of the step-time model's global constants (not built by
// default: `cmake --build build-dev --target speed_fit`). tools/perf_eval.py
// --fit writes the rows it maps (one per line: set, measured tokens/s/GPU,
// then the arguments of `mblint estimate`) and runs this on them: it reads
// every job once, then adjusts each constant of lint/facts/speed_constants.inc in
// turn (coordinate descent over a log grid) to minimise the mean |log error|
// of the rows of set "fit", and prints the constants and every row's error.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "lint/command_line/command_line.h"
#include "lint/facts/speed_model.h"
#include "lint/run/lint.h"
#include "rules/registry.h"

using namespace mblint;

namespace {

struct Row {
  std::string set, label;
  double measured = 0;
  MemoryModel model;
  SpeedSettings settings;
  const GpuSpeed* gpu = nullptr;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) out.push_back(field);
  return out;
}

std::optional<Row> read_row(const std::vector<std::string>& fields) {
  Row row;
  row.set = fields[0];
  row.label = fields[1];
  row.measured = std::stod(fields[2]);
  std::vector<std::string> args = {"estimate"};
  args.insert(args.end(), fields.begin() + 3, fields.end());
  std::ostringstream out, err;
  CliEnvironment env{out, err, false, {}, std::filesystem::current_path()};
  SourceSet sources;
  CommandLine line = add_command_line(sources, args);
  LintOptions options;
  options.paths = {fields[3]};
  if (read_job_options(args, line, env, options)) return std::nullopt;
  LintResult result = run_lint(sources, options, all_rules());
  if (result.jobs.empty()) return std::nullopt;
  // What `mblint estimate` reads, so that the rows it declines (hybrid
  // Mamba stacks, PEFT, GPUs without figures) stay out of the fit.
  auto inputs = read_speed_inputs(result.jobs.front(), result.derived.front());
  if (!inputs) return std::nullopt;
  row.model = std::move(inputs->model);
  row.settings = inputs->settings;
  row.gpu = inputs->gpu;
  return row;
}

double predicted(const Row& row, const SpeedConstants& c) {
  auto e = estimate_step(row.model, row.settings, *row.gpu, c);
  return e ? e->tokens_per_sec_per_gpu : 0;
}

double log_error(const Row& row, const SpeedConstants& c) {
  double tokens = predicted(row, c);
  if (tokens <= 0) return 10;
  return std::abs(std::log(tokens / row.measured));
}

// NVIDIA's choices as revealed preferences (perf_eval.py --fit-choices):
// rows "pub:G" (a calibration row's published layout as the plan writes it)
// and "alt:G" (the plan's other layouts for it). Each group adds how far its
// best other layout is predicted above the published one, beyond `margin`
// (a hinge on the log ratio): a tuned layout should not rank far below the
// model's favourites. Weight 0 (the default) leaves the fit as it was.
struct Choices {
  double weight = 0, margin = 0;
  std::map<std::string, std::pair<const Row*, std::vector<const Row*>>> groups;
};

double choice_loss(const Choices& choices, const SpeedConstants& c) {
  double sum = 0;
  int n = 0;
  for (const auto& [group, members] : choices.groups) {
    const auto& [published, others] = members;
    if (!published || others.empty()) continue;
    double mine = predicted(*published, c);
    double best = 0;
    for (const Row* r : others) best = std::max(best, predicted(*r, c));
    if (mine <= 0 || best <= 0) continue;
    sum += std::max(0.0, std::log(best / mine) - choices.margin);
    ++n;
  }
  return n ? sum / n : 0;
}

double accuracy_loss(const std::vector<Row>& rows, const SpeedConstants& c) {
  double sum = 0;
  int n = 0;
  for (const Row& r : rows) {
    if (r.set != "fit") continue;
    sum += log_error(r, c);
    ++n;
  }
  return n ? sum / n : 0;
}

double loss(const std::vector<Row>& rows, const Choices& choices, const SpeedConstants& c) {
  double l = accuracy_loss(rows, c);
  if (choices.weight > 0) l += choices.weight * choice_loss(choices, c);
  return l;
}

struct Knob {
  const char* name;
  double SpeedConstants::*field;
  double lo, hi;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: speed_fit ROWS.tsv [rounds [KNOB,KNOB...]]\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  // Only these constants move (all when not given): a new term is fitted
  // without disturbing the calibrated ones.
  std::string only = argc > 3 && *argv[3] ? fmt::format(",{},", argv[3]) : "";
  std::vector<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    auto fields = split_tabs(line);
    if (fields.size() < 4) continue;
    if (auto row = read_row(fields)) {
      rows.push_back(std::move(*row));
    } else {
      std::cerr << "skipped: " << fields[1] << "\n";
    }
  }
  Choices choices;
  if (const char* w = std::getenv("SPEED_FIT_CHOICE_WEIGHT")) choices.weight = std::stod(w);
  if (const char* m = std::getenv("SPEED_FIT_CHOICE_MARGIN")) choices.margin = std::stod(m);
  for (const Row& r : rows) {
    size_t colon = r.set.find(':');
    if (colon == std::string::npos) continue;
    auto& group = choices.groups[r.set.substr(colon + 1)];
    if (r.set.rfind("pub", 0) == 0) group.first = &r;
    else group.second.push_back(&r);
  }
  SpeedConstants c = default_speed_constants();
  const Knob knobs[] = {
      {"gemm_efficiency_bf16", &SpeedConstants::gemm_efficiency_bf16, 0.3, 0.95},
      {"gemm_efficiency_fp8", &SpeedConstants::gemm_efficiency_fp8, 0.2, 0.95},
      {"gemm_efficiency_mxfp8", &SpeedConstants::gemm_efficiency_mxfp8, 0.2, 0.95},
      {"gemm_efficiency_nvfp4", &SpeedConstants::gemm_efficiency_nvfp4, 0.1, 0.95},
      {"gemm_latency_s", &SpeedConstants::gemm_latency_s, 1e-7, 1e-4},
      {"attention_efficiency", &SpeedConstants::attention_efficiency, 0.2, 0.9},
      {"ssd_efficiency", &SpeedConstants::ssd_efficiency, 0.002, 0.9},
      {"softmax_share", &SpeedConstants::softmax_share, 0.0, 0.9},
      {"attention_call_tokens", &SpeedConstants::attention_call_tokens, 0.0, 4096},
      {"elementwise_scale", &SpeedConstants::elementwise_scale, 0.2, 5},
      {"link_efficiency", &SpeedConstants::link_efficiency, 0.3, 0.95},
      {"collective_latency_s", &SpeedConstants::collective_latency_s, 1e-6, 2e-4},
      {"a2a_efficiency", &SpeedConstants::a2a_efficiency, 0.1, 1},
      {"deepep_efficiency", &SpeedConstants::deepep_efficiency, 0.1, 1.5},
      {"tp_overlap_exposed", &SpeedConstants::tp_overlap_exposed, 0.0, 1},
      {"ep_overlap_exposed", &SpeedConstants::ep_overlap_exposed, 0.0, 1},
      {"pp_exposed", &SpeedConstants::pp_exposed, 0.0, 1},
      {"pp_chunk_s", &SpeedConstants::pp_chunk_s, 0.0, 5e-3},
      {"overlap_slowdown", &SpeedConstants::overlap_slowdown, 0.0, 1},
      {"cpu_layer_s", &SpeedConstants::cpu_layer_s, 1e-5, 1e-2},
      {"cpu_moe_layer_s", &SpeedConstants::cpu_moe_layer_s, 1e-5, 1e-2},
      {"moe_sync_s", &SpeedConstants::moe_sync_s, 1e-5, 2e-2},
      {"cuda_graph_cpu_share", &SpeedConstants::cuda_graph_cpu_share, 0.0, 1},
      {"step_fixed_s", &SpeedConstants::step_fixed_s, 1e-3, 10},
  };
  for (const Knob& k : knobs) c.*k.field = std::clamp(c.*k.field, k.lo, k.hi);  // start inside the bounds
  std::cout << fmt::format("{} rows read ({} choice groups, weight {}); start: mean |log error| {:.4f}, choice "
                           "loss {:.4f}\n",
                           rows.size(), choices.groups.size(), choices.weight, accuracy_loss(rows, c),
                           choice_loss(choices, c));
  for (int round = 0; round < rounds; ++round) {
    for (const Knob& k : knobs) {
      if (!only.empty() && only.find(fmt::format(",{},", k.name)) == std::string::npos) continue;
      double best = c.*k.field, best_loss = loss(rows, choices, c);
      for (int i = 0; i <= 40; ++i) {
        double value = k.lo == 0 ? k.hi * i / 40.0 : k.lo * std::pow(k.hi / k.lo, i / 40.0);
        SpeedConstants trial = c;
        trial.*k.field = value;
        double l = loss(rows, choices, trial);
        if (l < best_loss - 1e-9) {
          best_loss = l;
          best = value;
        }
      }
      c.*k.field = best;
    }
    std::cout << fmt::format("round {}: mean |log error| {:.4f}, choice loss {:.4f}\n", round + 1,
                             accuracy_loss(rows, c), choice_loss(choices, c));
  }
  for (const Knob& k : knobs) std::cout << fmt::format("    .{} = {:.4g},\n", k.name, c.*k.field);
  for (const Row& r : rows) {
    if (r.set.find(':') != std::string::npos) continue;
    double tokens = predicted(r, c);
    std::cout << fmt::format("row\t{}\t{}\t{:.1f}\t{:.1f}\t{:+.3f}\n", r.set, r.label, r.measured, tokens,
                             tokens / r.measured - 1);
  }
  return 0;
}
