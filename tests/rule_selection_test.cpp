// `check --select` / `--ignore`: the report (text, JSON, SARIF, GitHub), the
// exit code, the fixes and the baseline see only the selected rules; an
// unknown rule is a usage error with did-you-mean.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lint/model/rule_selection.h"
#include "rules/registry.h"
#include "tests/gate_support.h"

using namespace mblint;
using mblint::test::run_mblint;
using mblint::test::ScratchDir;

namespace {

// Two errors of two rules on one value: seq_length 8196 is not divisible by
// 2*CP = 8, and differs from the recipe's dataset.seq_length 8192. (8 GPUs:
// on 4, DP x CP = 4 leaves the weights, gradients and optimizer state of
// Llama 3 8B within estimated-oom's band.)
const char* kYaml = "model:\n  context_parallel_size: 4\n  seq_length: 8196\n";
const char* kCp = "cp-seq-length-divisibility";
const char* kMismatch = "model-dataset-seq-length-mismatch";

std::vector<std::string> check(std::initializer_list<std::string> more) {
  std::vector<std::string> args = {"check", "override.yaml", "--recipe", "llama3_8b_pretrain_2gpu_h100_bf16_config",
                                   "--nodes", "1", "--gpus-per-node", "8"};
  args.insert(args.end(), more);
  return args;
}

bool mentions(const std::string& text, const std::string& rule) { return text.find(rule) != std::string::npos; }

}  // namespace

TEST_CASE("without a selection both rules report", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  auto run = run_mblint(check({}), dir.path);
  CHECK(run.code == 1);
  CHECK(mentions(run.out, kCp));
  CHECK(mentions(run.out, kMismatch));
  // One value, two findings: the second is a note of the first.
  CHECK(mentions(run.out, "note: the same value also fails: "));
  CHECK(mentions(run.out, "mblint: 1 error, 0 warnings, 0 notes"));
}

TEST_CASE("select by name or code: that rule only, and counted alone", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  const RuleInfo* cp = find_rule(all_rules(), kCp);
  REQUIRE(cp);
  for (std::string selector : {std::string(kCp), std::string(cp->code)}) {
    INFO(selector);
    auto run = run_mblint(check({"--select", selector}), dir.path);
    CHECK(run.code == 1);
    CHECK(mentions(run.out, kCp));
    CHECK_FALSE(mentions(run.out, kMismatch));
    CHECK(mentions(run.out, "mblint: 1 error, 0 warnings, 0 notes in 1 file"));
  }
  // Comma-separated, and repeated: both rules.
  for (auto args : {check({"--select", std::string(kCp) + "," + kMismatch}),
                    check({"--select", kCp, "--select", kMismatch}), check({"--select=" + std::string(kCp) + ","})}) {
    auto run = run_mblint(args, dir.path);
    CHECK(mentions(run.out, kCp));
  }
  auto both = run_mblint(check({"--select", kCp, "--select", kMismatch}), dir.path);
  CHECK(mentions(both.out, kMismatch));
}

TEST_CASE("ignore drops a rule, and wins over select", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  auto run = run_mblint(check({"--ignore", kCp}), dir.path);
  CHECK(run.code == 1);
  CHECK_FALSE(mentions(run.out, kCp));
  CHECK(mentions(run.out, kMismatch));

  auto none = run_mblint(check({"--select", kCp, "--ignore", kCp}), dir.path);
  CHECK(none.code == 0);
  CHECK_FALSE(mentions(none.out, kCp));
  CHECK(mentions(none.out, "no problems found"));
}

TEST_CASE("an unknown rule in --select or --ignore is a usage error with did-you-mean", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  auto typo = run_mblint(check({"--select", "cp-seq-lenght-divisibility"}), dir.path);
  CHECK(typo.code == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err ==
        "mblint: --select: unknown rule 'cp-seq-lenght-divisibility' (did you mean cp-seq-length-divisibility?)\n");

  auto far = run_mblint(check({"--ignore", std::string(kCp) + ",no-such-thing-at-all"}), dir.path);
  CHECK(far.code == 2);
  CHECK(far.err == "mblint: --ignore: unknown rule 'no-such-thing-at-all' (`mblint rules` lists every rule name and code)\n");

  auto empty = run_mblint(check({"--select", ","}), dir.path);
  CHECK(empty.code == 2);
  CHECK(empty.err == "mblint: --select names no rule\n");
}

