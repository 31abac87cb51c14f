// `mblint estimate FILE...`: the per-GPU memory of each job's most loaded
// rank, part by part, against the GPU's capacity; the job's diagnostics follow.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/facts/estimate.h"
#include "lint/facts/speed_model.h"
#include "lint/report/render.h"
#include "lint/report/speed_json.h"
#include "lint/run/lint.h"

namespace mblint {

namespace {

cxxopts::Options estimate_options() {
  cxxopts::Options options("mblint estimate",
                           "Estimate the per-GPU memory and the step time of training jobs: those of the files, or "
                           "without a file the job --recipe NAME describes.");
  options.custom_help("[options]");
  options.positional_help("[FILE...]");
  add_job_options(options);
  options.add_options("output")
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("fail-on", "exit 1 when a finding is at least: error, warning or note",
       cxxopts::value<std::string>()->default_value("error"))
      ("color", "colour: auto, always or never", cxxopts::value<std::string>()->default_value("auto"))
      ("h,help", "show this help")
      ("paths", "files to estimate", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

double round2(double value) { return std::round(value * 100.0) / 100.0; }

nlohmann::ordered_json estimate_json(const MemoryEstimate& e) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  o["weights"] = round2(e.weights);
  o["gradients"] = round2(e.gradients);
  o["optimizer"] = round2(e.optimizer);
  o["activations"] = round2(e.activations);
  o["other"] = round2(e.other);
  if (e.resume > 0) o["resume"] = round2(e.resume);
  o["peak_allocated"] = round2(e.peak_allocated);
  o["overhead"] = round2(e.overhead);
  o["total"] = round2(e.total);
  o["capacity"] = e.capacity > 0 ? nlohmann::ordered_json(round2(e.capacity)) : nlohmann::ordered_json(nullptr);
  o["rank"] = e.rank;
  o["bubble_fraction"] = e.bubble_fraction ? nlohmann::ordered_json(std::round(*e.bubble_fraction * 1000) / 1000)
                                           : nlohmann::ordered_json(nullptr);
  o["microbatches"] = e.microbatches ? nlohmann::ordered_json(*e.microbatches) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageMemory& s : e.stages) {
    stages.push_back({{"stage", s.stage}, {"peak_allocated", round2(s.peak_allocated)}, {"total", round2(s.total)}});
  }
  o["stages"] = std::move(stages);
  o["assumptions"] = e.assumptions;
  if (e.vision && e.vision->dims) {
    // The vision tower (first stage) and the image bound the estimate assumed.
    VisionParams p = vision_params(*e.vision->dims);
    o["vision"] = {{"model", e.vision->dims->hf_id},
                   {"stage", 0},
                   {"tower_parameters", p.tower},
                   {"projector_parameters", p.projector},
                   {"tower_frozen", e.vision->tower_frozen},
                   {"projector_frozen", e.vision->projector_frozen},
                   {"images_per_microbatch", e.vision->dims->tokens_per_image > 0
                                                 ? nlohmann::ordered_json(e.vision->images)
                                                 : nlohmann::ordered_json(nullptr)},
                   {"patches_per_microbatch", e.vision->patches}};
    if (e.vision->video_embedder > 0) o["vision"]["video_embedder_parameters"] = e.vision->video_embedder;
    if (const SoundLoad& s = e.vision->sound; s.dims) {
      // The checkpoint's sound encoder (Nemotron Omni), counted with the tower.
      SoundParams sp = sound_params(*s.dims);
      o["vision"]["sound"] = {{"encoder_parameters", sp.encoder},
                              {"projector_parameters", sp.projector},
                              {"encoder_frozen", s.encoder_frozen},
                              {"projector_frozen", s.projector_frozen},
                              {"tokens_per_microbatch", s.tokens}};
    }
  }
  return o;
}

// The step-time estimate, or why there is none.
struct Speed {
  std::optional<SpeedEstimate> estimate;
  std::string why_not;
};

void add_performance(nlohmann::ordered_json& o, const Speed& speed) {
  o["performance"] = speed.estimate ? performance_json(*speed.estimate) : nlohmann::ordered_json(nullptr);
  if (!speed.estimate) o["performance_unavailable"] = speed.why_not;
}

std::string bar(double part, double scale) {
  if (scale <= 0) return "";
  int cells = static_cast<int>(std::lround(std::clamp(part / scale, 0.0, 1.0) * 40));
  std::string out;
  for (int i = 0; i < cells; ++i) out += "\u2588";
  return out;
}

void print_estimate(std::ostream& out, const std::string& file, const MemoryModel* model, const MemoryEstimate& e,
                    bool tty, const std::vector<std::string>& not_counted) {
  out << fmt::format("memory estimate: {}\n", file);
  if (model) {
    out << fmt::format("  {}TP {} x PP {}{} x CP {} x DP {}{}, micro-batch {} x seq {}\n",
                       model->gpu.empty() ? "" : model->gpu + ", ", model->tp, model->pp,
                       model->vpp > 1 ? fmt::format(" (VPP {})", model->vpp) : "", model->cp, model->dp,
                       model->experts > 0 ? fmt::format(", EP {} x ETP {}", model->ep, model->etp) : "",
                       model->micro_batch, model->seq);
  }
  out << fmt::format("  most loaded rank: {}\n", e.rank);
  double scale = std::max(e.total, e.capacity);
  for (const MemoryPart& part : e.parts) {
    out << fmt::format("  {:<12} {:>8.2f} GiB  {}\n", part.name, part.gib, tty ? bar(part.gib, scale) : "");
    for (const std::string& detail : part.details) out << fmt::format("      {}\n", detail);
  }
  if (e.capacity > 0) {
    out << fmt::format("  needs {:.1f} GiB of {:.1f} GiB ({:.0f}%)\n", e.total, e.capacity, 100 * e.total / e.capacity);
  } else {
    out << fmt::format("  needs {:.1f} GiB (GPU unknown: give --gpu)\n", e.total);
  }
  if (e.microbatches) {
    out << fmt::format("  pipeline: {} micro-batches per step, bubble {:.0f}%\n", *e.microbatches,
                       100 * e.bubble_fraction.value_or(0));
  }
  if (e.stages.size() > 1) {
    std::string line;
    for (const StageMemory& s : e.stages) line += fmt::format("{}{}: {:.1f}", line.empty() ? "" : ", ", s.stage, s.total);
    out << fmt::format("  per stage (GiB): {}\n", line);
  }
  for (const std::string& a : e.assumptions) out << fmt::format("  assumed: {}\n", a);
  for (const std::string& u : not_counted) out << fmt::format("  not counted: {}\n", u);
}

// What the estimate names but does not count, each at its setting:
// "conf.yaml:12:3: CUDA graphs ...".
std::vector<std::string> uncounted_lines(const SourceSet& sources, const MemoryEstimate& e) {
  std::vector<std::string> lines;
  for (const UncountedMemory& u : e.uncounted) {
    if (!u.where.valid() || static_cast<size_t>(u.where.file) >= sources.files.size()) {
      lines.push_back(u.what);
      continue;
    }
    const SourceFile& file = sources.files[u.where.file];
    LineCol at = line_col(file, u.where.begin);
    lines.push_back(fmt::format("{}:{}:{}: {}", file.path, at.line, at.column, u.what));
  }
  return lines;
}

void print_speed(std::ostream& out, const Speed& speed, bool tty) {
  if (!speed.estimate) {
    out << fmt::format("speed estimate: not available: {}\n\n", speed.why_not);
    return;
  }
  const SpeedEstimate& s = *speed.estimate;
  const StepBreakdown& b = s.breakdown;
  out << fmt::format("speed estimate: {:.2f} s per step, {:.0f} tokens/s/GPU, {:.0f} model TFLOP/s/GPU, MFU {:.0f}%\n",
                     s.step_time_s, s.tokens_per_sec_per_gpu, s.model_tflops_per_gpu, 100 * s.mfu);
  const std::pair<const char*, double> parts[] = {
      {"compute", b.compute}, {"TP comm", b.tp}, {"CP comm", b.cp},     {"EP comm", b.ep},  {"PP comm", b.pp},
      {"DP comm", b.dp},      {"bubble", b.bubble}, {"optimizer", b.optimizer}, {"other", b.other}};
  for (const auto& [name, seconds] : parts) {
    if (seconds <= 0) continue;
    out << fmt::format("  {:<12} {:>8.3f} s {:>4.0f}%  {}\n", name, seconds, 100 * seconds / s.step_time_s,
                       tty ? bar(seconds, s.step_time_s) : "");
  }
  out << fmt::format("  communication: the part overlap leaves exposed; the slowest pipeline stage: {}\n\n",
                     s.slowest_stage);
}

// What the estimate is of: the job's file, or the recipe a file-less run names.
std::string job_label(const SourceSet& sources, const Job& job, bool recipe_only) {
  if (recipe_only && job.recipe) return fmt::format("recipe {}", job.recipe->name);
  return job.primary != kNoFile ? sources.files[job.primary].path : "<job>";
}

}  // namespace

int run_estimate(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = estimate_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  // Without a file, --recipe NAME alone describes the job (with --nodes, --gpu, --set ...).
  bool recipe_only = !parsed.count("paths");
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, fmt::format("unknown --format '{}'", format));
  auto fail_on = parse_severity(parsed["fail-on"].as<std::string>());
  if (!fail_on) return usage_error(env, "--fail-on takes error, warning or note");
  std::string color = parsed["color"].as<std::string>();
  if (color != "auto" && color != "always" && color != "never") {
    return usage_error(env, "--color takes auto, always or never");
  }

  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "estimate", args);
  LintOptions options;
  if (!recipe_only) options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_recipe_job_options(full_args, line, env, options)) return *stop;
  if (recipe_only && !options.recipe) {
    return usage_error(env, "estimate needs a file or --recipe NAME (see mblint estimate --help)");
  }

  LintResult result = run_lint(sources, options, rules);
  Summary summary = summarize(result.diagnostics, result.files_checked, result.coverage);
  std::vector<std::pair<size_t, MemoryEstimate>> estimates;
  std::vector<Speed> speeds;  // one per estimate
  std::vector<std::string> unavailable;
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    std::string why;
    const Job& job = result.jobs[i];
    std::string file = job_label(sources, job, recipe_only);
    if (auto e = estimate_memory(job, result.derived[i], &why)) {
      estimates.emplace_back(i, std::move(*e));
      Speed speed;
      speed.estimate = estimate_speed(job, result.derived[i], &speed.why_not);
      speeds.push_back(std::move(speed));
    } else {
      unavailable.push_back(fmt::format("{}: cannot estimate: {}", file, why));
    }
  }
  if (format == "json") {
    std::ostringstream core;
    render_json(core, sources, result.diagnostics, summary);
    nlohmann::ordered_json document = nlohmann::ordered_json::parse(core.str());
    document["estimate"] = nlohmann::ordered_json(nullptr);
    if (!estimates.empty()) {
      document["estimate"] = estimate_json(estimates.front().second);
      document["estimate"]["not_counted"] = uncounted_lines(sources, estimates.front().second);
      add_performance(document["estimate"], speeds.front());
    }
    if (estimates.size() > 1) {
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (size_t k = 0; k < estimates.size(); ++k) {
        const auto& [index, e] = estimates[k];
        nlohmann::ordered_json one = estimate_json(e);
        one["not_counted"] = uncounted_lines(sources, e);
        add_performance(one, speeds[k]);
        one["file"] = sources.files[result.jobs[index].primary].path;
        all.push_back(std::move(one));
      }
      document["estimates"] = std::move(all);
    }
    if (!unavailable.empty()) document["estimate_unavailable"] = unavailable;
    env.out << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  } else {
    for (size_t k = 0; k < estimates.size(); ++k) {
      const auto& [index, e] = estimates[k];
      std::vector<std::string> assumptions;
      auto model = read_memory_model(result.jobs[index], result.derived[index], assumptions, nullptr);
      const Job& job = result.jobs[index];
      print_estimate(env.out, job_label(sources, job, recipe_only),
                     model ? &*model : nullptr, e, env.stdout_is_tty, uncounted_lines(sources, e));
      print_speed(env.out, speeds[k], env.stdout_is_tty);
    }
    for (const std::string& u : unavailable) env.out << u << "\n\n";
    render_text(env.out, sources, result.diagnostics, summary, use_color(color, env));
  }
  bool failing = std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                             [&](const Diagnostic& d) { return d.severity >= *fail_on; });
  if (failing) return kExitFindings;
  return estimates.empty() ? kExitFindings : kExitClean;
}

}  // namespace mblint
