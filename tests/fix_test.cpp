// Fixes: choosing and applying edits, unified diffs, atomic writes, and
// `check --fix` over every fixture whose diagnostics carry a fix.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "lint/base/atomic_write.h"
#include "lint/base/unified_diff.h"
#include "lint/cli/cli.h"
#include "lint/fix/fix_apply.h"
#include "lint/fix/fix_syntax.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/fixture_runner.h"
#include "tests/test_support.h"

using namespace mblint;
namespace fs = std::filesystem;

namespace {

SourceSet one_file(std::string path, std::string text) {
  SourceSet sources;
  add_source(sources, std::move(path), std::move(text));
  return sources;
}

TextEdit edit(FileId file, uint32_t begin, uint32_t end, std::string replacement) {
  return TextEdit{make_span(file, begin, end), std::move(replacement)};
}

Diagnostic with_fixes(std::string rule, std::vector<Fix> fixes) {
  Diagnostic d;
  d.rule = std::move(rule);
  d.fixes = std::move(fixes);
  return d;
}

using Run = test::CliRun;
using test::run_mblint;

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = test::read_file(entry.path());
  }
  return files;
}

}  // namespace

// --- applying edits ----------------------------------------------------------------------------

TEST_CASE("edits replace only their bytes, in any order, with insertions", "[fix]") {
  std::string text = "model:\n  tensor_model_parallel_size: 4  # keep\n  seq_length: 8190\n";
  size_t tp = text.find('4');
  size_t seq = text.find("8190");
  std::string out = apply_edits(text, {edit(0, seq, seq + 4, "8192"), edit(0, tp, tp + 1, "2"),
                                       edit(0, 0, 0, "# fixed\n")});
  CHECK(out == "# fixed\nmodel:\n  tensor_model_parallel_size: 2  # keep\n  seq_length: 8192\n");
  // An insertion at the start of a replaced span goes before the new text.
  CHECK(apply_edits("ab", {edit(0, 0, 1, "X"), edit(0, 0, 0, "<")}) == "<Xb");
  CHECK(apply_edits("ab", {edit(0, 1, 1, "-")}) == "a-b");
  CHECK(apply_edits("ab", {edit(0, 2, 2, "!")}) == "ab!");
}

TEST_CASE("edits next to multi-byte UTF-8 keep the characters whole", "[fix]") {
  std::string text = "# réglage élevé\nfp8: \xE2\x80\x9Chybrid\xE2\x80\x9D\nnum: 4\n";  // curly quotes
  size_t four = text.rfind('4');
  SourceSet sources = one_file("a.yaml", text);
  CHECK(apply_edits(text, {edit(0, four, four + 1, "8")}) == "# réglage élevé\nfp8: \xE2\x80\x9Chybrid\xE2\x80\x9D\nnum: 8\n");
  // Replacing a whole multi-byte character is fine; splitting one is not.
  size_t e_acute = text.find("\xC3\xA9");
  CHECK(edit_applicable(edit(0, e_acute, e_acute + 2, "e"), sources));
  CHECK_FALSE(edit_applicable(edit(0, e_acute + 1, e_acute + 2, "e"), sources));
  CHECK_FALSE(edit_applicable(edit(0, e_acute, e_acute + 1, "e"), sources));
  CHECK(apply_edits(text, {edit(0, e_acute, e_acute + 2, "e")}).substr(0, 10) == "# reglage ");
}

TEST_CASE("overlapping edits conflict; identical ones merge", "[fix]") {
  CHECK(edits_conflict(edit(0, 0, 4, "a"), edit(0, 2, 6, "b")));
  CHECK(edits_conflict(edit(0, 2, 2, "a"), edit(0, 2, 2, "b")));  // two insertions, order unknown
  CHECK(edits_conflict(edit(0, 0, 4, "a"), edit(0, 2, 2, "b")));  // an insertion inside a replacement
  CHECK_FALSE(edits_conflict(edit(0, 0, 2, "a"), edit(0, 2, 4, "b")));  // adjacent
  CHECK_FALSE(edits_conflict(edit(0, 0, 4, "a"), edit(0, 0, 4, "a")));  // the same change
  CHECK_FALSE(edits_conflict(edit(0, 0, 4, "a"), edit(1, 0, 4, "b")));  // other file
}

