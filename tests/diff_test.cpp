// `mblint diff` (lint/diff, lint/cli/cli_diff.cpp) over throwaway git
// repositories: what a change does to each job, the gate's exit codes, the
// JSON contract (docs/diff.md), and the revision side read from git, never
// from the disk.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/base/file_reader.h"
#include "lint/cli/cli.h"
#include "lint/diff/git_repo.h"
#include "lint/resolve/project_config.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;
using json = nlohmann::ordered_json;  // the keys in the order written
namespace fs = std::filesystem;

namespace {

using Run = test::CliRun;

// A git repository in a temp dir, with its own user so commits work anywhere.
struct Repo {
  fs::path dir;
  Repo() {
    dir = fs::canonical(test::make_temp_dir("mblint-diff"));
    git({"init", "-q"});
    git({"config", "user.name", "mblint test"});
    git({"config", "user.email", "test@example.com"});
    git({"config", "commit.gpgsign", "false"});
  }
  ~Repo() { fs::remove_all(dir); }
  void git(const std::vector<std::string>& args) const { REQUIRE(run_git(dir, args).status == 0); }
  void write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir / name).parent_path());
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  void commit(const std::string& message) const {
    git({"add", "-A"});
    git({"commit", "-q", "-m", message});
  }
  // `file` committed with `before`, then `after` in the working tree.
  void change(const std::string& file, const std::string& before, const std::string& after) const {
    write(file, before);
    commit("base");
    write(file, after);
  }
  Run diff(std::vector<std::string> args) const {
    args.insert(args.begin(), "diff");
    return test::run_mblint(args, dir);
  }
  json diff_json(std::vector<std::string> args) const {
    args.push_back("--format");
    args.push_back("json");
    Run run = diff(args);
    INFO(run.out << run.err);
    return json::parse(run.out);
  }
};

// The recipe's context parallelism is 2: on 16 GPUs, TP 2 leaves DP 4.
const char* kOtherRecipe = "llama3_8b_pretrain_8gpu_h100_fp8cs_config";  // CP 1, full recompute
const char* kRecipeSetting = "model.context_parallel_size";

// Tensor parallelism with sequence parallelism, which TP > 1 wants (tp-without-sequence-parallel).
std::string tp(const std::string& size) {
  return "model.tensor_model_parallel_size=" + size + " model.sequence_parallel=true";
}

// Llama 3 8B on two nodes of eight H100s; `settings` are Hydra overrides.
std::string launch(const std::string& settings, const std::string& recipe = "llama3_8b_pretrain_8gpu_h100_bf16_config") {
  return "#!/bin/bash\n"
         "#SBATCH --nodes=2\n"
         "#SBATCH --gpus-per-node=8\n"
         "srun torchrun --nnodes 2 --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
         "  --recipe " + recipe + " \\\n"
         "  " + settings + "\n";
}

