// .mblint.yaml (lint/resolve/project_config.h), directory walks (lint/base/file_walk.h)
// and how both reach a lint run (lint/resolve/project_run.h).
#include "lint/resolve/project_config.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "lint/base/file_walk.h"
#include "lint/cli/cli.h"
#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;
namespace fs = std::filesystem;

namespace {

struct Project {
  fs::path dir;
  SourceSet sources;
  LintOptions options;
  LintResult result;
  std::vector<Diagnostic> problems;

  Project() {
    dir = fs::canonical(test::make_temp_dir("mblint-project"));
    options.base_dir = dir;
    options.command_line_file = add_source(sources, "<command-line>", "mblint check", true);
  }
  ~Project() { fs::remove_all(dir); }

  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  ProjectConfig load(const std::string& text) {
    write(".mblint.yaml", text);
    problems.clear();
    sources.read_from_disk.clear();  // a run reads each file once; this test rewrites it
    return load_project_config(sources, dir / ".mblint.yaml", ".mblint.yaml", Span{}, rule_names(all_rules()), problems);
  }
  const LintResult& lint(std::vector<std::string> paths) {
    options.paths = std::move(paths);
    sources = SourceSet{};
    options.command_line_file = add_source(sources, "<command-line>", "mblint check", true);
    result = run_lint(sources, options, all_rules());
    return result;
  }
  std::vector<const Diagnostic*> of(const std::string& rule) const {
    std::vector<const Diagnostic*> out;
    for (const Diagnostic& d : result.diagnostics) {
      if (d.rule == rule) out.push_back(&d);
    }
    return out;
  }
  std::string text(Span span) const { return sources.files[span.file].text.substr(span.begin, span.end - span.begin); }
  uint32_t line(Span span) const { return line_col(sources.files[span.file], span.begin).line; }
  std::string path(Span span) const { return sources.files[span.file].path; }
};

using Run = test::CliRun;
using test::run_mblint;


const char* kBubble =
    "model:\n  pipeline_model_parallel_size: 8\n  virtual_pipeline_model_parallel_size: null\n"
    "train:\n  global_batch_size: 16\n";
const char* kTp16 =
    "model:\n  tensor_model_parallel_size: 16\n  pipeline_model_parallel_size: 1\n"
    "  context_parallel_size: 1\n";
const char* k70b = "llama3_70b_pretrain_32gpu_h100_bf16_config";

}  // namespace

TEST_CASE("glob: * and ? stay in a segment, ** spans segments, classes", "[project-config]") {
  CHECK(glob_match("conf/*.yaml", "conf/a.yaml"));
  CHECK_FALSE(glob_match("conf/*.yaml", "conf/sub/a.yaml"));
  CHECK(glob_match("conf/**/*.yaml", "conf/a.yaml"));
  CHECK(glob_match("conf/**/*.yaml", "conf/x/y/a.yaml"));
  CHECK(glob_match("third_party/**", "third_party/x/y.sh"));
  CHECK_FALSE(glob_match("third_party/**", "third_partyx/y.sh"));
  CHECK(glob_match("**/b.yaml", "b.yaml"));
  CHECK(glob_match("**/b.yaml", "a/b.yaml"));
  CHECK(glob_match("run_?.sh", "run_1.sh"));
  CHECK_FALSE(glob_match("run_?.sh", "run_12.sh"));
  CHECK(glob_match("run_[0-9].sh", "run_7.sh"));
  CHECK_FALSE(glob_match("run_[!0-9].sh", "run_7.sh"));
  CHECK(glob_match("./conf/*.yaml", "conf/a.yaml"));
  // A hostile pattern ends (the match is bounded), whatever it answers.
  std::string stars(60, '*');
  (void)glob_match(stars + "x", std::string(200, 'a'));
}

TEST_CASE("project exclude patterns: a pattern excludes a path, its parents, or a name at any depth", "[project-config]") {
  CHECK(excluded_by("third_party/**", "third_party/x/a.yaml"));
  CHECK(excluded_by("third_party/**", "third_party"));  // the walk prunes the directory
  CHECK(excluded_by("third_party", "third_party/x/a.yaml"));
  CHECK(excluded_by("build", "sub/build/a.yaml"));
  CHECK(excluded_by("/build", "build/a.yaml"));
  CHECK_FALSE(excluded_by("/build", "sub/build/a.yaml"));
  CHECK(excluded_by("*.tmp.yaml", "conf/x.tmp.yaml"));
  CHECK_FALSE(excluded_by("conf/*.yaml", "other/conf/a.yaml"));
  CHECK_FALSE(excluded_by("third_party/**", "src/third_party.yaml"));
}