TEST_CASE("plan: best allowed fix per diagnostic, non-overlapping, unsafe only when asked", "[fix]") {
  SourceSet sources = one_file("a.yaml", "tp: 4\ncp: 2\nsp: true\n");
  add_source(sources, "<command-line>", "mblint check --set x=1", /*synthetic=*/true);
  std::vector<Diagnostic> diagnostics = {
      // Unsafe alternatives only: --fix leaves them, --unsafe-fixes takes the first.
      with_fixes("tp-rule", {Fix{"tp 2", FixSafety::Unsafe, {edit(0, 4, 5, "2")}},
                             Fix{"tp 8", FixSafety::Unsafe, {edit(0, 4, 5, "8")}}}),
      // Safe after an unsafe alternative: --fix takes the safe one.
      with_fixes("cp-rule", {Fix{"cp 4", FixSafety::Unsafe, {edit(0, 10, 11, "4")}},
                             Fix{"cp 1", FixSafety::Safe, {edit(0, 10, 11, "1")}}}),
      // Overlaps the tp fix: skipped in this pass.
      with_fixes("overlap", {Fix{"tp 16", FixSafety::Unsafe, {edit(0, 4, 5, "16")}}}),
      // The same edit as the cp fix (two rules agree): merged.
      with_fixes("same", {Fix{"cp 1", FixSafety::Safe, {edit(0, 10, 11, "1")}}}),
      // Advice without edits, an edit in "<command-line>", a no-op: not applicable.
      with_fixes("advice", {Fix{"think", FixSafety::Safe, {}}}),
      with_fixes("synthetic", {Fix{"x", FixSafety::Safe, {edit(1, 17, 18, "2")}}}),
      with_fixes("no-op", {Fix{"sp", FixSafety::Safe, {edit(0, 16, 20, "true")}}}),
  };
  FixPlan safe = plan_fixes(diagnostics, sources, /*unsafe=*/false);
  CHECK(safe.fixed == std::vector<size_t>{1, 3});
  REQUIRE(safe.edits[0].size() == 1);
  CHECK(apply_edits(sources.files[0].text, safe.edits[0]) == "tp: 4\ncp: 1\nsp: true\n");

  FixPlan all = plan_fixes(diagnostics, sources, /*unsafe=*/true);
  CHECK(all.fixed == std::vector<size_t>{0, 1});  // "same" now conflicts with "cp 4"
  CHECK(all.fixes[0]->description == "tp 2");
  CHECK(all.fixes[1]->description == "cp 4");  // the first allowed fix, best first
  CHECK(apply_edits(sources.files[0].text, all.edits[0]) == "tp: 2\ncp: 4\nsp: true\n");
  CHECK(choose_fix(diagnostics[4], sources, true) == nullptr);
  CHECK(choose_fix(diagnostics[5], sources, true) == nullptr);
  CHECK(choose_fix(diagnostics[6], sources, true) == nullptr);
}

TEST_CASE("a fix is all or nothing: one conflicting edit skips all of it", "[fix]") {
  SourceSet sources = one_file("a.yaml", "a: 1\nb: 2\n");
  std::vector<Diagnostic> diagnostics = {
      with_fixes("first", {Fix{"a", FixSafety::Safe, {edit(0, 3, 4, "3")}}}),
      with_fixes("second", {Fix{"a+b", FixSafety::Safe, {edit(0, 9, 10, "5"), edit(0, 3, 4, "4")}}}),
  };
  FixPlan plan = plan_fixes(diagnostics, sources, false);
  CHECK(plan.fixed == std::vector<size_t>{0});
  CHECK(apply_edits(sources.files[0].text, plan.edits[0]) == "a: 3\nb: 2\n");
}

// --- edits in the syntax of their file -----------------------------------------------------------

