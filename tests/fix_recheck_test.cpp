// A fix's re-check lets Section rules (lint/rule/rule.h RuleScope) re-judge only
// the sections the fix changes. That must decide exactly as re-checking the
// whole job does: same fixes kept, same help, same findings they resolve.
// Compared over every golden fixture that runs `check` and over the corpus.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/run/lint.h"
#include "rules/registry.h"
#include "tests/fixture_runner.h"
#include "tests/test_support.h"

namespace mblint::test {
namespace {

namespace fs = std::filesystem;

std::string describe(const SourceSet& sources, const Span& where) {
  if (!where.valid()) return "-";
  return fmt::format("{}:{}-{}", sources.files[where.file].path, where.begin, where.end);
}

// Everything a re-check can change about the findings, one line each.
std::string describe(const SourceSet& sources, const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    out += fmt::format("{} {} {} {}\n  help: {}\n", d.rule, severity_name(d.severity), describe(sources, d.where),
                       d.message, d.help);
    for (const Note& note : d.notes) out += fmt::format("  note {} {}\n", describe(sources, note.where), note.message);
    for (const Fix& fix : d.fixes) {
      out += fmt::format("  fix {} [{}] resolves {}\n", fix.description, fix_safety_name(fix.safety),
                         fmt::join(fix.resolves, ","));
      for (const TextEdit& edit : fix.edits) {
        out += fmt::format("    edit {} '{}'\n", describe(sources, edit.where), edit.replacement);
      }
    }
  }
  return out;
}

struct Outcomes {
  std::string scoped;
  std::string everywhere;
  size_t fixes = 0;
};

// Lints `args` (check's arguments, run in `dir`) both ways.
Outcomes lint_both_ways(const fs::path& dir, const std::vector<std::string>& args) {
  Outcomes outcomes;
  for (bool everywhere : {false, true}) {
    SourceSet sources;
    std::vector<std::string> full_args = {"check"};
    full_args.insert(full_args.end(), args.begin(), args.end());
    CommandLine line = add_command_line(sources, full_args);
    std::ostringstream out, err;
    CliEnvironment env{out, err, false, [](const std::string&) { return std::optional<std::string>(); }, dir};
    LintOptions options;
    options.base_dir = dir;
    // The inputs: the arguments that name files or directories of the case.
    for (const std::string& arg : args) {
      std::error_code error;
      if (arg.front() != '-' && fs::exists(dir / arg, error)) options.paths.push_back(arg);
    }
    if (options.paths.empty() || read_job_options(full_args, line, env, options)) return {};
    options.keep_jobs = false;
    options.recheck_everywhere = everywhere;
    LintResult result = run_lint(sources, options, all_rules());
    for (const Diagnostic& d : result.diagnostics) outcomes.fixes += everywhere ? 0 : d.fixes.size();
    (everywhere ? outcomes.everywhere : outcomes.scoped) = describe(sources, result.diagnostics);
  }
  return outcomes;
}

}  // namespace

TEST_CASE("re-checking fixes section by section decides as re-checking the whole job: fixtures", "[fix]") {
  size_t cases = 0, fixes = 0;
  for (const FixtureCase& fixture : find_fixture_cases(source_dir() / "fixtures")) {
    if (fixture.args.empty() || fixture.args.front() != "check") continue;
    std::vector<std::string> args(fixture.args.begin() + 1, fixture.args.end());
    if (std::find(args.begin(), args.end(), "--fix") != args.end()) continue;  // rewrites files
    Outcomes outcomes = lint_both_ways(fixture.dir, args);
    INFO(fixture.dir.string());
    REQUIRE(outcomes.scoped == outcomes.everywhere);
    ++cases;
    fixes += outcomes.fixes;
  }
  // Enough cases and fixes for the comparison to mean something.
  CHECK(cases > 500);
  CHECK(fixes > 300);
}

TEST_CASE("re-checking fixes section by section decides as re-checking the whole job: corpus", "[fix][shared]") {
  std::optional<fs::path> shared = shared_or_skip("the corpus");
  if (!shared) return;
  fs::path corpus = *shared / "corpus";
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
      files.push_back(fs::relative(entry.path(), corpus).string());
    }
  }
  std::sort(files.begin(), files.end());
  Outcomes outcomes = lint_both_ways(corpus, files);
  CHECK(outcomes.scoped == outcomes.everywhere);
  CHECK(outcomes.fixes > 100);
}

}  // namespace mblint::test