TEST_CASE("walk: lintable names only, sorted, hidden and skipped directories left out", "[project-config]") {
  Project p;
  for (const char* name : {"b.yaml", "a.yml", "run.sh", "job.sbatch", "job.slurm", "notes.md", "x.json", "sub/c.yaml",
                           ".hidden.yaml", ".git/config.yaml", "skip/d.yaml", "sub/.venv/e.yaml"}) {
    p.write(name, "x: 1\n");
  }
  std::vector<fs::path> files = walk_directory(p.dir, [&](const fs::path& path) { return path.filename() == "skip"; });
  std::vector<std::string> names;
  for (const fs::path& file : files) names.push_back(file.lexically_relative(p.dir).generic_string());
  CHECK(names == std::vector<std::string>{"a.yml", "b.yaml", "job.sbatch", "job.slurm", "run.sh", "sub/c.yaml"});
}

TEST_CASE("discovery: the nearest .mblint.yaml above a directory wins", "[project-config]") {
  Project p;
  p.write(".mblint.yaml", "{}\n");
  p.write("team/.mblint.yaml", "{}\n");
  p.write("team/conf/deep/a.yaml", "x: 1\n");
  CHECK(find_project_config(p.dir / "team" / "conf" / "deep") == p.dir / "team" / ".mblint.yaml");
  CHECK(find_project_config(p.dir / "other") == p.dir / ".mblint.yaml");
  CHECK(find_project_config(p.dir) == p.dir / ".mblint.yaml");
}

TEST_CASE("every key is read with its location", "[project-config]") {
  Project p;
  p.write("launch/llama.sbatch", "#!/bin/bash\n");
  ProjectConfig config = p.load(
      "cluster: {gpu: gb200, gpus_per_node: 4, nvlink_domain: 72}\n"
      "versions: {megatron_core: \"0.15\", bridge: 0.5}\n"
      "rules: {disable: [pipeline-bubble, MB203], severity: {heads-divisible-by-tp: warning}}\n"
      "thresholds: {pipeline_bubble: 0.4, memory_headroom: 0.8}\n"
      "context:\n"
      "  - {files: \"conf/llama/*.yaml\", launch: launch/llama.sbatch}\n"
      "  - {files: \"conf/qwen/*.yaml\", recipe: qwen3_30b_a3b_pretrain_config, nodes: 2, gpus_per_node: 8,"
      " gpu: h100, set: [train.train_iters=5]}\n"
      "exclude: [\"third_party/**\"]\n");
  CHECK(p.problems.empty());
  REQUIRE(config.gpu);
  CHECK(config.gpu->text == "gb200");
  CHECK(p.text(config.gpu->span) == "gb200");
  CHECK(config.gpus_per_node->text == "4");
  CHECK(config.nvlink_domain->text == "72");
  CHECK(config.megatron_core_version->text == "0.15");
  CHECK(config.bridge_version->text == "0.5");
  CHECK(p.line(config.bridge_version->span) == 2);
  CHECK(config.disabled.count("pipeline-bubble") == 1);
  CHECK(config.disabled.count("tp-crosses-nvlink-domain") == 1);  // by code
  REQUIRE(config.severity.count("heads-divisible-by-tp") == 1);
  CHECK(config.severity.at("heads-divisible-by-tp").severity == Severity::Warning);
  CHECK(config.pipeline_bubble->value == Approx(0.4));
  CHECK(config.memory_headroom->value == Approx(0.8));
  REQUIRE(config.context.size() == 2);
  CHECK(config.context[0].launch_path == p.dir / "launch" / "llama.sbatch");
  CHECK(config.context[1].recipe->text == "qwen3_30b_a3b_pretrain_config");
  CHECK(config.context[1].nodes->text == "2");
  CHECK(config.context[1].gpu->text == "h100");
  REQUIRE(config.context[1].sets.size() == 1);
  CHECK(p.line(config.context[1].sets[0].span) == 7);
  REQUIRE(config.exclude.size() == 1);
  CHECK(config.exclude[0].text == "third_party/**");
}