TEST_CASE("edits are written in the syntax of the file they land in", "[fix]") {
  auto fitted = [](const std::string& path, const std::string& text, const std::string& old,
                   const std::string& replacement) -> std::optional<std::string> {
    SourceSet sources = one_file(path, text);
    size_t at = text.find(old);
    auto fit = fit_edit(edit(0, at, at + old.size(), replacement), sources);
    if (!fit) return std::nullopt;
    return apply_edits(text, {*fit});
  };
  // YAML: quotes kept around a string, dropped for a typed value; `key:` gets a space.
  CHECK(fitted("a.yaml", "x:\n  cp_comm_type: \"a2a\"  # why\n", "\"a2a\"", "p2p") ==
        "x:\n  cp_comm_type: \"p2p\"  # why\n");
  CHECK(fitted("a.yaml", "x: {tp: '4', sp: false}\n", "'4'", "2") == "x: {tp: 2, sp: false}\n");
  {
    std::string text = "model:\n  moe_router_dtype:\n";
    SourceSet sources = one_file("a.yaml", text);
    size_t at = text.rfind(':') + 1;
    auto fit = fit_edit(edit(0, at, at, "fp32"), sources);
    REQUIRE(fit);
    CHECK(apply_edits(text, {*fit}) == "model:\n  moe_router_dtype: fp32\n");
  }
  // Shell: a Hydra list has no spaces; after a flag it is one word per item.
  CHECK(fitted("run.sh", "python x.py model.hierarchical_context_parallel_sizes=[2,2] \\\n", "[2,2]", "[2, 4]") ==
        "python x.py model.hierarchical_context_parallel_sizes=[2,4] \\\n");
  CHECK(fitted("run.sh", "pretrain_gpt.py --hierarchical-context-parallel-sizes 2 2 \\\n", "2 2", "[2, 4]") ==
        "pretrain_gpt.py --hierarchical-context-parallel-sizes 2 4 \\\n");
  // argparse has no null: the flag goes, with its separating blanks.
  CHECK(fitted("run.sh", "  --bf16 --moe-latent-size 512 --num-experts 8\n", "512", "null") ==
        "  --bf16 --num-experts 8\n");
  CHECK(fitted("run.sh", "    --moe-latent-size=0 \\\n    --bf16\n", "0", "null") == "    \\\n    --bf16\n");
  // A flag alone on the last line goes with the line and its continuation.
  CHECK(fitted("run.sh", "x.py --bf16 \\\n    --distribute-saved-activations\necho done\n",
               "--distribute-saved-activations", "") == "x.py --bf16\necho done\n");
  // Hydra does have null.
  CHECK(fitted("run.sh", "x.py model.moe_latent_size=0\n", "0", "null") == "x.py model.moe_latent_size=null\n");
  // A value that is not inert in every quoting context, or a flag itself: no edit.
  CHECK_FALSE(fitted("run.sh", "x.py model.name=a\n", "a", "a b"));
  CHECK_FALSE(fitted("run.sh", "x.py model.name=a\n", "a", "$HOME"));
  CHECK_FALSE(fitted("run.sh", "pretrain_gpt.py --sequence-parallel\n", "--sequence-parallel", "false"));
  // Never mblint's own command line.
  SourceSet sources;
  add_source(sources, "<command-line>", "mblint check --set a=1", true);
  CHECK_FALSE(fit_edit(edit(0, 21, 22, "2"), sources));
}

TEST_CASE("a recipe's value is set in the job's own YAML section, or not at all", "[fix]") {
  fs::path dir = test::make_temp_dir("mblint-fix-insert");
  std::vector<std::string> args = {"check", "override.yaml", "--recipe", "llama3_70b_pretrain_32gpu_h100_bf16_config",
                                   "--nodes", "4", "--gpus-per-node", "8", "--diff"};
  // Block style: a new line at the section's indentation, after its last key.
  std::ofstream(dir / "override.yaml", std::ios::binary) << "model:\n   tensor_model_parallel_size: 1  # x\n"
                                                            "   num_layers: 2\ntrain:\n   train_iters: 10\n";
  Run block = run_mblint(args, dir);
  CHECK(block.out.find("    num_layers: 2\n+   sequence_parallel: false\n train:\n") != std::string::npos);
  // A flow mapping (or JSON) gets no new line: the fix stays advice.
  std::ofstream(dir / "override.yaml", std::ios::binary) << "model: {\n  tensor_model_parallel_size: 1,\n  num_layers: 2\n}\n";
  Run flow = run_mblint(args, dir);
  CHECK(flow.out.empty());
  CHECK(flow.err.find("would fix 0 problems") != std::string::npos);
  fs::remove_all(dir);
}

