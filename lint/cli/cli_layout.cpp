// `mblint layout FILE... [job options]`: which global ranks form each
// parallel group of a job (Megatron-Core's rank order), how many groups
// cross node and NVLink-domain boundaries, and a per-node grid.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/facts/job_layout.h"
#include "lint/report/render.h"
#include "lint/resolve/job_builder.h"
#include "lint/run/lint.h"

namespace mblint {

namespace {

// Every group is listed rank by rank: keep that bounded.
constexpr int64_t kMaxLayoutRanks = 65536;

cxxopts::Options layout_options() {
  cxxopts::Options options("mblint layout",
                           "Show which global ranks form each parallel group and which groups cross nodes or "
                           "NVLink domains.");
  options.custom_help("[options]");
  options.positional_help("[FILE...]");
  add_job_options(options);
  options.add_options("output")
      ("format", "output format: text or json", cxxopts::value<std::string>()->default_value("text"))
      ("groups", "groups of each kind listed in text output (0: all)",
       cxxopts::value<std::string>()->default_value("4"))
      ("show-nodes", "nodes drawn in the grid (0: all)", cxxopts::value<std::string>()->default_value("4"))
      ("h,help", "show this help")
      ("paths", "files describing the job", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"paths"});
  return options;
}

// What the machine looks like: blocks of consecutive ranks.
struct Machine {
  int64_t gpus_per_node = 0;  // 0: unknown
  int64_t domain = 0;         // NVLink domain size; 0: unknown
  std::string gpu;            // display name, "" when unknown
  std::string domain_how;
};

Machine machine_of(const Derived& d) {
  Machine m;
  if (d.gpus_per_node.known()) m.gpus_per_node = *d.gpus_per_node;
  if (d.nvlink_domain.known()) m.domain = *d.nvlink_domain;
  if (d.gpu) m.gpu = d.gpu->display;
  m.domain_how = d.nvlink_domain.how;
  return m;
}

// The group kinds worth showing: expert kinds only for a MoE model (or a
// job that sets EP > 1).
std::vector<const GroupKind*> shown_kinds(const Derived& d, const RankLayout& layout) {
  bool moe = (d.num_moe_experts.known() && *d.num_moe_experts > 0) || layout.sizes.ep > 1;
  std::vector<const GroupKind*> kinds;
  for (const GroupKind& kind : group_kinds()) {
    if (kind.expert && !moe) continue;
    kinds.push_back(&kind);
  }
  return kinds;
}

// "0-7", "0,8,16,24", "0,8,...,248 (32 ranks, stride 8)".
std::string format_ranks(std::span<const int64_t> ranks) {
  if (ranks.empty()) return "";
  int64_t stride = ranks.size() > 1 ? ranks[1] - ranks[0] : 1;
  bool progression = true;
  for (size_t i = 1; i < ranks.size(); ++i) progression = progression && ranks[i] - ranks[i - 1] == stride;
  if (progression && stride == 1 && ranks.size() > 2) return fmt::format("{}-{}", ranks.front(), ranks.back());
  if (ranks.size() <= 8) return fmt::format("{}", fmt::join(ranks, ","));
  if (progression) {
    return fmt::format("{},{},...,{} ({} ranks, stride {})", ranks[0], ranks[1], ranks.back(), ranks.size(), stride);
  }
  return fmt::format("{},...,{} ({} ranks)", fmt::join(ranks.subspan(0, 6), ","), ranks.back(), ranks.size());
}

std::string grid_text(const RankGrid& grid, bool expert) {
  std::vector<std::string> parts;
  for (const GridAxis& axis : grid.axes) {
    std::string name = axis.name;
    if (expert && name == "tp") name = "etp";
    if (expert && name == "dp") name = "edp";
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    parts.push_back(fmt::format("{} {}", name, axis.size));
  }
  return fmt::format("{}", fmt::join(parts, " x "));
}

// Per rank: the index of its group of one kind, and whether that group
// leaves the rank's node / NVLink domain.
struct KindPlacement {
  const GroupKind* kind = nullptr;
  std::vector<int64_t> group_of;  // by rank
  std::vector<char> leaves_node;  // by group
  std::vector<char> leaves_domain;
  Crossing nodes, domains;
  int64_t size = 0;
  // A kind whose groups are exactly those of an earlier kind (tp-cp with
  // CP 1 is tp), or single ranks: listed once in the table, not drawn.
  std::string same_as;
};

void mark_repeats(std::vector<KindPlacement>& placements) {
  for (size_t i = 0; i < placements.size(); ++i) {
    if (placements[i].size == 1) {
      placements[i].same_as = "single ranks";
      continue;
    }
    for (size_t j = 0; j < i; ++j) {
      if (placements[j].same_as.empty() && placements[j].kind->expert == placements[i].kind->expert &&
          placements[j].group_of == placements[i].group_of) {
        placements[i].same_as = fmt::format("same as {}", placements[j].kind->key);
        break;
      }
    }
  }
}

KindPlacement place(const RankLayout& layout, const GroupKind& kind, const Machine& m) {
  KindPlacement p;
  p.kind = &kind;
  const RankGrid& grid = grid_for(layout, kind);
  p.group_of.assign(static_cast<size_t>(layout.sizes.world), 0);
  int64_t index = 0;
  for_each_group(grid, kind.axes, [&](std::span<const int64_t> ranks) {
    auto spans = [&](int64_t block) {
      return block > 0 && std::any_of(ranks.begin(), ranks.end(),
                                      [&](int64_t r) { return r / block != ranks[0] / block; });
    };
    p.leaves_node.push_back(spans(m.gpus_per_node));
    p.leaves_domain.push_back(spans(m.domain));
    for (int64_t r : ranks) p.group_of[static_cast<size_t>(r)] = index;
    ++index;
  });
  p.size = index > 0 ? layout.sizes.world / index : 0;
  if (m.gpus_per_node > 0) p.nodes = count_crossings(grid, kind.axes, m.gpus_per_node);
  if (m.domain > 0) p.domains = count_crossings(grid, kind.axes, m.domain);
  return p;
}

std::string job_title(const SourceSet& sources, const Job& job) {
  std::string title = job.primary != kNoFile && !sources.files[job.primary].synthetic
                          ? sources.files[job.primary].path
                          : std::string("command line");
  if (!job.recipe_name.empty()) title += fmt::format(" (recipe {})", job.recipe_name);
  return title;
}

void print_header(std::ostream& out, const std::string& title, const RankLayout& layout, const Machine& m,
                  bool expert_shown) {
  const ParallelSizes& s = layout.sizes;
  out << fmt::format("layout of {}\n", title);
  if (m.gpus_per_node > 0) {
    int64_t nodes = s.world / m.gpus_per_node;
    out << fmt::format("world size {} = {} node{} x {} GPUs", s.world, nodes, nodes == 1 ? "" : "s", m.gpus_per_node);
  } else {
    out << fmt::format("world size {} (GPUs per node unknown)", s.world);
  }
  if (m.domain > 0) {
    out << fmt::format("; NVLink domain {} GPUs{}", m.domain, m.gpu.empty() ? std::string() : fmt::format(" ({})", m.gpu));
  }
  out << "\n";
  if (m.domain > 0 && m.domain_how.find("assuming") != std::string::npos) out << "  note: " << m.domain_how << "\n";
  if (m.gpus_per_node > 0 && m.domain > m.gpus_per_node) {
    out << fmt::format("  note: an NVLink domain spans {} nodes; consecutive nodes are assumed to share it (the "
                       "scheduler decides)\n",
                       m.domain / m.gpus_per_node);
  }
  out << fmt::format("rank order {} (first axis varies fastest)\n", rank_order_name(s.order));
  out << fmt::format("  decoder grid  {}  (DP = {} / (TP x CP x PP))\n", grid_text(layout.decoder, false), s.world);
  if (expert_shown) {
    out << fmt::format("  expert grid   {}  (EDP = {} / (ETP x EP x PP); CP folds into EDP)\n",
                       grid_text(layout.expert, true), s.world);
  }
}

void print_table(std::ostream& out, const Machine& m, const std::vector<KindPlacement>& placements) {
  out << fmt::format("{:<22} {:>5} {:>7} {:>14} {:>16}\n", "group", "size", "groups", "crossing nodes",
                     "crossing NVLink");
  for (const KindPlacement& p : placements) {
    int64_t count = static_cast<int64_t>(p.leaves_node.size());
    std::string nodes = m.gpus_per_node > 0 ? std::to_string(p.nodes.crossing) : "?";
    std::string domains = m.domain > 0 ? std::to_string(p.domains.crossing) : "?";
    std::string line = fmt::format("{:<22} {:>5} {:>7} {:>14} {:>16}", p.kind->key, p.size, count, nodes, domains);
    if (!p.same_as.empty()) line += fmt::format("  ({})", p.same_as);
    out << line << "\n";
  }
}

void print_group_lists(std::ostream& out, const RankLayout& layout, const std::vector<KindPlacement>& placements,
                       int64_t groups_listed) {
  out << "\nranks of each group (every group: --groups 0 or --format json):\n";
  for (const KindPlacement& p : placements) {
    if (!p.same_as.empty()) continue;
    std::vector<std::vector<int64_t>> groups = rank_groups(grid_for(layout, *p.kind), p.kind->axes);
    std::vector<std::string> shown;
    size_t limit = groups_listed > 0 ? static_cast<size_t>(groups_listed) : groups.size();
    for (size_t i = 0; i < groups.size() && i < limit; ++i) shown.push_back(fmt::format("[{}]", format_ranks(groups[i])));
    if (groups.size() == limit + 1) {
      shown.push_back(fmt::format("[{}]", format_ranks(groups.back())));
    } else if (groups.size() > limit) {
      shown.push_back(fmt::format("... {} more ... [{}]", groups.size() - limit - 1, format_ranks(groups.back())));
    }
    out << fmt::format("  {:<22} {}  ({})\n", p.kind->key, fmt::join(shown, " "), p.kind->description);
  }
}

void print_node(std::ostream& out, int64_t node, const Machine& m, int64_t width,
                const std::vector<KindPlacement>& placements) {
  int64_t first = node * m.gpus_per_node;
  out << fmt::format("node {}", node);
  if (m.domain > 0) out << fmt::format(" (NVLink domain {})", first / m.domain);
  out << "\n";
  out << fmt::format("  {:<22}", "gpu");
  for (int64_t g = 0; g < m.gpus_per_node; ++g) out << fmt::format("{:>{}}", g, width);
  out << fmt::format("\n  {:<22}", "rank");
  for (int64_t g = 0; g < m.gpus_per_node; ++g) out << fmt::format("{:>{}}", first + g, width);
  out << "\n";
  for (const KindPlacement& p : placements) {
    if (!p.same_as.empty()) continue;
    out << fmt::format("  {:<22}", p.kind->key);
    for (int64_t g = 0; g < m.gpus_per_node; ++g) {
      auto group = static_cast<size_t>(p.group_of[static_cast<size_t>(first + g)]);
      const char* mark = p.leaves_domain[group] ? "!" : p.leaves_node[group] ? "*" : "";
      out << fmt::format("{:>{}}", fmt::format("{}{}", group, mark), width);
    }
    out << "\n";
  }
}

void print_node_grid(std::ostream& out, const RankLayout& layout, const Machine& m,
                     const std::vector<KindPlacement>& placements, int64_t nodes_shown) {
  const ParallelSizes& s = layout.sizes;
  if (m.gpus_per_node <= 0) {
    out << "\nno node grid: the number of GPUs per node is not known (pass --nodes and --gpus-per-node)\n";
    return;
  }
  int64_t nodes = s.world / m.gpus_per_node;
  int64_t drawn = nodes_shown > 0 ? std::min(nodes, nodes_shown) : nodes;
  int64_t width = std::max<int64_t>(3, static_cast<int64_t>(std::to_string(s.world).size()) + 2);
  out << "\nnode grid: each cell is the rank's group number; * the group leaves the node, ! it leaves the NVLink "
         "domain\n";
  for (int64_t node = 0; node < drawn; ++node) print_node(out, node, m, width, placements);
  if (drawn < nodes) {
    out << fmt::format("... {} more node{} (--show-nodes 0 draws all)\n", nodes - drawn, nodes - drawn == 1 ? "" : "s");
  }
}

void print_text_layout(std::ostream& out, const std::string& title, const RankLayout& layout, const Machine& m,
                       const std::vector<KindPlacement>& placements, const std::vector<std::string>& assumed,
                       int64_t groups_listed, int64_t nodes_shown) {
  bool expert_shown = std::any_of(placements.begin(), placements.end(),
                                  [](const KindPlacement& p) { return p.kind->expert; });
  print_header(out, title, layout, m, expert_shown);
  for (const std::string& note : assumed) out << "  note: " << note << "\n";
  out << "\n";
  print_table(out, m, placements);
  print_group_lists(out, layout, placements, groups_listed);
  print_node_grid(out, layout, m, placements, nodes_shown);
}

nlohmann::json json_layout(const std::string& title, const RankLayout& layout, const Machine& m,
                           const std::vector<KindPlacement>& placements) {
  const ParallelSizes& s = layout.sizes;
  nlohmann::json j;
  j["job"] = title;
  j["world_size"] = s.world;
  j["gpus_per_node"] = m.gpus_per_node > 0 ? nlohmann::json(m.gpus_per_node) : nlohmann::json(nullptr);
  j["nvlink_domain"] = m.domain > 0 ? nlohmann::json(m.domain) : nlohmann::json(nullptr);
  j["order"] = rank_order_name(s.order);
  j["sizes"] = {{"tp", s.tp}, {"cp", s.cp}, {"pp", s.pp}, {"dp", layout.dp},
                {"ep", s.ep}, {"etp", s.etp}, {"edp", layout.edp}};
  auto grid_json = [](const RankGrid& grid) {
    nlohmann::json axes = nlohmann::json::array();
    for (const GridAxis& a : grid.axes) axes.push_back({{"axis", a.name}, {"size", a.size}});
    return axes;
  };
  j["decoder_grid"] = grid_json(layout.decoder);
  j["expert_grid"] = grid_json(layout.expert);
  nlohmann::json groups = nlohmann::json::array();
  for (const KindPlacement& p : placements) {
    nlohmann::json g;
    g["kind"] = p.kind->key;
    g["description"] = p.kind->description;
    g["grid"] = p.kind->expert ? "expert" : "decoder";
    g["crossing_nodes"] = m.gpus_per_node > 0 ? nlohmann::json(p.nodes.crossing) : nlohmann::json(nullptr);
    g["crossing_nvlink_domains"] = m.domain > 0 ? nlohmann::json(p.domains.crossing) : nlohmann::json(nullptr);
    g["ranks"] = rank_groups(grid_for(layout, *p.kind), p.kind->axes);
    groups.push_back(std::move(g));
  }
  j["groups"] = std::move(groups);
  return j;
}

std::optional<int64_t> count_option(const cxxopts::ParseResult& parsed, const char* name) {
  std::string text = parsed[name].as<std::string>();
  if (text.empty() || !std::all_of(text.begin(), text.end(), ::isdigit) || text.size() > 9) return std::nullopt;
  return std::stoll(text);
}

}  // namespace

