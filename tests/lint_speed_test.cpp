// The shortcuts that keep a whole-tree `check` near the YAML parser's cost
// must not change what is reported: jobs let go after their checks, canonical
// paths and file reads remembered per run.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lint/base/canonical_path.h"
#include "lint/base/file_reader.h"
#include "tests/lint_run.h"

namespace fs = std::filesystem;
using namespace mblint;
using mblint::test::LintRun;

namespace {

std::vector<std::string> described(const LintResult& result) {
  std::vector<std::string> out;
  for (const Diagnostic& d : result.diagnostics) {
    out.push_back(d.rule + "|" + std::string(severity_name(d.severity)) + "|" + d.message + "|" +
                  std::to_string(d.where.file) + ":" + std::to_string(d.where.begin) + "-" +
                  std::to_string(d.where.end) + "|notes " + std::to_string(d.notes.size()) + "|fixes " +
                  std::to_string(d.fixes.size()));
  }
  return out;
}

void write_tree(LintRun& run) {
  run.write("launch/train.sh",
            "#!/bin/bash\n"
            "torchrun --nproc_per_node=8 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
            "--config-file conf/override.yaml model.tensor_model_parallel_size=3\n");
  run.write("conf/override.yaml", "model:\n  num_attention_heads: 32\n  pipeline_model_parallel_size: 2\n");
  run.write("alone/dup.yaml", "model:\n  tensor_model_parallel_size: 2\n  tensor_model_parallel_size: 4\n");
  run.write("alone/bad.yaml", "model: [1, 2\n");
  run.write("alone/dump.yaml",
            "model:\n  num_attention_heads: 30\n  num_query_groups: 8\n  tensor_model_parallel_size: 4\n");
}

}  // namespace

TEST_CASE("check's lint run lets each job go and reports exactly what a run keeping them reports") {
  LintRun kept("mblint-speed");
  write_tree(kept);
  kept.options.paths = {"launch", "conf", "alone", "alone/dup.yaml"};
  kept.result = run_lint(kept.sources, kept.options, all_rules());

  LintRun dropped("mblint-speed");
  write_tree(dropped);
  dropped.options.paths = kept.options.paths;
  dropped.options.keep_jobs = false;
  dropped.result = run_lint(dropped.sources, dropped.options, all_rules());

  REQUIRE(kept.result.jobs.size() >= 4);
  CHECK(kept.result.derived.size() == kept.result.jobs.size());
  CHECK(dropped.result.jobs.empty());
  CHECK(dropped.result.derived.empty());
  CHECK(dropped.result.files_checked == kept.result.files_checked);
  REQUIRE(!kept.result.diagnostics.empty());
  CHECK(described(dropped.result) == described(kept.result));
  CHECK(kept.fired("duplicate-key"));
  CHECK(kept.fired("yaml-syntax"));
}

TEST_CASE("a file walked and named again is read once and keeps one id") {
  LintRun run("mblint-speed");
  run.write("a/one.yaml", "model:\n  tensor_model_parallel_size: 2\n  tensor_model_parallel_size: 4\n");
  run.options.paths = {"a", "a/one.yaml", "a/../a/one.yaml"};
  run.options.keep_jobs = false;
  run.result = run_lint(run.sources, run.options, all_rules());
  int duplicates = 0;
  for (const Diagnostic& d : run.result.diagnostics) duplicates += d.rule == "duplicate-key";
  CHECK(duplicates == 1);
  int files = 0;
  for (const SourceFile& file : run.sources.files) files += !file.synthetic;
  CHECK(files == 1);
}

TEST_CASE("canonical paths remembered per run agree with std::filesystem::weakly_canonical") {
  fs::path dir = fs::weakly_canonical(mblint::test::make_temp_dir("mblint-canonical"));
  fs::create_directories(dir / "real" / "deep");
  std::ofstream(dir / "real" / "deep" / "a.yaml") << "a: 1\n";
  std::error_code error;
  fs::create_directory_symlink(dir / "real", dir / "link", error);
  fs::create_symlink(dir / "real" / "deep" / "a.yaml", dir / "real" / "b.yaml", error);
  CanonicalPaths cache;
  std::vector<fs::path> asked = {
      dir / "real" / "deep" / "a.yaml",        dir / "link" / "deep" / "a.yaml", dir / "real" / "b.yaml",
      dir / "link" / "b.yaml",                 dir / "real" / "missing.yaml",    dir / "gone" / "x" / "y.yaml",
      dir / "real" / "deep" / ".." / "b.yaml", dir / "link",                     fs::path("relative/x.yaml"),
  };
  for (int round = 0; round < 2; ++round) {  // the second round answers from the cache
    for (const fs::path& path : asked) {
      INFO(path.string());
      CHECK(canonical_or_same(cache, path) == canonical_or_same(path));
    }
  }
  CHECK(canonical_or_same(cache, dir / "link" / "deep" / "a.yaml") == dir / "real" / "deep" / "a.yaml");
  fs::remove_all(dir);
}
