// Baselines: keyed by file, subject (config key path) and rule, never lines;
// count-based; a stable, sorted file.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/engine/baseline.h"
#include "tests/gate_support.h"

using namespace mblint;
using mblint::test::run_mblint;
using mblint::test::ScratchDir;

namespace {

// Two errors: heads-divisible-by-tp style problems of TP = 3 on an 8-GPU job,
// and cp-seq-length-divisibility (seq 8190, CP 2).
std::string launch(const std::string& extra_top, const std::string& seq) {
  std::string text = "#!/bin/bash\n";
  text += extra_top;
  text += "#SBATCH --nodes=1\n"
          "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
          "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
          "    dataset.seq_length=";
  text += seq;
  text += "\n";
  return text;
}

}  // namespace

TEST_CASE("subjects: findings name the config key they are about", "[baseline]") {
  ScratchDir dir("mblint-baseline");
  dir.write("launch.sh", launch("", "8190"));
  auto run = run_mblint({"check", "launch.sh", "--format", "json"}, dir.path);
  auto document = nlohmann::json::parse(run.out);
  REQUIRE(document["diagnostics"].size() >= 1);
  bool found = false;
  for (const auto& d : document["diagnostics"]) {
    if (d["rule"] == "cp-seq-length-divisibility") {
      CHECK(d["subject"] == "dataset.seq_length");
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("subjects: a finding placed at the recipe's name is about the recipe", "[baseline]") {
  // Every value NemotronH 4B's SFT recipe sets carries the --recipe span;
  // packed-sequences-unfused-mamba is placed there (offline packing and the
  // unfused Mamba path both come from the recipe). Its subject was the first
  // of those values, model.tensor_model_parallel_size.
  ScratchDir dir("mblint-baseline");
  dir.write("override.yaml", "train:\n  train_iters: 10\n");
  auto run = run_mblint({"check", "override.yaml", "--recipe", "nemotronh_4b_sft_1gpu_h100_bf16_config", "--nodes", "1",
                         "--gpus-per-node", "1", "--gpu", "h100", "--select", "packed-sequences-unfused-mamba",
                         "--format", "json"},
                        dir.path);
  auto document = nlohmann::json::parse(run.out);
  REQUIRE(document["diagnostics"].size() == 1);
  CHECK(document["diagnostics"][0]["subject"] == "recipe");
}

TEST_CASE("a baseline hides existing findings, survives edits elsewhere, reports new ones", "[baseline]") {
  ScratchDir dir("mblint-baseline");
  dir.write("launch.sh", launch("", "8190"));
  auto write = run_mblint({"check", "launch.sh", "--write-baseline", "baseline.json"}, dir.path);
  REQUIRE(write.code == 0);
  CHECK(write.out.empty());
  CHECK(write.err.find("wrote 1 finding to baseline baseline.json") != std::string::npos);
  std::string baseline = dir.read("baseline.json");
  auto document = nlohmann::json::parse(baseline);
  CHECK(document["version"] == 1);
  CHECK(document["findings"] == nlohmann::json::parse(R"([{"file": "launch.sh", "rule": "cp-seq-length-divisibility",
                                                         "subject": "dataset.seq_length", "count": 1}])"));

  auto hidden = run_mblint({"check", "launch.sh", "--baseline", "baseline.json"}, dir.path);
  CHECK(hidden.code == 0);
  CHECK(hidden.out == "mblint: no problems found in 1 file; 1 job checked\nmblint: 1 existing finding hidden by the baseline\n");

  // Lines added above move the finding; it stays hidden.
  dir.write("launch.sh", launch("# a comment\n# and another\n", "8190"));
  CHECK(run_mblint({"check", "launch.sh", "--baseline", "baseline.json"}, dir.path).code == 0);

  // A new finding (a different key) blocks.
  dir.write("launch.sh", launch("", "8190 model.tensor_model_parallel_size=3"));
  auto fresh = run_mblint({"check", "launch.sh", "--baseline", "baseline.json"}, dir.path);
  CHECK(fresh.code == 1);
  CHECK(fresh.out.find("[cp-seq-length-divisibility]") == std::string::npos);
  CHECK(fresh.out.find("tensor_model_parallel_size") != std::string::npos);

  // Writing again gives the same bytes (sorted, stable).
  dir.write("launch.sh", launch("", "8190"));
  REQUIRE(run_mblint({"check", "launch.sh", "--write-baseline", "again.json"}, dir.path).code == 0);
  CHECK(dir.read("again.json") == baseline);
}

TEST_CASE("baseline matching counts: a second finding with the same key is new", "[baseline]") {
  SourceSet sources;
  FileId file = add_source(sources, "conf/a.yaml", "model:\n  x: 1\n  y: 2\n");
  Diagnostic first{"some-rule", "MB999", Severity::Error, "message", make_span(file, 9, 13), {}, "", false, {}, "model.x"};
  Diagnostic second = first;
  second.where = make_span(file, 16, 20);
  std::vector<Diagnostic> baseline_of = {first};
  std::vector<BaselineEntry> baseline = make_baseline(sources, baseline_of, "/");
  REQUIRE(baseline.size() == 1);
  CHECK(baseline[0].count == 1);

  std::vector<Diagnostic> now = {first, second};
  CHECK(apply_baseline(sources, baseline, "/", now) == 1);
  CHECK(now.size() == 1);

  // Without a subject the message identifies the finding.
  Diagnostic loose = first;
  loose.subject.clear();
  std::vector<BaselineEntry> by_message = make_baseline(sources, {loose}, "/");
  CHECK(by_message[0].key.message_hash == fnv1a_hex("message"));
  std::vector<Diagnostic> changed = {loose};
  changed[0].message = "another message";
  CHECK(apply_baseline(sources, by_message, "/", changed) == 0);
}

TEST_CASE("baseline files: round trip, relative paths, bad files are usage errors", "[baseline]") {
  SourceSet sources;
  FileId file = add_source(sources, "/repo/conf/a.yaml", "x\n");
  Diagnostic d{"some-rule", "MB999", Severity::Error, "m", make_span(file, 0, 1), {}, "", false, {}, "model.x"};
  std::vector<BaselineEntry> entries = make_baseline(sources, {d, d}, "/repo");
  CHECK(entries[0].key.file == "conf/a.yaml");
  CHECK(entries[0].count == 2);
  std::string error;
  auto parsed = parse_baseline(baseline_to_json(entries), error);
  REQUIRE(parsed);
  CHECK(parsed->at(0).key == entries[0].key);
  CHECK(parsed->at(0).count == 2);
  CHECK_FALSE(parse_baseline("[]", error));
  CHECK_FALSE(parse_baseline(R"({"version": 7, "findings": []})", error));

  ScratchDir dir("mblint-baseline");
  dir.write("launch.sh", launch("", "8190"));
  dir.write("broken.json", "{");
  auto run = run_mblint({"check", "launch.sh", "--baseline", "broken.json"}, dir.path);
  CHECK(run.code == 2);
  CHECK(run.err.find("baseline 'broken.json': not JSON") != std::string::npos);
  CHECK(run_mblint({"check", "launch.sh", "--baseline", "missing.json"}, dir.path).code == 2);
}