// --- unified diff --------------------------------------------------------------------------------

TEST_CASE("unified diff: exact hunks, context, merging and missing newlines", "[fix][diff]") {
  CHECK(unified_diff("a\nb\n", "a\nb\n", "a/x", "b/x").empty());
  CHECK(unified_diff("a\nb\nc\n", "a\nB\nc\n", "a/x", "b/x") ==
        "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
  std::string before, after;
  for (int i = 1; i <= 20; ++i) {
    before += std::to_string(i) + "\n";
    after += (i == 2 ? std::string("two") : i == 17 ? std::string("seventeen") : std::to_string(i)) + "\n";
  }
  CHECK(unified_diff(before, after, "a/n", "b/n") ==
        "--- a/n\n+++ b/n\n"
        "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
        "@@ -14,7 +14,7 @@\n 14\n 15\n 16\n-17\n+seventeen\n 18\n 19\n 20\n");
  // Changes 6 lines apart share a hunk (their contexts touch).
  std::string near = before;
  near.replace(near.find("\n9\n") + 1, 1, "nine");
  near.replace(near.find("\n2\n") + 1, 1, "two");
  CHECK(unified_diff(before, near, "a/n", "b/n") ==
        "--- a/n\n+++ b/n\n@@ -1,12 +1,12 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n");
  CHECK(unified_diff("a\nb", "a\nc", "a/x", "b/x") ==
        "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n");
  CHECK(unified_diff("", "new\n", "a/x", "b/x") == "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n");
  CHECK(unified_diff("x\ny\n", "y\n", "a/x", "b/x") == "--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-x\n y\n");
}

TEST_CASE("unified diff agrees with diff -u", "[fix][diff]") {
  if (std::system("diff --version > /dev/null 2>&1") != 0) {
    WARN("diff (diffutils) is not installed: skipping the comparison with diff -u");
    return;
  }
  fs::path dir = test::make_temp_dir("mblint-diff");
  std::vector<std::pair<std::string, std::string>> cases = {
      {"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n", "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm\n"},
      {"a\nb\nc\n", "x\na\nc\nd\ne\n"},
      {"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10"},
      {"k: 1\nv: 2\n", ""},
  };
  // Also a pseudo-random series of line edits over a longer file.
  std::string base;
  for (int i = 0; i < 60; ++i) base += "line " + std::to_string(i) + "\n";
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::string changed;
    unsigned state = seed;
    for (int i = 0; i < 60; ++i) {
      state = state * 1103515245u + 12345u;
      unsigned roll = (state >> 16) % 10;
      if (roll == 0) continue;                                       // delete
      if (roll == 1) changed += "new " + std::to_string(i) + "\n";  // insert before
      changed += roll == 2 ? "edited " + std::to_string(i) + "\n" : "line " + std::to_string(i) + "\n";
    }
    cases.emplace_back(base, changed);
  }
  for (const auto& [before, after] : cases) {
    std::ofstream(dir / "before", std::ios::binary) << before;
    std::ofstream(dir / "after", std::ios::binary) << after;
    std::string command = "cd '" + dir.string() + "' && diff -u --label a/f --label b/f before after > expected";
    std::system(command.c_str());
    std::string ours = unified_diff(before, after, "a/f", "b/f");
    // Both are shortest edit scripts; they may order a replaced block's
    // lines differently only when several shortest scripts exist, so
    // compare the changed line counts and apply ours with patch.
    std::string expected = test::read_file(dir / "expected");
    auto count = [](const std::string& diff, char sign) {
      size_t n = 0;
      std::istringstream in(diff);
      for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line[0] == sign && line.rfind("---", 0) != 0 && line.rfind("+++", 0) != 0) ++n;
      }
      return n;
    };
    CHECK(count(ours, '-') == count(expected, '-'));
    CHECK(count(ours, '+') == count(expected, '+'));
    std::ofstream(dir / "ours.patch", std::ios::binary) << ours;
    std::ofstream(dir / "f", std::ios::binary) << before;
    std::string patch = "cd '" + dir.string() + "' && patch -s -p1 f < ours.patch > /dev/null 2>&1";
    if (std::system("patch --version > /dev/null 2>&1") == 0) {
      CHECK(std::system(patch.c_str()) == 0);
      CHECK(test::read_file(dir / "f") == after);
    }
  }
  fs::remove_all(dir);
}