const json* find_setting(const json& job, const std::string& key) {
  for (const json& s : job["settings"]) {
    if (s["key"] == key) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("diff: a TP change halves DP, lowers the memory, brings no finding, passes", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2")), launch(tp("4")));
  Run run = repo.diff({});
  INFO(run.out << run.err);
  CHECK(run.code == 0);
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& job = doc["jobs"][0];
  CHECK(job["file"] == "launch/train.sbatch");
  CHECK(job["line"] == 4);
  CHECK(job["status"] == "changed");
  const json* tp = find_setting(job, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK((*tp)["before"] == 2);
  CHECK((*tp)["after"] == 4);
  CHECK((*tp)["before_at"] == "launch/train.sbatch:6");
  CHECK((*tp)["after_at"] == "launch/train.sbatch:6");
  CHECK((*tp)["after_layer"] == "override");
  CHECK(job["derived"]["world_size"]["before"] == 16);
  CHECK(job["derived"]["world_size"]["after"] == 16);
  CHECK(job["derived"]["data_parallel_size"]["before"] == 4);
  CHECK(job["derived"]["data_parallel_size"]["after"] == 2);
  CHECK(job["derived"]["microbatches"]["before"] == 32);
  CHECK(job["derived"]["microbatches"]["after"] == 64);
  // The memory model's figures for Llama 3 8B, CP 2, on H100 (docs/memory.md);
  // the perf recipe keeps the model's 128,256-token vocabulary unpadded
  // (use_tokenizer_vocab_size off: training/setup.py), 20.44 GiB when it was
  // padded to a multiple of 128 x TP.
  CHECK(job["derived"]["peak_memory_gib"]["before"] == 33.63);
  CHECK(job["derived"]["peak_memory_gib"]["after"] == 20.43);
  CHECK(job["derived"]["step_time_s"]["after"] > job["derived"]["step_time_s"]["before"]);
  CHECK(job["diagnostics"]["new"].empty());
  CHECK(job["diagnostics"]["fixed"].empty());
  CHECK(doc["summary"]["new_errors"] == 0);
  CHECK(doc["summary"]["regressions"].empty());
}

TEST_CASE("diff: a change that brings an error fails the gate and lists it as new", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2")), launch(tp("3")));
  Run run = repo.diff({});
  INFO(run.out << run.err);
  CHECK(run.code == 1);
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& added = doc["jobs"][0]["diagnostics"]["new"];
  REQUIRE(added.size() == 1);
  CHECK(added[0]["rule"] == "cp-sequence-parallel-divisibility");
  CHECK(added[0]["severity"] == "error");
  CHECK(added[0]["file"] == "launch/train.sbatch");
  CHECK(added[0]["line"] == 6);
  CHECK(doc["jobs"][0]["diagnostics"]["fixed"].empty());
  CHECK(doc["summary"]["new_errors"] == 1);
  // The reverse fixes the error, which never fails the gate.
  repo.commit("bad");
  repo.write("launch/train.sbatch", launch(tp("2")));
  Run back = repo.diff({});
  CHECK(back.code == 0);
  json fixed = repo.diff_json({});
  CHECK(fixed["jobs"][0]["diagnostics"]["fixed"].size() == added.size());
  CHECK(fixed["summary"]["new_errors"] == 0);
}

TEST_CASE("diff: a micro-batch raise fails over a memory limit and passes under it", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2") + " train.micro_batch_size=1"),
              launch(tp("2") + " train.micro_batch_size=2"));
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& memory = doc["jobs"][0]["derived"]["peak_memory_gib"];
  CHECK(memory["before"] == 33.63);
  CHECK(memory["after"] == 43.56);  // 9.93 GiB more
  CHECK(doc["jobs"][0]["diagnostics"]["new"].empty());
  CHECK(repo.diff({}).code == 0);  // no limit: the rise alone does not fail

  CHECK(repo.diff({"--max-peak-memory-increase-gib", "9.5"}).code == 1);
  CHECK(repo.diff({"--max-peak-memory-increase-gib", "10"}).code == 0);
  json over = repo.diff_json({"--max-peak-memory-increase-gib", "9.5"});
  REQUIRE(over["summary"]["regressions"].size() == 1);
  const json& regression = over["summary"]["regressions"][0];
  CHECK(regression["limit"] == "max_peak_memory_increase_gib");
  CHECK(regression["threshold"] == 9.5);
  CHECK(regression["before"] == 33.63);
  CHECK(regression["after"] == 43.56);
  CHECK(regression["file"] == "launch/train.sbatch");
  CHECK(regression["line"] == 4);
  CHECK(regression["message"] == "peak memory per GPU rises by 9.93 GiB (33.63 -> 43.56; limit 9.5 GiB)");
  // 43.56 of the H100's 79.11 GiB is 55.1%.
  CHECK(repo.diff({"--max-memory-fraction", "0.55"}).code == 1);
  CHECK(repo.diff({"--max-memory-fraction", "0.56"}).code == 0);

  // The same limits from .mblint.yaml's diff: section; a flag wins.
  repo.write(".mblint.yaml", "diff:\n  max_peak_memory_increase_gib: 9.5\n");
  CHECK(repo.diff({}).code == 1);
  CHECK(repo.diff({"--max-peak-memory-increase-gib", "10"}).code == 0);
  repo.write(".mblint.yaml", "diff:\n  max_peak_memory_increase_gib: 10\n");
  CHECK(repo.diff({}).code == 0);
  // A limit that does not read stops the gate rather than pass without it.
  repo.write(".mblint.yaml", "diff:\n  max_peak_memory_increase: 12\n");
  Run typo = repo.diff({});
  CHECK(typo.code == 2);
  CHECK(typo.err.find(".mblint.yaml:2:3: error: unknown key 'max_peak_memory_increase' in diff: mblint ignores it") !=
        std::string::npos);
  CHECK(typo.err.find("did you mean max_peak_memory_increase_gib?") != std::string::npos);
}

TEST_CASE("diff: a recipe change is attributed to the recipe", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2") + " train.micro_batch_size=1"),
              launch(tp("2") + " train.micro_batch_size=1", kOtherRecipe));
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& job = doc["jobs"][0];
  CHECK(job["status"] == "changed");
  const json* moved = find_setting(job, kRecipeSetting);
  REQUIRE(moved);
  CHECK((*moved)["after_layer"] == "recipe");
  CHECK((*moved)["after_at"] == "launch/train.sbatch:5");
  CHECK((*moved)["before_at"] == "launch/train.sbatch:5");
  CHECK((*moved)["before_layer"] == "recipe");
  CHECK((*moved)["before"] == 2);
  CHECK((*moved)["after"] == 1);
}

TEST_CASE("diff: a file added and a file removed", "[diff]") {
  Repo repo;
  repo.write("launch/old.sbatch", launch(tp("2")));
  repo.write("launch/kept.sbatch", launch(tp("2")));
  repo.commit("base");
  fs::remove(repo.dir / "launch/old.sbatch");
  repo.write("launch/new.sbatch", launch(tp("4")));  // untracked: the working tree has it
  json doc = repo.diff_json({"--all"});
  REQUIRE(doc["jobs"].size() == 3);
  CHECK(doc["jobs"][0]["file"] == "launch/kept.sbatch");
  CHECK(doc["jobs"][0]["status"] == "unchanged");
  CHECK(doc["jobs"][1]["file"] == "launch/new.sbatch");
  CHECK(doc["jobs"][1]["status"] == "added");
  CHECK(doc["jobs"][1]["derived"]["data_parallel_size"]["before"].is_null());
  CHECK(doc["jobs"][1]["derived"]["data_parallel_size"]["after"] == 2);
  CHECK(doc["jobs"][2]["file"] == "launch/old.sbatch");
  CHECK(doc["jobs"][2]["status"] == "removed");
  CHECK(doc["jobs"][2]["derived"]["data_parallel_size"]["before"] == 4);
  CHECK(doc["summary"]["added"] == 1);
  CHECK(doc["summary"]["removed"] == 1);
  CHECK(doc["summary"]["unchanged"] == 1);
  // Without --all the unchanged job is counted, not listed.
  CHECK(repo.diff_json({})["jobs"].size() == 2);
  // Paths after the revision: only those files, shown as named.
  json kept = repo.diff_json({"HEAD", "launch/kept.sbatch", "--all"});
  REQUIRE(kept["jobs"].size() == 1);
  CHECK(kept["jobs"][0]["file"] == "launch/kept.sbatch");
  CHECK(kept["jobs"][0]["status"] == "unchanged");
  json under = repo.diff_json({"launch"});
  CHECK(under["summary"]["added"] == 1);
  CHECK(under["summary"]["removed"] == 1);
}

TEST_CASE("diff: a change in a sourced file moves the script's job, read at each revision", "[diff]") {
  Repo repo;
  repo.write("launch/env.sh", "TP=2\n");
  repo.write("launch/train.sbatch", std::string("source launch/env.sh\n") + launch(tp("$TP")));
  repo.commit("base");
  repo.write("launch/env.sh", "TP=4\n");
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& job = doc["jobs"][0];
  CHECK(job["file"] == "launch/train.sbatch");
  CHECK(job["status"] == "changed");
  const json* tp = find_setting(job, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK((*tp)["before"] == 2);
  CHECK((*tp)["after"] == 4);
  CHECK((*tp)["before_at"] == "launch/env.sh:1");
  CHECK((*tp)["after_at"] == "launch/env.sh:1");
  CHECK(job["derived"]["data_parallel_size"]["before"] == 4);
  CHECK(job["derived"]["data_parallel_size"]["after"] == 2);
}

TEST_CASE("diff: two revisions are both read from git, not from the disk", "[diff]") {
  Repo repo;
  repo.write("launch/train.sbatch", launch(tp("2")));
  repo.commit("one");
  repo.write("launch/train.sbatch", launch(tp("4")));
  repo.commit("two");
  repo.write("launch/train.sbatch", launch(tp("8")));  // the disk: neither side
  json doc = repo.diff_json({"HEAD~1", "HEAD"});
  REQUIRE(doc["jobs"].size() == 1);
  CHECK(doc["head"] != "WORKTREE");
  CHECK(doc["head"].get<std::string>().size() == 40);
  const json* tp = find_setting(doc["jobs"][0], "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK((*tp)["before"] == 2);
  CHECK((*tp)["after"] == 4);
  // One revision: that revision against the working tree.
  json one = repo.diff_json({"HEAD~1"});
  CHECK(one["head"] == "WORKTREE");
  CHECK((*find_setting(one["jobs"][0], "model.tensor_model_parallel_size"))["after"] == 8);
}

TEST_CASE("diff: usage errors exit 2 with a clear message", "[diff]") {
  fs::path outside = fs::canonical(test::make_temp_dir("mblint-diff-nogit"));
  Run no_repository = test::run_mblint({"diff"}, outside);
  CHECK(no_repository.code == 2);
  CHECK(no_repository.err.find("is not in a git repository") != std::string::npos);
  fs::remove_all(outside);

  Repo repo;
  repo.write("launch/train.sbatch", launch(tp("2")));
  repo.commit("base");
  Run unknown = repo.diff({"no-such-revision"});
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("'no-such-revision' is neither a revision of the repository") != std::string::npos);
  CHECK(repo.diff({"--format", "yaml"}).code == 2);
  Run fraction = repo.diff({"--max-memory-fraction", "1.5"});
  CHECK(fraction.code == 2);
  CHECK(fraction.err.find("--max-memory-fraction takes a fraction above 0 and at most 1, not 1.5") != std::string::npos);
  CHECK(repo.diff({"--max-bubble-increase", "-0.1"}).code == 2);
}

TEST_CASE("diff --format json follows the contract", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2")), launch(tp("3")));
  json doc = repo.diff_json({});
  std::vector<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"version", "base", "head", "jobs", "diagnostics", "summary"});
  CHECK(doc["version"] == 1);
  CHECK(doc["base"].get<std::string>().size() == 40);
  CHECK(doc["head"] == "WORKTREE");
  const json& job = doc["jobs"][0];
  keys.clear();
  for (auto it = job.begin(); it != job.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"file", "line", "status", "settings", "derived", "diagnostics"});
  const json& setting = job["settings"][0];
  keys.clear();
  for (auto it = setting.begin(); it != setting.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"key", "before", "after", "before_at", "after_at", "before_layer", "after_layer"});
  for (auto it = job["derived"].begin(); it != job["derived"].end(); ++it) {
    CHECK(it.value().size() == 2);
    CHECK(it.value().contains("before"));
    CHECK(it.value().contains("after"));
  }
  CHECK(job["diagnostics"]["new"][0].contains("rule"));
  CHECK(job["diagnostics"]["new"][0].contains("message"));
  keys.clear();
  for (auto it = doc["summary"].begin(); it != doc["summary"].end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"changed", "added", "removed", "unchanged", "new_errors", "regressions"});
}

