// `mblint plan`: rank the parallel layouts of a model on a GPU count.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/plan/plan.h"
#include "lint/report/render.h"
#include "lint/report/speed_json.h"
#include "lint/resolve/job_builder.h"

namespace mblint {

namespace {

// Bounds the rank walks of the locality score (each is linear in the GPUs).
constexpr int64_t kMaxPlanGpus = 131072;

// Model-dimension flags and the config keys they set.
struct DimensionFlag {
  const char* flag;
  const char* key;
  const char* help;
};

constexpr DimensionFlag kDimensionFlags[] = {
    {"num-layers", "model.num_layers", "transformer layers"},
    {"hidden-size", "model.hidden_size", "hidden size"},
    {"num-attention-heads", "model.num_attention_heads", "attention heads"},
    {"num-query-groups", "model.num_query_groups", "key/value heads (GQA); default: as many as heads"},
    {"ffn-hidden-size", "model.ffn_hidden_size", "dense MLP size"},
    {"num-experts", "model.num_moe_experts", "routed experts (MoE); default: dense"},
    {"moe-topk", "model.moe_router_topk", "experts per token"},
    {"moe-ffn-hidden-size", "model.moe_ffn_hidden_size", "expert MLP size"},
    {"vocab-size", "model.vocab_size", "vocabulary size"},
    {"seq-length", "model.seq_length", "sequence length"},
    {"global-batch-size", "train.global_batch_size", "global batch size (sequences per step)"},
};

cxxopts::Options plan_options() {
  cxxopts::Options options("mblint plan",
                           "Rank the TP/PP/VPP/CP/EP/ETP/DP/MBS/SP/recompute layouts of a model on a GPU count that "
                           "pass every error rule.");
  options.custom_help("[options]");
  options.positional_help("[FILE...]");
  add_job_options(options);
  options.add_options("plan")("gpus", "total GPUs (or --nodes and --gpus-per-node)", cxxopts::value<std::string>())(
      "top", "layouts to list", cxxopts::value<std::string>()->default_value("5"))(
      "find-minimum", "also find the fewest GPUs (halving the count) on which a layout fits");
  for (const DimensionFlag& f : kDimensionFlags) {
    options.add_options("model")(f.flag, f.help, cxxopts::value<std::string>());
  }
  options.add_options("output")("format", "output format: text or json",
                                cxxopts::value<std::string>()->default_value("text"))("h,help", "show this help")(
      "paths", "files describing the job", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

std::optional<int64_t> positive(const std::string& text) {
  if (text.empty() || text.size() > 12 || !std::all_of(text.begin(), text.end(), ::isdigit)) return std::nullopt;
  int64_t v = std::stoll(text);
  return v > 0 ? std::optional<int64_t>(v) : std::nullopt;
}

Provenance command_line_at(const CommandLineValue& value) {
  Provenance p;
  p.layer = Layer::CommandLine;
  p.value = value.span;
  p.statement = value.span;
  return p;
}

// The job to plan: one of the files' jobs, or the command line's.
std::optional<Job> base_job(SourceSet& sources, const LintOptions& options, RuleSet rules,
                            const CliEnvironment& env) {
  if (options.paths.empty()) return job_from_command_line(sources, options);
  BuildResult built = build_jobs(sources, options);
  if (!built.problems.empty()) {
    render_text(env.err, sources, built.problems, summarize(built.problems, built.files_checked), false);
    (void)rules;
    return std::nullopt;
  }
  // The first job whose model is known, else the first job (flags may
  // describe its model).
  for (Job& job : built.jobs) {
    Derived d = derive(job);
    bool shape = d.num_layers.known() && d.hidden_size.known() && d.num_attention_heads.known();
    if (job.kind != InputKind::NotAConfig && shape) return std::move(job);
  }
  for (Job& job : built.jobs) {
    if (job.kind != InputKind::NotAConfig) return std::move(job);
  }
  env.err << "mblint: none of the files describes a training job\n";
  return std::nullopt;
}

// The fewest GPUs, halving the count, on which some layout passes every
// error rule and fits.
struct Smallest {
  int64_t gpus = 0;
  Evaluation layout;
};

Smallest smallest_fitting(const Job& base, const PlanOptions& plan, RuleSet rules) {
  Smallest best;
  for (int64_t world = plan.world / 2; world >= 1 && plan.world % world == 0; world /= 2) {
    PlanOptions fewer = plan;
    fewer.world = world;
    fewer.gpus_per_node = std::min(plan.gpus_per_node, world);
    fewer.top = 1;
    fewer.try_more_gpus = false;
    PlanResult r = make_plan(base, fewer, rules);
    if (r.ranked.empty()) break;
    best = Smallest{world, r.ranked.front()};
  }
  return best;
}

struct Machine {
  int64_t world = 0, gpus_per_node = 0;
  const GpuType* gpu = nullptr;
  bool gpu_assumed = false;
};

// Model dimensions from the command line, located there. Returns a usage
// error, if any.
std::optional<std::string> apply_dimension_flags(const std::vector<std::string>& full_args, const CommandLine& line,
                                                 bool experts_given, Job& base) {
  bool dims_given = false;
  for (const DimensionFlag& f : kDimensionFlags) {
    auto value = last_value(full_args, line, {std::string("--") + f.flag});
    if (!value) continue;
    auto number = positive(value->text);
    if (!number) return fmt::format("--{} takes a positive number, got '{}'", f.flag, value->text);
    assign_path(base.config, split_path(f.key), make_int(*number, command_line_at(*value)));
    std::string_view key = f.key;
    if (key == "model.seq_length") {
      assign_path(base.config, split_path("dataset.seq_length"), make_int(*number, command_line_at(*value)));
    }
    if (key != "model.seq_length" && key != "train.global_batch_size") dims_given = true;
  }
  // A model described by flags is dense unless --num-experts says otherwise.
  if (dims_given && !experts_given && !find_path(base.config, "model.num_moe_experts")) {
    assign_path(base.config, split_path("model.num_moe_experts"), make_null());
  }
  return std::nullopt;
}

// The GPUs: --gpus N in nodes of the GPU type's usual size (or
// --gpus-per-node), else the job's own nodes x GPUs per node. The base job's
// cluster is set to match. Returns a usage error, if any.
std::optional<std::string> choose_machine(const Derived& d, const LintOptions& options,
                                          const std::optional<CommandLineValue>& gpus_value, Job& base, Machine& m) {
  m.gpu = d.gpu;
  if (!m.gpu) {
    m.gpu = find_gpu("h100");
    m.gpu_assumed = true;
    base.cluster.gpu = m.gpu->name;
  }
  if (gpus_value) {
    m.world = *positive(gpus_value->text);
    m.gpus_per_node = d.gpus_per_node.known() && options.gpus_per_node ? *d.gpus_per_node : m.gpu->gpus_per_node;
    if (m.world < m.gpus_per_node) m.gpus_per_node = m.world;
    if (m.world % m.gpus_per_node != 0) {
      return fmt::format("--gpus {} is not a whole number of {}-GPU nodes (pass --gpus-per-node)", m.world,
                         m.gpus_per_node);
    }
    Provenance where = command_line_at(*gpus_value);
    base.cluster.nodes = LocatedInt{m.world / m.gpus_per_node, where, ""};
    base.cluster.gpus_per_node = LocatedInt{m.gpus_per_node, where, ""};
    base.cluster.world_size = LocatedInt{};
    return std::nullopt;
  }
  if (d.world_size.known() && d.gpus_per_node.known()) {
    m.world = *d.world_size;
    m.gpus_per_node = *d.gpus_per_node;
    return std::nullopt;
  }
  return std::string("plan needs the GPU count: --gpus N, or --nodes and --gpus-per-node");
}

std::string describe_candidate(const Candidate& c, bool moe) {
  std::string text = fmt::format("TP {} PP {}", c.tp, c.pp);
  if (c.vpp > 1) text += fmt::format(" VPP {}", c.vpp);
  text += fmt::format(" CP {}", c.cp);
  if (moe) text += fmt::format(" EP {} ETP {}", c.ep, c.etp);
  text += fmt::format(" DP {}", c.dp);
  if (moe) text += fmt::format(" EDP {}", c.edp);
  text += fmt::format(" MBS {} SP {} recompute {}", c.mbs, c.sp ? "on" : "off", recompute_name(c.recompute));
  if (c.first_stage_layers > 0) {
    text += fmt::format(" (first/last stage {}/{} layers)", c.first_stage_layers, c.last_stage_layers);
  } else if (c.pp > 1 && (c.account_embedding || c.account_loss)) {
    text += c.account_embedding && c.account_loss ? " (embedding and loss count as layers)"
            : c.account_embedding                 ? " (embedding counts as a layer)"
                                                  : " (loss counts as a layer)";
  }
  return text;
}

// Which groups span nodes (their traffic goes over the network).
std::string crossing_nodes_text(const Locality& l, bool moe) {
  std::vector<std::string> parts;
  if (l.tp_crossing_nodes > 0) parts.push_back(fmt::format("TP ({} groups)", l.tp_crossing_nodes));
  if (moe && l.ep_crossing_nodes > 0) parts.push_back(fmt::format("EP x ETP ({} groups)", l.ep_crossing_nodes));
  if (l.dp_crossing_nodes > 0) parts.push_back(fmt::format("DP ({} groups)", l.dp_crossing_nodes));
  if (l.pp_crossing_nodes > 0) parts.push_back(fmt::format("PP ({} groups)", l.pp_crossing_nodes));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string memory_text(const MemoryFit& m) {
  if (m.status == MemoryFit::Status::Unknown) return "not estimated";
  if (m.status == MemoryFit::Status::MayNotFit) {
    return fmt::format("{:.1f}/{:.1f} GiB, needs {:.0f}-{:.0f} GiB: may not fit", m.total_gib, m.capacity_gib,
                       m.low_gib, m.high_gib);
  }
  return fmt::format("{:.1f}/{:.1f} GiB", m.total_gib, m.capacity_gib);
}

// The predicted throughput, or the overhead score without a speed model.
std::string score_text(const Evaluation& e) {
  if (e.speed) return fmt::format("predicted {:.0f} tokens/s/GPU", e.speed->tokens_per_sec_per_gpu);
  return fmt::format("score {:.3f}", e.score);
}

std::string bubble_text(const Evaluation& e) {
  return e.bubble ? fmt::format("{:.1f}%", *e.bubble * 100) : std::string("?");
}

std::string yaml_snippet(const std::vector<PlanSetting>& settings) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> sections;
  std::vector<std::string> order;
  for (const PlanSetting& s : settings) {
    size_t dot = s.key.find('.');
    std::string section = s.key.substr(0, dot);
    if (!sections.count(section)) order.push_back(section);
    sections[section].push_back({s.key.substr(dot + 1), s.value});
  }
  std::string out;
  for (const std::string& section : order) {
    out += section + ":\n";
    for (const auto& [key, value] : sections[section]) out += fmt::format("  {}: {}\n", key, value);
  }
  return out;
}

std::string hydra_snippet(const std::vector<PlanSetting>& settings) {
  std::vector<std::string> words;
  for (const PlanSetting& s : settings) {
    // Pasted on a shell command line: a written pipeline layout's "|" would be a pipe.
    bool plain = std::all_of(s.value.begin(), s.value.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
    });
    words.push_back(plain ? fmt::format("{}={}", s.key, s.value) : fmt::format("'{}={}'", s.key, s.value));
  }
  return fmt::format("{}", fmt::join(words, " "));
}

void print_min_gpus(std::ostream& out, const Evaluation& e, bool moe) {
  const Candidate& c = e.c;
  if (!moe) {
    out << fmt::format("minimum GPU count for #1: PP x TP x CP = {} x {} x {} = {}; this run uses {} (DP {}).\n", c.pp,
                       c.tp, c.cp, e.min_gpus, c.dp * c.tp * c.cp * c.pp, c.dp);
    return;
  }
  out << fmt::format("minimum GPU count for #1: PP x lcm(TP x CP, EP x ETP) = {} x lcm({}, {}) = {}; this run uses "
                     "{} (DP {}, EDP {}).\n",
                     c.pp, c.tp * c.cp, c.ep * c.etp, e.min_gpus, c.dp * c.tp * c.cp * c.pp, c.dp, c.edp);
  if (e.full_product != e.min_gpus) {
    out << fmt::format("  the full product PP x TP x CP x EP x ETP = {} is wrong: in each pipeline stage the attention "
                       "mesh (TP x CP) and the expert mesh (EP x ETP) are two groupings of the same GPUs, not "
                       "separate GPUs; both DP = W / (TP x CP x PP) and EDP = W / (EP x ETP x PP) must be whole.\n",
                       e.full_product);
  }
}

void print_guide(std::ostream& out, const PlanResult& r, bool moe) {
  out << fmt::format("\nthe guide's starting point: {}\n  ({})\n", r.guide_point.band, r.guide_point.source);
  for (const GuideResult& g : r.guide) {
    std::string what = fmt::format("TP {} PP {} CP {}", g.layout.tp, g.layout.pp, g.layout.cp);
    if (moe) what += fmt::format(" EP {} ETP {}", g.layout.ep, g.layout.etp);
    if (!g.divides) {
      out << fmt::format("  {}: not possible here: {}\n", what, g.why_not);
      continue;
    }
    const Evaluation& e = g.evaluation;
    if (!e.valid) {
      out << fmt::format("  {}: rejected: {}\n", what, e.errors.empty() ? std::string("?") : e.errors.front());
      continue;
    }
    std::string fit = e.memory.status == MemoryFit::Status::TooBig ? "does not fit"
                      : e.memory.status == MemoryFit::Status::Unknown
                          ? "memory not estimated"
                      : e.memory.status == MemoryFit::Status::MayNotFit
                          ? memory_text(e.memory)
                          : fmt::format("fits ({})", memory_text(e.memory));
    std::string rank = g.rank ? fmt::format("ranks #{}{}", *g.rank, *g.rank <= r.ranked.size() ? " (listed above)" : "")
                              : (e.memory.status == MemoryFit::Status::TooBig
                                     ? std::string("not ranked")
                                     : fmt::format("ranks below #{}", r.valid_found));
    out << fmt::format("  {}: valid, {}, recompute {}, bubble {}, {}: {}\n", what, fit,
                       recompute_name(e.c.recompute), bubble_text(e), score_text(e), rank);
  }
  for (const std::string& note : r.guide_point.notes) out << "  note: " << note << "\n";
}

void print_text(std::ostream& out, const std::string& title, const Machine& m, const Job& base,
                const PlanResult& r, const std::vector<std::string>& pins, const std::optional<Smallest>& smallest) {
  bool moe = r.size.moe;
  int64_t nodes = m.world / m.gpus_per_node;
  out << fmt::format("mblint plan: {} on {} x {} ({} node{} x {} GPUs, NVLink domain {})\n", title, m.world,
                     m.gpu->display, nodes, nodes == 1 ? "" : "s", m.gpus_per_node,
                     nvlink_domain_size(*m.gpu, m.gpus_per_node));
  Derived d = derive(base);
  out << fmt::format("model: {:.1f}B parameters", r.size.total_params);
  if (moe) out << fmt::format(" ({:.1f}B active per token), {} experts", r.size.active_params, *d.num_moe_experts);
  out << fmt::format(", {} layers, hidden {}, {} heads; seq {}, global batch {}{}\n", *d.num_layers, *d.hidden_size,
                     *d.num_attention_heads, r.seq_length > 0 ? std::to_string(r.seq_length) : std::string("unknown"),
                     r.global_batch_size,
                     r.global_batch_assumed ? " (assumed: pass --global-batch-size)" : "");
  if (m.gpu_assumed) out << "note: no GPU type given: planning for H100 (pass --gpu)\n";
  if (!pins.empty()) out << fmt::format("fixed by --set: {}\n", fmt::join(pins, ", "));
  if (!r.memory_known && r.enumerated > 0) {
    out << fmt::format("memory: NOT ESTIMATED ({}): no layout is known to fit and recompute is never chosen; the list "
                       "ranks valid layouts by bubble and locality only\n",
                       r.memory_unknown_because.empty() ? std::string("unknown reason") : r.memory_unknown_because);
  }
  out << fmt::format("searched {} layouts that pass the arithmetic; linted {} with every error rule ({} rejected); "
                     "{} memory estimates over capacity\n",
                     r.enumerated, r.checked, r.rejected_by_rules, r.too_big);
  if (r.enumerated == 0) {
    out << fmt::format("\nno layout passes the arithmetic: {} GPUs must be a multiple of TP x CP x PP (TP dividing the "
                       "{} heads and the query groups, PP at most the layers) and of EP x ETP x PP, and the global "
                       "batch {} a multiple of MBS x DP.\n",
                       m.world, *d.num_attention_heads, r.global_batch_size);
  }
  if (r.ranked.empty()) {
    if (r.enumerated > 0) {
      out << "\nno layout passes every error rule";
      if (r.memory_known) out << " and fits in memory";
      out << ".\n";
    }
    if (r.closest) {
      out << fmt::format("closest: {} needs {}\n", describe_candidate(r.closest->c, moe), memory_text(r.closest->memory));
      out << "  the search already tried selective and full recompute, and CP up to seq/4096\n";
    }
    if (r.fits_with) {
      out << fmt::format("to make it fit: {} GPUs, e.g. {} ({})\n", r.fits_with_gpus,
                         describe_candidate(r.fits_with->c, moe), memory_text(r.fits_with->memory));
    } else if (r.memory_known) {
      out << "to make it fit: more than 16x the GPUs, a shorter sequence, or optimizer/activation offloading\n";
    }
    print_guide(out, r, moe);
    return;
  }
  if (r.ranked.front().speed) {
    out << "\nranked by predicted tokens/s/GPU (the speed model: docs/speed-model.md); ties: more memory headroom, "
           "then fewer GPUs in TP x CP x PP x EP x ETP; each layout once, with its fastest VPP\n";
  } else {
    out << "\nscore: estimated step-time overhead (pipeline bubble + recompute + communication outside the NVLink "
           "domain), lower is better (no speed model for this GPU or model); each layout once, with its best VPP\n";
  }
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Evaluation& e = r.ranked[i];
    out << fmt::format("{:>2}. {}\n", i + 1, describe_candidate(e.c, moe));
    out << fmt::format("    bubble {}, memory {}, min GPUs {}, {}\n", bubble_text(e), memory_text(e.memory),
                       e.min_gpus, score_text(e));
    if (!e.reasons.empty()) out << fmt::format("    why: {}\n", fmt::join(e.reasons, "; "));
    std::string across = crossing_nodes_text(e.locality, moe);
    if (!across.empty()) out << fmt::format("    across nodes: {}\n", across);
  }
  out << "\n";
  print_min_gpus(out, r.ranked.front(), moe);
  if (smallest) {
    if (smallest->gpus > 0) {
      out << fmt::format("fewest GPUs with a layout that fits (halving {}): {}, e.g. {} ({})\n", m.world,
                         smallest->gpus, describe_candidate(smallest->layout.c, moe),
                         memory_text(smallest->layout.memory));
    } else {
      out << fmt::format("fewest GPUs with a layout that fits (halving {}): {} (nothing fits on {})\n", m.world,
                         m.world, m.world / 2);
    }
  }
  print_guide(out, r, moe);
  std::vector<PlanSetting> settings = candidate_settings(r.ranked.front().c, base, r.global_batch_size);
  out << "\n#1 as a Megatron Bridge override file (--config-file):\n";
  out << yaml_snippet(settings);
  out << "\n#1 as Hydra overrides:\n" << hydra_snippet(settings) << "\n";
}

nlohmann::json candidate_json(const Evaluation& e, const Job& base, int64_t gbs) {
  const Candidate& c = e.c;
  nlohmann::json j = {{"tp", c.tp}, {"pp", c.pp}, {"vpp", c.vpp > 1 ? nlohmann::json(c.vpp) : nlohmann::json(nullptr)},
                      {"cp", c.cp}, {"ep", c.ep}, {"etp", c.etp}, {"dp", c.dp}, {"edp", c.edp}, {"mbs", c.mbs},
                      {"sequence_parallel", c.sp}, {"recompute", recompute_name(c.recompute)},
                      {"min_gpus", e.min_gpus}, {"full_product", e.full_product}, {"score", e.score},
                      {"reasons", e.reasons}, {"valid", e.valid}, {"errors", e.errors}};
  j["bubble"] = e.bubble ? nlohmann::json(*e.bubble) : nlohmann::json(nullptr);
  j["performance"] = e.speed ? nlohmann::json(performance_json(*e.speed)) : nlohmann::json(nullptr);
  const Locality& l = e.locality;
  j["groups_crossing_nvlink"] = {{"tp", l.tp_crossing}, {"tp_cp", l.cp_crossing}, {"etp_ep", l.ep_crossing}};
  j["groups_crossing_nodes"] = {{"tp", l.tp_crossing_nodes}, {"etp_ep", l.ep_crossing_nodes},
                                {"dp", l.dp_crossing_nodes}, {"pp", l.pp_crossing_nodes}};
  j["memory"] = e.memory.status == MemoryFit::Status::Unknown
                    ? nlohmann::json(nullptr)
                    : nlohmann::json({{"total_gib", e.memory.total_gib}, {"capacity_gib", e.memory.capacity_gib},
                                      {"range_gib", {e.memory.low_gib, e.memory.high_gib}},
                                      {"may_not_fit", e.memory.status == MemoryFit::Status::MayNotFit}});
  nlohmann::json settings = nlohmann::json::object();
  for (const PlanSetting& s : candidate_settings(c, base, gbs)) settings[s.key] = s.value;
  j["settings"] = settings;
  return j;
}

nlohmann::json json_plan(const std::string& title, const Machine& m, const Job& base, const PlanResult& r,
                         const std::vector<std::string>& pinned, const std::optional<Smallest>& smallest) {
  nlohmann::json j;
  j["job"] = title;
  j["gpus"] = m.world;
  j["gpus_per_node"] = m.gpus_per_node;
  j["gpu"] = m.gpu->name;
  j["model"] = {{"parameters_b", r.size.total_params}, {"active_parameters_b", r.size.active_params},
                {"moe", r.size.moe}};
  j["seq_length"] = r.seq_length;
  j["global_batch_size"] = r.global_batch_size;
  j["global_batch_size_assumed"] = r.global_batch_assumed;
  j["memory_estimated"] = r.memory_known;
  j["fixed_by_set"] = describe_pins(base, pinned);
  if (smallest) {
    j["fewest_gpus"] = smallest->gpus > 0 ? smallest->gpus : m.world;
    j["fewest_gpus_layout"] = smallest->gpus > 0 ? candidate_json(smallest->layout, base, r.global_batch_size)
                                                 : nlohmann::json(nullptr);
  }
  if (!r.memory_known) j["memory_not_estimated_because"] = r.memory_unknown_because;
  j["searched"] = r.enumerated;
  j["linted"] = r.checked;
  j["rejected_by_rules"] = r.rejected_by_rules;
  j["rejections"] = r.rejections;
  j["over_memory"] = r.too_big;
  nlohmann::json layouts = nlohmann::json::array();
  for (const Evaluation& e : r.ranked) layouts.push_back(candidate_json(e, base, r.global_batch_size));
  j["layouts"] = layouts;
  j["closest"] = r.closest ? candidate_json(*r.closest, base, r.global_batch_size) : nlohmann::json(nullptr);
  j["fits_with_gpus"] = r.fits_with ? nlohmann::json(r.fits_with_gpus) : nlohmann::json(nullptr);
  j["fits_with"] = r.fits_with ? candidate_json(*r.fits_with, base, r.global_batch_size) : nlohmann::json(nullptr);
  nlohmann::json guide = {{"band", r.guide_point.band}, {"source", r.guide_point.source}, {"notes", r.guide_point.notes}};
  nlohmann::json points = nlohmann::json::array();
  for (const GuideResult& g : r.guide) {
    nlohmann::json p = {{"tp", g.layout.tp}, {"pp", g.layout.pp}, {"cp", g.layout.cp}, {"ep", g.layout.ep},
                        {"etp", g.layout.etp}, {"possible", g.divides}};
    if (!g.divides) {
      p["why_not"] = g.why_not;
    } else {
      p["evaluation"] = candidate_json(g.evaluation, base, r.global_batch_size);
      p["rank"] = g.rank ? nlohmann::json(*g.rank) : nlohmann::json(nullptr);
    }
    points.push_back(p);
  }
  guide["layouts"] = points;
  j["guide"] = guide;
  if (!r.ranked.empty()) {
    std::vector<PlanSetting> settings = candidate_settings(r.ranked.front().c, base, r.global_batch_size);
    j["winner_yaml"] = yaml_snippet(settings);
    j["winner_hydra"] = hydra_snippet(settings);
  }
  return j;
}

}  // namespace

int run_plan(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = plan_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, fmt::format("unknown --format '{}'", format));
  auto top = positive(parsed["top"].as<std::string>());
  if (!top) return usage_error(env, "--top takes a positive number");

  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "plan", args);
  LintOptions options;
  if (parsed.count("paths")) options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_recipe_job_options(full_args, line, env, options)) return *stop;
  auto gpus_value = last_value(full_args, line, {"--gpus"});
  if (gpus_value && !positive(gpus_value->text)) return usage_error(env, "--gpus takes a positive number");

  std::optional<Job> found = base_job(sources, options, rules, env);
  if (!found) return kExitFindings;
  Job base = std::move(*found);

  if (auto error = apply_dimension_flags(full_args, line, parsed.count("num-experts") > 0, base)) {
    return usage_error(env, *error);
  }
  Derived d = derive(base);
  if (!d.num_layers.known() || !d.hidden_size.known() || !d.num_attention_heads.known()) {
    if (!base.problems.empty()) {
      render_text(env.err, sources, base.problems, summarize(base.problems, options.paths.size()), false);
    }
    return usage_error(env, "plan needs the model: --recipe NAME, a config file, or --num-layers, --hidden-size and "
                            "--num-attention-heads");
  }

  Machine m;
  if (auto error = choose_machine(d, options, gpus_value, base, m)) return usage_error(env, *error);
  if (m.world > kMaxPlanGpus) {
    return usage_error(env, fmt::format("plan searches up to {} GPUs", kMaxPlanGpus));
  }
  PlanOptions plan;
  plan.world = m.world;
  plan.gpus_per_node = m.gpus_per_node;
  plan.nvlink_domain = nvlink_domain_size(*m.gpu, m.gpus_per_node);
  plan.top = static_cast<size_t>(*top);
  plan.thresholds = options.thresholds;
  for (const CommandLineValue& set : options.sets) {
    std::string key = set.text.substr(0, set.text.find('='));
    key.erase(0, key.find_first_not_of("+~"));
    plan.pinned.push_back(key);
  }
  bool gbs_assumed = !d.global_batch_size.known();
  plan.global_batch_size = gbs_assumed ? 1024 : *d.global_batch_size;

  PlanResult result = make_plan(base, plan, rules);
  result.global_batch_assumed = gbs_assumed;
  std::optional<Smallest> smallest;
  if (parsed.count("find-minimum") && !result.ranked.empty()) smallest = smallest_fitting(base, plan, rules);
  std::string title = base.recipe_name.empty() ? std::string("the model given on the command line")
                                               : fmt::format("recipe {}", base.recipe_name);
  if (base.primary != kNoFile && !sources.files[base.primary].synthetic) {
    title = fmt::format("{} ({})", sources.files[base.primary].path, title);
  }
  if (format == "json") {
    env.out << json_plan(title, m, base, result, plan.pinned, smallest).dump(2) << "\n";
  } else {
    print_text(env.out, title, m, base, result, describe_pins(base, plan.pinned), smallest);
  }
  return result.ranked.empty() ? kExitFindings : kExitClean;
}

}  // namespace mblint