// --- atomic writes -------------------------------------------------------------------------------

TEST_CASE("atomic write keeps the mode, refuses a file changed on disk, leaves no temp file", "[fix][write]") {
  fs::path dir = test::make_temp_dir("mblint-write");
  fs::path file = dir / "launch.sh";
  std::ofstream(file, std::ios::binary) << "#!/bin/bash\nTP=4\n";
  ::chmod(file.c_str(), 0751);

  WriteResult written = replace_file_if_unchanged(file, "#!/bin/bash\nTP=4\n", "#!/bin/bash\nTP=2\n");
  CHECK(written.status == WriteStatus::Written);
  CHECK(test::read_file(file) == "#!/bin/bash\nTP=2\n");
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0751);

  // Someone edited it since it was read: left exactly as they wrote it.
  WriteResult refused = replace_file_if_unchanged(file, "#!/bin/bash\nTP=4\n", "#!/bin/bash\nTP=1\n");
  CHECK(refused.status == WriteStatus::ChangedOnDisk);
  CHECK(refused.message.find("changed on disk") != std::string::npos);
  CHECK(test::read_file(file) == "#!/bin/bash\nTP=2\n");

  // A symlink is followed: the target changes, the link stays a link.
  fs::create_symlink(file.filename(), dir / "link.sh");
  CHECK(replace_file_if_unchanged(dir / "link.sh", "#!/bin/bash\nTP=2\n", "#!/bin/bash\nTP=8\n").status ==
        WriteStatus::Written);
  CHECK(fs::is_symlink(dir / "link.sh"));
  CHECK(test::read_file(file) == "#!/bin/bash\nTP=8\n");

  // A write that fails (the file size limit, which holds even for root)
  // leaves the file and no temp file behind.
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit saved {};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 8;
  ::setrlimit(RLIMIT_FSIZE, &tiny);
  WriteResult failed = replace_file_if_unchanged(file, "#!/bin/bash\nTP=8\n", std::string(4096, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  CHECK(failed.status == WriteStatus::Failed);
  CHECK(test::read_file(file) == "#!/bin/bash\nTP=8\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 2);  // launch.sh and link.sh only
  fs::remove_all(dir);
}

// --- the command line ----------------------------------------------------------------------------

TEST_CASE("check --fix / --diff / --unsafe-fixes on a small job", "[fix][cli]") {
  fs::path dir = test::make_temp_dir("mblint-fix-cli");
  std::string yaml =
      "# tuned by hand\n"
      "model:\n"
      "  tensor_model_parallel_size: 1   # one GPU per replica\n"
      "  sequence_parallel: true\n"
      "  context_parallel_size: 2\n";
  std::ofstream(dir / "override.yaml", std::ios::binary) << yaml;
  std::vector<std::string> job = {"check", "override.yaml", "--recipe", "llama3_8b_pretrain_2gpu_h100_bf16_config"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = job;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };

  Run usage = run_mblint(with({"--unsafe-fixes"}), dir);
  CHECK(usage.code == kExitUsage);
  CHECK(usage.err.find("--unsafe-fixes") != std::string::npos);

  Run diff = run_mblint(with({"--diff"}), dir);
  CHECK(test::read_file(dir / "override.yaml") == yaml);  // --diff writes nothing
  CHECK(diff.out ==
        "--- a/override.yaml\n+++ b/override.yaml\n@@ -1,5 +1,5 @@\n # tuned by hand\n model:\n"
        "   tensor_model_parallel_size: 1   # one GPU per replica\n-  sequence_parallel: true\n"
        "+  sequence_parallel: false\n   context_parallel_size: 2\n");
  CHECK(diff.err.find("would fix 1 problem") != std::string::npos);
  CHECK(diff.code == kExitFindings);

  Run fixed = run_mblint(with({"--fix"}), dir);
  CHECK(test::read_file(dir / "override.yaml") ==
        "# tuned by hand\nmodel:\n  tensor_model_parallel_size: 1   # one GPU per replica\n"
        "  sequence_parallel: false\n  context_parallel_size: 2\n");
  CHECK(fixed.out.find("override.yaml:4:22: fixed: set sequence_parallel to false [sequence-parallel-without-tp]") !=
        std::string::npos);
  CHECK(fixed.out.find("mblint: fixed 1 problem (") != std::string::npos);

  Run again = run_mblint(with({"--fix"}), dir);
  CHECK(again.out.find("mblint: fixed 0 problems (") != std::string::npos);
  fs::remove_all(dir);
}

// --- every fixable fixture -----------------------------------------------------------------------

namespace {

struct Found {
  std::string rule;
  std::string file;
  int line = 0;
  std::vector<std::string> fixes;  // descriptions (diagnostics) or the one applied (fixed lines)
};

// The fixture's command line without --format, and without the --select or
// --ignore that keeps its golden to one rule: every fix the job offers is
// exercised, whichever rule's fixture holds it.
std::vector<std::string> without_format(std::vector<std::string> args) {
  for (const std::string option : {"--format", "--select", "--ignore"}) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == option && i + 1 < args.size()) {
        args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
        --i;
      } else if (args[i].rfind(option + "=", 0) == 0) {
        args.erase(args.begin() + static_cast<long>(i));
        --i;
      }
    }
  }
  return args;
}