TEST_CASE("diff: markdown, github and sarif", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2")), launch(tp("3")));
  Run markdown = repo.diff({"--format", "markdown"});
  CHECK(markdown.out.find("#### `launch/train.sbatch:4` — changed") != std::string::npos);
  CHECK(markdown.out.find("| `model.tensor_model_parallel_size` | `2` | `3` | launch/train.sbatch:6 (override) |") !=
        std::string::npos);
  CHECK(markdown.out.find("New findings:") != std::string::npos);
  Run github = repo.diff({"--format", "github"});
  CHECK(github.code == 1);
  CHECK(github.out.rfind("::error file=launch/train.sbatch", 0) == 0);
  Run sarif = repo.diff({"--format", "sarif"});
  json results = json::parse(sarif.out)["runs"][0]["results"];
  CHECK(!results.empty());
  Run text = repo.diff({});
  CHECK(text.out.find("changed launch/train.sbatch:4\n") != std::string::npos);
  CHECK(std::regex_search(text.out, std::regex(R"(\n  model\.tensor_model_parallel_size +2 -> 3 +launch/train\.sbatch:6 \(override\)\n)")));
  CHECK(text.out.find("  new error launch/train.sbatch:6: ") != std::string::npos);
  CHECK(text.out.find("1 changed, 0 added, 0 removed, 0 unchanged; 1 new error; no regressions\n") != std::string::npos);
  CHECK(text.out.find("\033[") == std::string::npos);  // not a terminal: no colour
  Run colour = repo.diff({"--color", "always"});
  CHECK(colour.out.find("\033[33mchanged\033[0m \033[1mlaunch/train.sbatch:4\033[0m\n") != std::string::npos);
  CHECK(colour.out.find("  \033[31mnew\033[0m error launch/train.sbatch:6: ") != std::string::npos);
}

