// Golden fixtures: each directory under fixtures/ that holds a `cmd` file is
// one case. `cmd` is the mblint command line (after `mblint`), run in that
// directory; `expected.txt` is the exact standard output followed by a line
// `[exit N]`. More cases on the same inputs sit beside them as `NAME.cmd` and
// `NAME.expected.txt` (one script checked with other arguments or releases
// keeps one copy). Set MBLINT_UPDATE_FIXTURES=1 to rewrite the expected files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mblint::test {

struct FixtureCase {
  std::filesystem::path dir;
  std::vector<std::string> args;
  std::string name = {};  // empty for the directory's `cmd`, NAME for `NAME.cmd`
};

// The case's name: the directory's for `cmd`, NAME for `NAME.cmd`.
std::string case_name(const FixtureCase& fixture);
// `expected.txt`, or `NAME.expected.txt` beside `NAME.cmd`.
std::filesystem::path expected_path(const FixtureCase& fixture);
// The case as a path under the source tree, for messages: `fixtures/x/y[:NAME]`.
std::string case_label(const FixtureCase& fixture);

std::vector<FixtureCase> find_fixture_cases(const std::filesystem::path& root);

// Split a `cmd` line into arguments: whitespace separates, '...' and "..."
// group (no escapes inside single quotes).
std::vector<std::string> split_command(const std::string& line);

// Run mblint in-process in `dir`; returns stdout plus "[exit N]\n".
std::string run_case(const FixtureCase& fixture);

}  // namespace mblint::test