TEST_CASE("unknown keys and wrong types are located at their line", "[project-config]") {
  Project p;
  p.load(
      "cluster:\n  gpu: h100\n  gpu_per_node: 8\nversions:\n  bridge: soon\nrules:\n  disable: [pipline-bubble]\n"
      "thresholds:\n  pipeline_bubble: 1.5\ncontext: {files: x}\nexclude: 3\nclustr: 1\n");
  std::vector<std::pair<uint32_t, std::string>> found;
  for (const Diagnostic& d : p.problems) {
    CHECK(d.rule == "project-config");
    CHECK(d.severity == Severity::Error);
    found.emplace_back(p.line(d.where), d.help);
  }
  std::sort(found.begin(), found.end());
  REQUIRE(found.size() == 7);
  CHECK(found[0] == std::pair<uint32_t, std::string>{3, "did you mean gpus_per_node?"});
  CHECK(found[1].first == 5);
  CHECK(found[2] == std::pair<uint32_t, std::string>{7, "did you mean pipeline-bubble?"});
  CHECK(found[3].first == 9);
  CHECK(found[4].first == 10);
  CHECK(found[5].first == 11);
  CHECK(found[6] == std::pair<uint32_t, std::string>{12, "did you mean cluster?"});
}

TEST_CASE("an empty config is every default; a broken one is a yaml-syntax error in it", "[project-config]") {
  Project p;
  ProjectConfig empty = p.load("");
  CHECK(p.problems.empty());
  CHECK_FALSE(empty.gpu);
  p.load("cluster: {gpu: h100\n");
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0].rule == "yaml-syntax");
}

TEST_CASE("context globs: first match wins, a glob without / matches at any depth", "[project-config]") {
  Project p;
  ProjectConfig config = p.load(
      "context:\n  - {files: \"conf/llama/*.yaml\", nodes: 1}\n"
      "  - {files: \"*.yaml\", nodes: 2}\n");
  REQUIRE(p.problems.empty());
  const ContextEntry* llama = find_context(config, p.dir / "conf" / "llama" / "a.yaml");
  REQUIRE(llama);
  CHECK(llama->nodes->text == "1");
  const ContextEntry* other = find_context(config, p.dir / "x" / "y" / "b.yaml");
  REQUIRE(other);
  CHECK(other->nodes->text == "2");
  CHECK_FALSE(find_context(config, p.dir / "run.sh"));
  CHECK_FALSE(find_context(config, p.dir.parent_path() / "outside.yaml"));
}

TEST_CASE("a file read twice keeps one id", "[project-config]") {
  SourceSet sources;
  FileId a = add_source(sources, "a.yaml", "x: 1\n");
  CHECK(add_source(sources, "a.yaml", "x: 1\n") == a);
  CHECK(add_source(sources, "a.yaml", "x: 2\n") != a);  // changed text: another version
  CHECK(add_source(sources, "<command-line>", "mblint", true) != add_source(sources, "<command-line>", "mblint", true));
}

TEST_CASE("rules: disable drops findings, severity changes them, upward from each file", "[project-config]") {
  Project p;
  p.options.recipe = CommandLineValue{k70b, {}};
  p.options.nodes = CommandLineValue{"8", {}};
  p.options.gpus_per_node = CommandLineValue{"8", {}};
  p.write("a.yaml", kBubble);
  p.write("quiet/b.yaml", kBubble);
  p.write("loud/c.yaml", kBubble);
  p.write("quiet/.mblint.yaml", "rules: {disable: [MB502]}\n");
  p.write("loud/.mblint.yaml", "rules: {severity: {pipeline-bubble: error}}\n");
  p.lint({"."});
  auto bubbles = p.of("pipeline-bubble");
  REQUIRE(bubbles.size() == 2);
  CHECK(p.path(bubbles[0]->where) == "a.yaml");
  CHECK(bubbles[0]->severity == Severity::Warning);
  CHECK(p.path(bubbles[1]->where) == "loud/c.yaml");
  CHECK(bubbles[1]->severity == Severity::Error);
}