TEST_CASE("diff: .mblint.yaml's diff: section is typed and its keys checked", "[diff]") {
  fs::path dir = fs::canonical(test::make_temp_dir("mblint-diff-config"));
  std::ofstream(dir / ".mblint.yaml") << "diff:\n  max_memory_fraction: 1.5\n  max_step_time_increase_percent: 10\n"
                                         "  max_bubble_increase: -1\n  max_peak_memory: 3\n";
  SourceSet sources;
  std::vector<Diagnostic> problems;
  ProjectConfig config =
      load_project_config(sources, dir / ".mblint.yaml", ".mblint.yaml", Span{}, rule_names(all_rules()), problems);
  fs::remove_all(dir);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].message == "unknown key 'max_peak_memory' in diff: mblint ignores it");
  CHECK(problems[1].message == "diff.max_memory_fraction is 1.5: expected a fraction above 0 and at most 1");
  CHECK(problems[2].message == "diff.max_bubble_increase is -1: expected a number of at least 0");
  CHECK(line_col(sources.files[problems[1].where.file], problems[1].where.begin).line == 2);
  REQUIRE(config.diff.max_step_time_increase_percent);
  CHECK(config.diff.max_step_time_increase_percent->value == 10);
  CHECK(!config.diff.max_memory_fraction);
}

