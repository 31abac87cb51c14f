#include "tests/fixture_runner.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

namespace mblint::test {

std::vector<std::string> split_command(const std::string& line) {
  std::vector<std::string> args;
  std::string current;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) args.push_back(current);
      current.clear();
      in_word = false;
      continue;
    }
    current += c;
    in_word = true;
  }
  if (in_word) args.push_back(current);
  return args;
}

std::string case_name(const FixtureCase& fixture) {
  return fixture.name.empty() ? fixture.dir.filename().string() : fixture.name;
}

std::filesystem::path expected_path(const FixtureCase& fixture) {
  return fixture.dir / (fixture.name.empty() ? "expected.txt" : fixture.name + ".expected.txt");
}

std::string case_label(const FixtureCase& fixture) {
  std::string dir = std::filesystem::relative(fixture.dir, source_dir()).string();
  return fixture.name.empty() ? dir : dir + ":" + fixture.name;
}

std::vector<FixtureCase> find_fixture_cases(const std::filesystem::path& root) {
  std::vector<FixtureCase> cases;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::string file = entry.path().filename().string();
    if (file != "cmd" && !file.ends_with(".cmd")) continue;
    std::string name = file == "cmd" ? "" : file.substr(0, file.size() - 4);
    cases.push_back(FixtureCase{entry.path().parent_path(), split_command(read_file(entry.path())), name});
  }
  std::sort(cases.begin(), cases.end(), [](const FixtureCase& a, const FixtureCase& b) {
    return std::tie(a.dir, a.name) < std::tie(b.dir, b.name);
  });
  return cases;
}

std::string run_case(const FixtureCase& fixture) {
  CliRun run = run_mblint(fixture.args, fixture.dir);
  std::string text = run.out;
  if (!run.err.empty()) text += "[stderr]\n" + run.err;
  text += "[exit " + std::to_string(run.code) + "]\n";
  return text;
}

}  // namespace mblint::test