TEST_CASE("thresholds reach the rules", "[project-config]") {
  Project p;
  p.options.recipe = CommandLineValue{k70b, {}};
  p.options.nodes = CommandLineValue{"8", {}};
  p.options.gpus_per_node = CommandLineValue{"8", {}};
  // PP 8 and 16 microbatches: the pipeline idles 7 of 16 + 7 slots, 30.4% of the step.
  p.write("a.yaml", kBubble);
  p.write(".mblint.yaml", "thresholds: {pipeline_bubble: 0.31}\n");
  p.lint({"a.yaml"});
  CHECK(p.of("pipeline-bubble").empty());
  p.write(".mblint.yaml", "thresholds: {pipeline_bubble: 0.30}\n");
  p.lint({"a.yaml"});
  CHECK(p.of("pipeline-bubble").size() == 1);
}

TEST_CASE("versions from the config; the command line wins", "[project-config]") {
  Project p;
  p.write("a.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  p.write(".mblint.yaml", "versions: {megatron_core: \"0.14\", bridge: \"0.5\"}\n");
  p.lint({"a.yaml"});
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].versions.megatron_core == Version{0, 14, 0});
  CHECK(p.result.jobs[0].versions.bridge == Version{0, 5, 0});
  CHECK(p.result.jobs[0].versions.bridge_given);
  p.options.bridge_version = CommandLineValue{"0.6", {}};
  p.lint({"a.yaml"});
  CHECK(p.result.jobs[0].versions.bridge == Version{0, 6, 0});
  CHECK(p.result.jobs[0].versions.megatron_core == Version{0, 14, 0});
}

TEST_CASE("cluster: the config's GPU beats a recipe's assumed one, not the launcher's or --gpu", "[project-config]") {
  Project p;
  p.options.recipe = CommandLineValue{k70b, {}};  // an H100 recipe
  p.write("a.yaml", kTp16);
  p.write(".mblint.yaml", "cluster: {gpu: gb200, gpus_per_node: 4}\n");
  p.lint({"a.yaml"});
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].cluster.gpu == "gb200");
  CHECK(p.path(p.result.jobs[0].cluster.gpu_where.value) == ".mblint.yaml");
  CHECK(p.result.jobs[0].cluster.gpus_per_node.value == 4);
  CHECK(*p.result.derived[0].nvlink_domain == 72);  // from the GPU type

  // The launcher names its GPUs and ranks per node: they stay.
  p.write("run.sbatch",
          "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gres=gpu:h100:8\n"
          "srun torchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file a.yaml\n");
  p.lint({"run.sbatch"});
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].cluster.gpu == "h100");
  CHECK(p.result.jobs[0].cluster.gpus_per_node.value == 8);

  p.options.gpu = CommandLineValue{"b200", {}};
  p.lint({"a.yaml"});
  CHECK(p.result.jobs[0].cluster.gpu == "b200");
}

TEST_CASE("cluster.nvlink_domain overrides the GPU type's, located in the config", "[project-config]") {
  Project p;
  p.write("a.yaml", kTp16);
  p.write(".mblint.yaml", "cluster: {gpu: h100, gpus_per_node: 8, nvlink_domain: 16}\n");
  p.options.nodes = CommandLineValue{"4", {}};
  p.lint({"a.yaml"});
  CHECK(*p.result.derived[0].nvlink_domain == 16);
  CHECK(p.of("tp-crosses-nvlink-domain").empty());
  p.write(".mblint.yaml", "cluster: {gpu: h100, gpus_per_node: 8, nvlink_domain: 4}\n");
  p.lint({"a.yaml"});
  auto crosses = p.of("tp-crosses-nvlink-domain");
  REQUIRE(crosses.size() == 1);
  bool located_in_config = false;
  for (const Note& note : crosses[0]->notes)
    located_in_config |= note.where.valid() && p.path(note.where) == ".mblint.yaml";
  CHECK(located_in_config);
}