TEST_CASE("diff: a sealed overlay hides the disk's files under its directory", "[diff]") {
  fs::path dir = fs::canonical(test::make_temp_dir("mblint-diff-sealed"));
  std::ofstream(dir / "on_disk.sh") << "echo disk\n";
  std::ofstream(dir.parent_path() / (dir.filename().string() + "-beside.sh")) << "echo beside\n";
  std::map<fs::path, std::string> overlay = {{dir / "in_revision.sh", "echo revision\n"}, {sealed_key(dir), ""}};
  CHECK(source_file_exists(dir / "in_revision.sh", &overlay));
  CHECK(!source_file_exists(dir / "on_disk.sh", &overlay));
  CHECK(source_file_exists(dir / "on_disk.sh", nullptr));
  fs::path beside = dir.parent_path() / (dir.filename().string() + "-beside.sh");
  CHECK(source_file_exists(beside, &overlay));  // outside the sealed directory: the disk decides
  SourceSet sources;
  ReadResult hidden = read_source_file(sources, dir / "on_disk.sh", "on_disk.sh", Span{}, kMaxInputBytes, &overlay);
  REQUIRE(hidden.problem);
  CHECK(hidden.problem->message == "cannot read 'on_disk.sh': no such file");
  ReadResult revision = read_source_file(sources, dir / "in_revision.sh", "in_revision.sh", Span{}, kMaxInputBytes, &overlay);
  REQUIRE(!revision.problem);
  CHECK(sources.files[revision.file].text == "echo revision\n");
  fs::remove(beside);
  fs::remove_all(dir);
}

TEST_CASE("diff: a sealed directory is listed from the revision, an open one from the disk and the buffers", "[diff]") {
  // MLPerf trainers' root Hydra config is found by listing conf/: under
  // `mblint diff` that must be the revision's conf/, not the work tree's.
  fs::path dir = fs::canonical(test::make_temp_dir("mblint-diff-listing"));
  fs::create_directories(dir / "conf" / "sub");
  std::ofstream(dir / "conf" / "on_disk.yaml") << "a: 1\n";
  std::map<fs::path, std::string> revision = {{dir / "conf" / "in_revision.yaml", "b: 2\n"},
                                              {dir / "conf" / "sub" / "deeper.yaml", "c: 3\n"},
                                              {sealed_key(dir), ""}};
  CHECK(list_source_files(dir / "conf", &revision) == std::vector<fs::path>{dir / "conf" / "in_revision.yaml"});
  std::map<fs::path, std::string> buffers = {{dir / "conf" / "unsaved.yaml", "d: 4\n"}};
  CHECK(list_source_files(dir / "conf", &buffers) ==
        std::vector<fs::path>{dir / "conf" / "on_disk.yaml", dir / "conf" / "unsaved.yaml"});
  CHECK(list_source_files(dir / "conf", nullptr) == std::vector<fs::path>{dir / "conf" / "on_disk.yaml"});
  fs::remove_all(dir);
}