int run_layout(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = layout_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  std::string format = parsed["format"].as<std::string>();
  if (format != "text" && format != "json") return usage_error(env, fmt::format("unknown --format '{}'", format));
  auto groups_listed = count_option(parsed, "groups");
  auto nodes_shown = count_option(parsed, "show-nodes");
  if (!groups_listed || !nodes_shown) return usage_error(env, "--groups and --show-nodes take a number");
  if (!parsed.count("paths") && !parsed.count("recipe")) {
    return usage_error(env, "layout needs files or --recipe (see mblint layout --help)");
  }

  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "layout", args);
  LintOptions options;
  if (parsed.count("paths")) options.paths = parsed["paths"].as<std::vector<std::string>>();
  if (auto stop = read_recipe_job_options(full_args, line, env, options)) return *stop;

  std::vector<Job> jobs;
  if (options.paths.empty()) {
    jobs.push_back(job_from_command_line(sources, options));
  } else {
    BuildResult built = build_jobs(sources, options);
    if (!built.problems.empty()) {
      fill_rule_codes(built.problems, rules);
      render_text(env.err, sources, built.problems, summarize(built.problems, built.files_checked), false);
      return kExitFindings;
    }
    jobs = std::move(built.jobs);
  }
  nlohmann::json all = nlohmann::json::array();
  int status = kExitClean;
  bool first = true;
  for (const Job& job : jobs) {
    if (job.kind == InputKind::NotAConfig) continue;
    Derived d = derive(job);
    std::string title = job_title(sources, job);
    std::string why;
    std::vector<std::string> assumed;
    auto layout = job_rank_layout(job, d, &why, &assumed);
    if (!layout) {
      env.err << fmt::format("mblint: no rank layout for {}: {}\n", title, why);
      status = kExitFindings;
      continue;
    }
    if (layout->sizes.world > kMaxLayoutRanks) {
      env.err << fmt::format("mblint: {}: layout draws up to {} ranks, this job has {}\n", title, kMaxLayoutRanks,
                             layout->sizes.world);
      status = kExitFindings;
      continue;
    }
    Machine m = machine_of(d);
    std::vector<KindPlacement> placements;
    for (const GroupKind* kind : shown_kinds(d, *layout)) placements.push_back(place(*layout, *kind, m));
    mark_repeats(placements);
    if (format == "json") {
      all.push_back(json_layout(title, *layout, m, placements));
      all.back()["assumed"] = assumed;
      continue;
    }
    if (!first) env.out << "\n";
    first = false;
    print_text_layout(env.out, title, *layout, m, placements, assumed, *groups_listed, *nodes_shown);
  }
  if (format == "json") env.out << all.dump(2) << "\n";
  return status;
}

}  // namespace mblint