TEST_CASE("the --config option replaces discovery; --no-config ignores every config", "[project-config]") {
  Project p;
  p.write("a.yaml", kBubble);
  p.write(".mblint.yaml", "rules: {disable: [pipeline-bubble]}\n");
  p.write("ci/strict.yaml", "rules: {severity: {pipeline-bubble: error}}\n");
  std::vector<std::string> job = {"--recipe", k70b, "--nodes", "8", "--gpus-per-node", "8"};
  auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = {"check", "a.yaml"};
    all.insert(all.end(), job.begin(), job.end());
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  Run discovered = run_mblint(args({}), p.dir);
  CHECK(discovered.code == 0);
  CHECK(discovered.out.find("pipeline-bubble") == std::string::npos);
  Run strict = run_mblint(args({"--config", "ci/strict.yaml"}), p.dir);
  CHECK(strict.code == 1);
  CHECK(strict.out.find("error: pipeline bubble") != std::string::npos);
  Run none = run_mblint(args({"--no-config"}), p.dir);
  CHECK(none.code == 0);
  CHECK(none.out.find("warning: pipeline bubble") != std::string::npos);
  Run both = run_mblint(args({"--no-config", "--config", "ci/strict.yaml"}), p.dir);
  CHECK(both.code == 2);
  Run missing = run_mblint(args({"--config", "nope.yaml"}), p.dir);
  CHECK(missing.code == 1);
  CHECK(missing.out.find("<command-line>") != std::string::npos);
  CHECK(missing.out.find("[unreadable-file]") != std::string::npos);
}

TEST_CASE("a directory walk lints a script with the YAML it runs, and that YAML once", "[project-config]") {
  Project p;
  p.write(".mblint.yaml", "cluster: {gpu: h100}\n");
  p.write("launch/run.sh",
          "#!/bin/bash\n#SBATCH --nodes=1\n"
          "torchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file ../conf/a.yaml\n");
  p.write("conf/a.yaml", kTp16);
  p.lint({"."});
  // Alone, a.yaml would be a job without a world size (tp-crosses-nvlink-domain
  // fires); with its script, all 8 ranks share one domain.
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].kind == InputKind::LaunchScript);
  CHECK(p.of("tp-crosses-nvlink-domain").empty());
  CHECK(p.of("world-size-divisibility").size() == 1);
  CHECK(p.result.files_checked == 2);
}

TEST_CASE("a YAML referenced by a script under another config is not linted again", "[project-config]") {
  Project p;
  p.write("launch/.mblint.yaml", "{}\n");
  p.write("launch/run.sh",
          "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file ../conf/a.yaml\n");
  p.write("conf/.mblint.yaml", "{}\n");
  p.write("conf/a.yaml", kTp16);
  p.lint({"conf", "launch"});
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].kind == InputKind::LaunchScript);
}

TEST_CASE("walked files that are no config stay silent; named ones are reported", "[project-config]") {
  Project p;
  p.write("helm/pod.yaml", "metadata:\n  name: {{ .Values.name }}\n  labels: [a\n");
  p.write("tools/install.sh", "#!/bin/bash\necho \"done\" >\n");
  p.write("conf/broken.yaml", "model:\n  tensor_model_parallel_size: [2\n");
  p.lint({"."});
  std::set<std::string> files;
  for (const Diagnostic& d : p.result.diagnostics) files.insert(p.path(d.where));
  CHECK(files == std::set<std::string>{"conf/broken.yaml"});  // names a config section: reported
  CHECK(p.result.files_checked == 3);
  p.lint({"helm/pod.yaml"});
  CHECK(p.of("yaml-syntax").size() == 1);
}

TEST_CASE("excludes apply to walked and named files, relative to the config", "[project-config]") {
  Project p;
  p.write("sub/.mblint.yaml", "exclude: [\"vendor/**\"]\n");
  p.write("sub/vendor/bad.yaml", "model:\n  tensor_model_parallel_size: [2\n");
  p.write("vendor/bad.yaml", "model:\n  tensor_model_parallel_size: [2\n");  // outside sub/: not excluded
  p.lint({"."});
  REQUIRE(p.of("yaml-syntax").size() == 1);
  CHECK(p.path(p.of("yaml-syntax")[0]->where) == "vendor/bad.yaml");
  p.lint({"sub/vendor/bad.yaml"});
  CHECK(p.result.diagnostics.empty());
  CHECK(p.result.files_checked == 0);
}