TEST_CASE("diff: a pipeline added: the bubble, each stage's memory, the speed limits", "[diff]") {
  Repo repo;
  repo.change("launch/train.sbatch", launch(tp("2")), launch(tp("2") + " model.pipeline_model_parallel_size=2"));
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& derived = doc["jobs"][0]["derived"];
  CHECK(derived["pipeline_bubble"]["before"] == 0.0);  // no pipeline, no bubble
  CHECK(derived["pipeline_bubble"]["after"] == 0.015);
  CHECK(derived["stage_0_memory_gib"]["before"].is_null());
  CHECK(derived["stage_0_memory_gib"]["after"] == 24.86);
  CHECK(derived["stage_1_memory_gib"]["after"] == 20.75);  // the recipe's TE cross entropy: bf16 logits only
  CHECK(derived["step_time_s"]["before"] == 11.221);
  CHECK(derived["step_time_s"]["after"] == 11.877);  // 5.85% slower
  CHECK(derived["tokens_per_sec_per_gpu"]["before"] == 5840.0);
  CHECK(derived["tokens_per_sec_per_gpu"]["after"] == 5518.0);  // 5.51% fewer
  CHECK(repo.diff({}).code == 0);
  CHECK(repo.diff({"--max-bubble-increase", "0.01"}).code == 1);
  CHECK(repo.diff({"--max-bubble-increase", "0.02"}).code == 0);
  CHECK(repo.diff({"--max-step-time-increase-percent", "5"}).code == 1);
  CHECK(repo.diff({"--max-step-time-increase-percent", "7"}).code == 0);
  CHECK(repo.diff({"--max-throughput-drop-percent", "5"}).code == 1);
  CHECK(repo.diff({"--max-throughput-drop-percent", "7"}).code == 0);
  json gated = repo.diff_json({"--max-bubble-increase", "0.01", "--max-step-time-increase-percent", "5"});
  REQUIRE(gated["summary"]["regressions"].size() == 2);
  CHECK(gated["summary"]["regressions"][0]["message"] ==
        "the predicted step time rises by 5.846% (11.221 -> 11.877; limit 5%)");
  CHECK(gated["summary"]["regressions"][1]["message"] == "the pipeline bubble rises by 0.015 (0 -> 0.015; limit 0.01)");
}

TEST_CASE("diff: each side is governed by its own .mblint.yaml", "[diff]") {
  Repo repo;
  repo.write(".mblint.yaml", "rules:\n  disable: [cp-sequence-parallel-divisibility]\n");
  repo.change("launch/train.sbatch", launch(tp("3")), launch(tp("3")));
  CHECK(repo.diff({}).code == 0);  // the same job, the same config: nothing new
  repo.write(".mblint.yaml", "rules:\n  disable: []\n");  // the change turns the rule back on
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  REQUIRE(doc["jobs"][0]["diagnostics"]["new"].size() == 1);
  CHECK(doc["jobs"][0]["diagnostics"]["new"][0]["rule"] == "cp-sequence-parallel-divisibility");
  CHECK(repo.diff({}).code == 1);
}

TEST_CASE("diff: a finding that stays on the same setting with new numbers is neither new nor fixed", "[diff]") {
  // TP 2 -> 4 without sequence parallelism: tp-without-sequence-parallel is
  // reported on both sides about tensor_model_parallel_size, with the split
  // ("2 ways", "4 ways") in its message.
  Repo repo;
  repo.change("launch/train.sbatch", launch("model.tensor_model_parallel_size=2"),
              launch("model.tensor_model_parallel_size=4"));
  json doc = repo.diff_json({});
  REQUIRE(doc["jobs"].size() == 1);
  const json& job = doc["jobs"][0];
  CHECK(job["status"] == "changed");
  for (const char* side : {"new", "fixed"}) {
    for (const json& d : job["diagnostics"][side]) {
      INFO(side << ": " << d.dump());
      CHECK(d["rule"] != "tp-without-sequence-parallel");
    }
  }
  // The same change with sequence parallelism turned off only on the new
  // side brings the finding: it is new, and nothing is fixed.
  Repo other;
  other.change("launch/train.sbatch", launch(tp("2")), launch("model.tensor_model_parallel_size=4"));
  json changed = other.diff_json({});
  REQUIRE(changed["jobs"].size() == 1);
  bool listed = false;
  for (const json& d : changed["jobs"][0]["diagnostics"]["new"]) listed |= d["rule"] == "tp-without-sequence-parallel";
  CHECK(listed);
  CHECK(changed["jobs"][0]["diagnostics"]["fixed"].empty());
}