std::vector<Found> diagnostics_of(const fs::path& dir, std::vector<std::string> args, nlohmann::json* raw = nullptr) {
  args.push_back("--format");
  args.push_back("json");
  Run run = run_mblint(args, dir);
  nlohmann::json report = nlohmann::json::parse(run.out);
  std::vector<Found> found;
  for (const auto& d : report["diagnostics"]) {
    std::vector<std::string> fixes;
    for (const auto& fix : d["fixes"]) fixes.push_back(fix["description"].get<std::string>());
    found.push_back({d["rule"].get<std::string>(), d["file"].is_null() ? "" : d["file"].get<std::string>(),
                     d["line"].is_null() ? 0 : d["line"].get<int>(), fixes});
  }
  if (raw) *raw = std::move(report);
  return found;
}

size_t count_syntax_problems(const std::vector<Found>& found) {
  return std::count_if(found.begin(), found.end(), [](const Found& f) {
    return f.rule == "script-syntax" || f.rule == "override-syntax" || f.rule == "yaml-syntax";
  });
}

bool has_allowed_fix(const nlohmann::json& report, bool unsafe) {
  for (const auto& d : report["diagnostics"]) {
    for (const auto& fix : d["fixes"]) {
      if (!fix["edits"].empty() && (unsafe || fix["safety"] == "safe")) return true;
    }
  }
  return false;
}

// The `fixed:` lines of `check --fix`: rule, file, line.
std::vector<Found> fixed_lines(const std::string& out) {
  static const std::regex pattern(R"(^(.*):(\d+):\d+: fixed: (.*) \[([a-z0-9-]+)\]$)");
  std::vector<Found> fixed;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, pattern)) {
      fixed.push_back({m[4].str(), m[1].str(), std::stoi(m[2].str()), {m[3].str()}});
    }
  }
  return fixed;
}

bool is_yaml(const std::string& path) {
  return path.ends_with(".yaml") || path.ends_with(".yml") || path.ends_with(".json");
}

}  // namespace