TEST_CASE("context: recipe, cluster and overrides for a YAML linted alone; flags win", "[project-config]") {
  Project p;
  p.write(".mblint.yaml",
          "context:\n  - {files: \"conf/*.yaml\", recipe: llama3_70b_pretrain_32gpu_h100_bf16_config, "
          "nodes: 3, gpus_per_node: 8, gpu: b200, set: [train.train_iters=7]}\n");
  p.write("conf/a.yaml", "model:\n  tensor_model_parallel_size: 4\n");
  p.lint({"conf/a.yaml"});
  REQUIRE(p.result.jobs.size() == 1);
  const Job& job = p.result.jobs[0];
  CHECK(job.recipe_name == "llama3_70b_pretrain_32gpu_h100_bf16_config");
  CHECK(p.path(job.recipe_where.value) == ".mblint.yaml");
  CHECK(job.cluster.nodes.value == 3);
  CHECK(job.cluster.gpu == "b200");
  CHECK(as_int(find_path(job.config, "train.train_iters")) == 7);
  p.options.nodes = CommandLineValue{"4", {}};
  p.options.sets = {CommandLineValue{"train.train_iters=9", {}}};
  p.lint({"conf/a.yaml"});
  CHECK(p.result.jobs[0].cluster.nodes.value == 4);
  CHECK(as_int(find_path(p.result.jobs[0].config, "train.train_iters")) == 9);
}