TEST_CASE("select is honoured by the JSON, SARIF and GitHub output", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);

  auto json = run_mblint(check({"--select", kCp, "--format", "json"}), dir.path);
  CHECK(json.code == 1);
  auto document = nlohmann::json::parse(json.out);
  REQUIRE(document["diagnostics"].size() == 1);
  CHECK(document["diagnostics"][0]["rule"] == kCp);

  auto sarif = run_mblint(check({"--ignore", kCp, "--format", "sarif"}), dir.path);
  CHECK(sarif.code == 1);
  auto results = nlohmann::json::parse(sarif.out)["runs"][0]["results"];
  REQUIRE(results.size() == 1);
  CHECK(results[0]["ruleId"] == kMismatch);

  auto github = run_mblint(check({"--select", kMismatch, "--format", "github"}), dir.path);
  CHECK(github.code == 1);
  CHECK(std::count(github.out.begin(), github.out.end(), '\n') == 1);
  CHECK(mentions(github.out, kMismatch));
  CHECK_FALSE(mentions(github.out, kCp));
}

TEST_CASE("check --fix and --diff fix only the selected rules", "[cli][select][fix]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  // Both fixes are unsafe. Without a selection, the mismatch's fix (back to
  // the recipe's 8192) settles both findings ...
  auto all = run_mblint(check({"--diff", "--unsafe-fixes"}), dir.path);
  CHECK(mentions(all.out, "+  seq_length: 8192"));
  CHECK(mentions(all.err, "would fix 1 problem (0 remaining)"));  // the two are folded into one
  // ... with only the CP rule selected, its own fix (the nearest multiple of
  // 2*CP, 8200) is the one applied, and what remains is counted over the
  // selection.
  auto cp = run_mblint(check({"--diff", "--unsafe-fixes", "--select", kCp}), dir.path);
  CHECK(mentions(cp.out, "+  seq_length: 8200"));
  CHECK(mentions(cp.err, "would fix 1 problem (0 remaining)"));
  CHECK(dir.read("override.yaml") == kYaml);  // --diff writes nothing

  auto fixed = run_mblint(check({"--fix", "--unsafe-fixes", "--select", kCp}), dir.path);
  CHECK(dir.read("override.yaml") == "model:\n  context_parallel_size: 4\n  seq_length: 8200\n");
  CHECK_FALSE(mentions(fixed.out, kMismatch));
}

TEST_CASE("check --write-baseline records only the selected findings", "[cli][select][baseline]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", kYaml);
  auto run = run_mblint(check({"--select", kCp, "--write-baseline", "baseline.json"}), dir.path);
  CHECK(run.code == 0);
  std::string baseline = dir.read("baseline.json");
  CHECK(mentions(baseline, kCp));
  CHECK_FALSE(mentions(baseline, kMismatch));
}

TEST_CASE("check --help lists --select and --ignore", "[cli][select]") {
  ScratchDir dir("mblint-select");
  auto run = run_mblint({"check", "--help"}, dir.path);
  CHECK(run.code == 0);
  CHECK(mentions(run.out, "--select"));
  CHECK(mentions(run.out, "--ignore"));
}

TEST_CASE("a file that cannot be read is reported whatever the selection, unless ignored", "[cli][select]") {
  ScratchDir dir("mblint-select");
  dir.write("override.yaml", "model:\n  context_parallel_size: [4\n");
  auto run = run_mblint(check({"--select", kCp}), dir.path);
  CHECK(run.code == 1);
  CHECK(mentions(run.out, "[yaml-syntax]"));
  auto ignored = run_mblint(check({"--select", kCp, "--ignore", "yaml-syntax"}), dir.path);
  CHECK_FALSE(mentions(ignored.out, "[yaml-syntax]"));
  // Every name in the list is a rule mblint has.
  for (std::string_view rule : kInputRules) CHECK(find_rule(all_rules(), rule) != nullptr);
}

TEST_CASE("parse_rule_selection resolves codes to names", "[select]") {
  RuleSelection selection;
  std::string error;
  const RuleInfo* rule = find_rule(all_rules(), kMismatch);
  REQUIRE(rule);
  REQUIRE(parse_rule_selection({std::string(rule->code)}, {}, rule_names(all_rules()), selection, error));
  CHECK(selection.selected == std::set<std::string>{kMismatch});
  CHECK(selection.keeps(kMismatch));
  CHECK_FALSE(selection.keeps(kCp));
  CHECK(RuleSelection{}.keeps(kCp));
}
