// --format sarif: the structure code-scanning services rely on, and validity
// against the official OASIS SARIF 2.1.0 JSON schema checked by a real
// validator (Ajv, tools/node/validate-sarif.js) over many fixtures.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/base/build_info.h"
#include "lint/report/render.h"
#include "rules/registry.h"
#include "tests/fixture_runner.h"
#include "tests/gate_support.h"
#include "tests/test_support.h"

using namespace mblint;
using json = nlohmann::json;
using mblint::test::run_mblint;
using mblint::test::ScratchDir;

namespace {

std::string launch(const std::string& top) {
  std::string text = "#!/bin/bash\n";
  text += top;
  text += "#SBATCH --nodes=1\n"
          "CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 scripts/training/run_recipe.py \\\n"
          "    --recipe llama3_8b_pretrain_config \\\n    model.context_parallel_size=2 \\\n"
          "    dataset.seq_length=8190\n";
  return text;
}

json sarif_of(const ScratchDir& dir, const std::vector<std::string>& args) {
  auto run = run_mblint(args, dir.path);
  return json::parse(run.out);
}

}  // namespace

TEST_CASE("SARIF: driver rules, results by rule name, regions, notes, fixes, fingerprints", "[sarif]") {
  ScratchDir dir("mblint-sarif");
  dir.write("launch.sh", launch(""));
  json log = sarif_of(dir, {"check", "launch.sh", "--format", "sarif"});
  CHECK(log["version"] == "2.1.0");
  const json& run = log["runs"][0];
  const json& driver = run["tool"]["driver"];
  CHECK(driver["name"] == "mblint");
  CHECK(driver["version"] == MBLINT_VERSION);  // CMake's project(VERSION), without the commit
  CHECK(driver["informationUri"] == std::string(kProjectUrl));
  REQUIRE(run["results"].size() == 1);
  const json& result = run["results"][0];
  CHECK(result["ruleId"] == "cp-seq-length-divisibility");
  const json& rule = driver["rules"][result["ruleIndex"].get<size_t>()];
  CHECK(rule["id"] == "cp-seq-length-divisibility");
  CHECK(rule["helpUri"] == std::string(kRulesDocsUrl) + "#cp-seq-length-divisibility");
  CHECK(rule["defaultConfiguration"]["level"] == "error");
  CHECK(rule["help"]["markdown"].get<std::string>().find("**Bad**") != std::string::npos);
  CHECK(result["level"] == "error");
  const json& location = result["locations"][0]["physicalLocation"];
  CHECK(location["artifactLocation"] == json::parse(R"({"uri": "launch.sh", "uriBaseId": "SRCROOT"})"));
  CHECK(location["region"] == json::parse(R"({"startLine": 6, "startColumn": 5, "endLine": 6, "endColumn": 28})"));
  REQUIRE(result["relatedLocations"].size() >= 1);
  CHECK(result["relatedLocations"][0]["id"] == 0);
  CHECK(result["relatedLocations"][0]["message"]["text"].is_string());
  REQUIRE(result["fixes"].size() == 2);
  const json& replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0];
  CHECK(replacement["insertedContent"]["text"] == "8192");
  CHECK(replacement["deletedRegion"]["startLine"] == 6);
  CHECK(run["originalUriBaseIds"]["SRCROOT"]["uri"].get<std::string>().rfind("file:///", 0) == 0);

  // The fingerprint does not depend on the line.
  std::string fingerprint = result["partialFingerprints"]["mblintFindingHash/v1"];
  dir.write("launch.sh", launch("# moved down\n"));
  json moved = sarif_of(dir, {"check", "launch.sh", "--format", "sarif"});
  CHECK(moved["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 7);
  CHECK(moved["runs"][0]["results"][0]["partialFingerprints"]["mblintFindingHash/v1"] == fingerprint);
}

TEST_CASE("SARIF: columns count code points; findings on the command line have no location", "[sarif]") {
  ScratchDir dir("mblint-sarif");
  dir.write("override.yaml", "# é\noptimizer: {\"é\": 1, finetune_lr: 0.1}\n");
  json log = sarif_of(dir, {"check", "override.yaml", "--recipe", "qwen3_8b_pretrain_config", "--format", "sarif"});
  bool seen = false;
  for (const json& result : log["runs"][0]["results"]) {
    if (result["ruleId"] != "unknown-key" || result["message"]["text"].get<std::string>().find("finetune_lr") ==
                                                 std::string::npos)
      continue;
    seen = true;
    // `optimizer: {"é": 1, ` is 20 code points (21 bytes): finetune_lr starts at column 21.
    CHECK(result["locations"][0]["physicalLocation"]["region"]["startColumn"] == 21);
  }
  CHECK(seen);
  json command_line = sarif_of(dir, {"check", "override.yaml", "--recipe", "no_such_recipe", "--format", "sarif"});
  for (const json& result : command_line["runs"][0]["results"]) {
    if (result["ruleId"] == "unknown-recipe") CHECK_FALSE(result.contains("locations"));
  }
}

TEST_CASE("SARIF output of the fixtures is valid against the OASIS SARIF 2.1.0 schema (Ajv)", "[sarif][validator]") {
  std::filesystem::path source = test::source_dir();
  std::filesystem::path validator = source / "tools/node/validate-sarif.js";
  std::filesystem::path schema = source / "tests/data/sarif/sarif-schema-2.1.0.json";
  if (!test::find_program("node") || !std::filesystem::exists(source / "tools/node/node_modules/ajv-draft-04")) {
    WARN("skipped: node or tools/node/node_modules (ajv-draft-04, ajv-formats) is missing; run tools/setup.sh");
    return;
  }
  ScratchDir out("mblint-sarif-logs");
  std::string files;
  size_t count = 0, with_notes = 0, with_fixes = 0;
  for (const char* root : {"fixtures/rules", "fixtures/inputs", "fixtures/dialects", "fixtures/examples"}) {
    if (!std::filesystem::exists(source / root)) continue;
    for (test::FixtureCase fixture : test::find_fixture_cases(source / root)) {
      if (std::find(fixture.args.begin(), fixture.args.end(), "--format") != fixture.args.end()) continue;
      if (fixture.args.empty() || fixture.args[0] != "check") continue;
      fixture.args.insert(fixture.args.end(), {"--format", "sarif"});
      auto run = run_mblint(fixture.args, fixture.dir);
      REQUIRE(run.code != 2);
      json log = json::parse(run.out);
      for (const json& result : log["runs"][0]["results"]) {
        if (result.contains("relatedLocations")) ++with_notes;
        if (result.contains("fixes")) ++with_fixes;
      }
      std::filesystem::path file = out.path / (std::to_string(count++) + ".sarif");
      std::ofstream(file) << run.out;
      files += ' ';
      files += test::shell_quote(file.string());
    }
  }
  // Corner cases the fixtures may not reach: a file outside the working
  // directory with a space and non-ASCII in its name (an absolute file: URI),
  // an insertion (empty region), a note without a location.
  SourceSet sources;
  FileId outside = add_source(sources, "/elsewhere/my conf/é.yaml", "model:\n  x: 1\n");
  Diagnostic corner{"unknown-key", "MB010", Severity::Warning, "m", make_span(outside, 9, 10), {}, "h", false, {}, "model.x"};
  corner.notes.push_back(Note{"a note without a location", Span{}});
  corner.fixes.push_back(Fix{"insert", FixSafety::Safe, {TextEdit{make_span(outside, 9, 9), "# "}}});
  std::ostringstream corner_log;
  render_sarif(corner_log, sources, {corner}, all_rules(), "0.0.0", "/work");
  json corner_json = json::parse(corner_log.str());
  CHECK(corner_json["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] ==
        json::parse(R"({"uri": "file:///elsewhere/my%20conf/%C3%A9.yaml"})"));
  std::filesystem::path corner_file = out.path / "corner.sarif";
  std::ofstream(corner_file) << corner_log.str();
  files += ' ';
  files += test::shell_quote(corner_file.string());

  REQUIRE(count > 100);
  CHECK(with_notes > 0);
  CHECK(with_fixes > 0);
  auto version = test::run_tool("node " + test::shell_quote(validator.string()) + " --version");
  auto check = test::run_tool("node " + test::shell_quote(validator.string()) + " " +
                              test::shell_quote(schema.string()) + files);
  INFO(check.output.substr(0, 4000));
  CHECK(check.code == 0);
  WARN("validated " << count << " fixture SARIF logs and 1 corner-case log (" << with_notes << " results with related locations, " << with_fixes
                    << " with fixes) with " << version.output);

  // The validator does reject what the schema forbids (a result without a message).
  json broken = json::parse(test::read_file(out.path / "0.sarif"));
  broken["runs"][0]["results"] = json::parse(R"([{"ruleId": "x"}])");
  std::ofstream(out.path / "broken.sarif") << broken.dump();
  auto rejected = test::run_tool("node " + test::shell_quote(validator.string()) + " " +
                                 test::shell_quote(schema.string()) + " " +
                                 test::shell_quote((out.path / "broken.sarif").string()));
  CHECK(rejected.code == 1);
  CHECK(rejected.output.find("message") != std::string::npos);
}