TEST_CASE("fixing every fixture with a fix: the rule is gone, a second --fix is a no-op, files still parse",
          "[fix][fixtures]") {
  std::vector<test::FixtureCase> cases = test::find_fixture_cases(test::source_dir() / "fixtures" / "rules");
  size_t exercised = 0, exercised_safe = 0, changed = 0, changed_safe = 0, fixes_applied = 0;
  std::set<std::string> rules_fixed;
  for (const test::FixtureCase& fixture : cases) {
    if (test::case_name(fixture).rfind("fires", 0) != 0) continue;
    std::vector<std::string> args = without_format(fixture.args);
    nlohmann::json report;
    std::vector<Found> original = diagnostics_of(fixture.dir, args, &report);
    for (bool unsafe : {true, false}) {
      if (!has_allowed_fix(report, unsafe)) continue;
      std::string name = test::case_label(fixture) + (unsafe ? " --unsafe-fixes" : "");
      INFO("fixture " << name);
      fs::path dir = test::make_temp_dir("mblint-fixture-fix");
      fs::copy(fixture.dir, dir, fs::copy_options::recursive);
      std::map<std::string, std::string> before = snapshot(dir);

      std::vector<std::string> fix_args = args;
      fix_args.push_back("--fix");
      if (unsafe) fix_args.push_back("--unsafe-fixes");
      Run first = run_mblint(fix_args, dir);
      INFO("first --fix output:\n" << first.out << first.err);
      CHECK(first.err.find("error") == std::string::npos);
      std::vector<Found> fixed = fixed_lines(first.out);
      std::map<std::string, std::string> after = snapshot(dir);
      // Either something was fixed, or the fixes undo each other (rule A
      // sets back what rule B changed) and mblint says so, writing nothing.
      bool undone = first.out.find(": not fixed: ") != std::string::npos;
      CHECK((!fixed.empty() || undone));
      CHECK((after != before) == !fixed.empty());

      // Each applied fix took its diagnostic away: at a place where the rule
      // fired n times and k fixes applied, at most n - k findings remain.
      std::vector<Found> remaining = diagnostics_of(dir, args);
      auto count_at = [](const std::vector<Found>& list, const Found& at) {
        return std::count_if(list.begin(), list.end(), [&](const Found& f) {
          return f.rule == at.rule && f.file == at.file && f.line == at.line;
        });
      };
      for (const Found& f : fixed) {
        INFO("fixed " << f.rule << " at " << f.file << ":" << f.line << ": " << f.fixes[0]);
        if (unsafe) {
          // Unsafe fixes change the run, and a later one may make the rule
          // fire here again for another reason; but never offering the same
          // change again (that would be a fix that did not take).
          bool offered_again = std::any_of(remaining.begin(), remaining.end(), [&](const Found& r) {
            return r.rule == f.rule && r.file == f.file && r.line == f.line &&
                   std::find(r.fixes.begin(), r.fixes.end(), f.fixes[0]) != r.fixes.end();
          });
          CHECK_FALSE(offered_again);
        } else {
          long before_count = count_at(original, f);
          long fixes_here = count_at(fixed, f);
          CHECK(count_at(remaining, f) <= std::max(0L, before_count - fixes_here));
        }
        rules_fixed.insert(f.rule);
      }
      fixes_applied += fixed.size();

      // What changed still parses, with no new syntax problems.
      for (const auto& [path, text] : after) {
        if (before.count(path) && before.at(path) == text) continue;
        INFO("changed file " << path << ":\n" << text);
        if (is_yaml(path)) CHECK_NOTHROW(YAML::Load(text));
      }
      CHECK(count_syntax_problems(remaining) <= count_syntax_problems(original));

      // Idempotent: a second --fix changes nothing.
      Run second = run_mblint(fix_args, dir);
      INFO("second --fix output:\n" << second.out);
      CHECK(snapshot(dir) == after);
      CHECK(second.out.find("mblint: fixed 0 problems") != std::string::npos);
      fs::remove_all(dir);
      ++(unsafe ? exercised : exercised_safe);
      if (!fixed.empty()) ++(unsafe ? changed : changed_safe);
    }
  }
  std::cout << "fix fixtures: " << exercised << " fixable fixtures exercised with --fix --unsafe-fixes (" << changed
            << " changed, the rest had fixes that undo each other), " << exercised_safe << " with --fix alone ("
            << changed_safe << " changed); " << fixes_applied << " fixes applied; " << rules_fixed.size()
            << " rules' fixes applied\n";
  // Most rules with a fix have a fixture where it applies; far fewer would
  // mean fixes stopped being applicable.
  CHECK(exercised >= 100);
  CHECK(exercised_safe >= 5);
}