TEST_CASE("context launch: a YAML linted alone runs under the script that launches it", "[project-config]") {
  Project p;
  p.write(".mblint.yaml", "context:\n  - {files: \"conf/*.yaml\", launch: launch/run.sbatch}\n");
  p.write("launch/run.sbatch",
          "#!/bin/bash\n#SBATCH --gres=gpu:h100:8\nCONFIG=$1\n"
          "srun torchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file \"$CONFIG\"\n");
  p.write("conf/a.yaml", kTp16);
  p.write("conf/b.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  p.lint({"conf"});
  REQUIRE(p.result.jobs.size() == 2);
  for (const Job& job : p.result.jobs) {
    CHECK(job.kind == InputKind::LaunchScript);
    CHECK(job.cluster.gpus_per_node.value == 8);
    CHECK(job.files.size() == 2);
  }
  auto bad = p.of("world-size-divisibility");
  REQUIRE(bad.size() == 1);
  CHECK(p.path(bad[0]->where) == "conf/a.yaml");
  CHECK(p.result.files_checked == 2);
}

TEST_CASE("a walked YAML of another framework stays silent even with duplicate keys", "[project-config]") {
  Project p;
  p.write("rl/grpo.yaml", "policy:\n  model_name: x\n  model_name: y\nmodel:\n  a: 1\n");
  p.lint({"."});
  CHECK(p.result.diagnostics.empty());
  p.lint({"rl/grpo.yaml"});
  CHECK(p.of("duplicate-key").size() == 1);
}

TEST_CASE("walking each corpus repository: no noise on files that are no config", "[project-config][shared]") {
  auto shared = test::shared_or_skip("the corpus walk");
  if (!shared) return;
  fs::path corpus = *shared / "corpus";
  std::vector<fs::path> repositories;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (entry.is_directory()) repositories.push_back(entry.path());
  }
  std::sort(repositories.begin(), repositories.end());
  for (const fs::path& repository : repositories) {
    INFO(repository.filename().string());
    SourceSet sources;
    LintOptions options;
    options.base_dir = corpus;
    options.command_line_file = add_source(sources, "<command-line>", "mblint check", true);
    options.paths = {repository.filename().string()};
    LintResult result = run_lint(sources, options, all_rules());
    // The walk reads every lintable, non-hidden file.
    size_t expected = 0;
    for (auto it = fs::recursive_directory_iterator(repository); it != fs::recursive_directory_iterator(); ++it) {
      if (is_hidden_name(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && is_walked_name(it->path())) ++expected;
    }
    CHECK(result.files_checked == expected);
    // Every finding is in a file of a job that is a training config.
    std::set<FileId> config_files;
    size_t not_configs = 0;
    for (const Job& job : result.jobs) {
      bool config =
          job.kind != InputKind::NotAConfig && !(job.kind == InputKind::LaunchScript && job.entry == EntryPoint::None);
      if (config) config_files.insert(job.files.begin(), job.files.end());
      if (!config) ++not_configs;
    }
    for (const Diagnostic& d : result.diagnostics) {
      INFO(sources.files[d.where.file].path << ": " << d.message);
      CHECK(config_files.count(d.where.file) == 1);
    }
    WARN(repository.filename().string() << ": " << result.files_checked << " files, " << result.jobs.size() << " jobs ("
                                        << not_configs << " not a config), " << result.diagnostics.size()
                                        << " findings");
  }
}

TEST_CASE("a quoted override in a context is located inside its quotes", "[project-config]") {
  Project p;
  ProjectConfig config = p.load("context:\n  - {files: \"*.yaml\", set: [\"train.train_iters=5\", model.x=1]}\n");
  REQUIRE(config.context.size() == 1);
  REQUIRE(config.context[0].sets.size() == 2);
  CHECK(p.text(config.context[0].sets[0].span) == "train.train_iters=5");
  CHECK(p.text(config.context[0].sets[1].span) == "model.x=1");
}

TEST_CASE("a context launch that takes no --config-file is reported at the entry", "[project-config]") {
  Project p;
  p.write(".mblint.yaml", "context:\n  - {files: \"conf/*.yaml\", launch: run.sh}\n");
  p.write("run.sh", "#!/bin/bash\ntorchrun --nproc-per-node 8 scripts/training/run_recipe.py --recipe x_config\n");
  p.write("conf/a.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  p.write("conf/b.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  p.lint({"conf"});
  auto reported = p.of("project-config");
  REQUIRE(reported.size() == 1);  // once for the entry, not per file
  CHECK(reported[0]->severity == Severity::Warning);
  CHECK(p.text(reported[0]->where) == "run.sh");
}

TEST_CASE("hostile project configs and trees end with located diagnostics", "[project-config]") {
  Project p;
  p.write("a.yaml", "model:\n  tensor_model_parallel_size: 2\n");
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [" + std::string(10, ' ') + "]\n";
    std::string items;
    for (int i = 0; i < 10; ++i) items += std::string(i ? ", " : "") + "*" + static_cast<char>(c - 1);
    bomb.replace(bomb.rfind('[') + 1, 10, items);
  }
  for (const std::string& text : {bomb, std::string(2000, '[') + "\n", std::string("cluster: \x01\x02\xff\n", 14),
                                  "exclude: [\"" + std::string(200, '*') + "x\"]\ncontext:\n  - {files: \"" +
                                      std::string(100, '*') + "\", nodes: 1}\n"}) {
    p.write(".mblint.yaml", text);
    p.lint({"."});
    CHECK(p.result.files_checked <= 1);
    for (const Diagnostic& d : p.result.diagnostics) {
      INFO(d.message);
      // An unreadable config has no bytes to point at: its message names it.
      CHECK((d.where.valid() || (d.rule == "unreadable-file" && d.message.find(".mblint.yaml") != std::string::npos)));
    }
  }
  // A symlink loop is not followed.
  std::error_code error;
  fs::create_directory_symlink(p.dir, p.dir / "loop", error);
  p.write(".mblint.yaml", "{}\n");
  p.lint({"."});
  CHECK(p.result.files_checked == 1);
}

TEST_CASE("context launch: the script's unsaved text (the editor's overlay) is what the YAML is linted with",
          "[project-config]") {
  Project p;
  p.write(".mblint.yaml", "context:\n  - {files: \"conf/*.yaml\", launch: launch/run.sbatch}\n");
  std::string script = "#!/bin/bash\nCONFIG=$1\n"
                       "srun torchrun --nproc-per-node 8 pretrain_llama3_8b.py --config-file \"$CONFIG\"\n";
  p.write("launch/run.sbatch", script);
  p.write("conf/a.yaml", "model:\n  tensor_model_parallel_size: 3\n  pipeline_model_parallel_size: 1\n"
                         "  context_parallel_size: 1\n");
  p.lint({"conf/a.yaml"});
  CHECK(p.of("world-size-divisibility").size() == 1);  // 8 GPUs on disk
  // The language server passes open buffers as the overlay: 6 GPUs unsaved.
  std::string edited = script;
  edited.replace(edited.find("node 8"), 6, "node 6");
  p.options.overlay[p.dir / "launch" / "run.sbatch"] = edited;
  p.lint({"conf/a.yaml"});
  REQUIRE(p.result.jobs.size() == 1);
  CHECK(p.result.jobs[0].cluster.gpus_per_node.value == 6);
  CHECK(p.of("world-size-divisibility").empty());
}
