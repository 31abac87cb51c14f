// Golden fixtures: each directory under fixtures/ that holds a `cmd` file is
// one case. `cmd` is the mblint command line (after `mblint`), run in that
// directory; `expected.txt` is the exact standard output followed by a line
// `[exit N]`. Set MBLINT_UPDATE_FIXTURES=1 to rewrite the expected files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mblint::test {

struct FixtureCase {
  std::filesystem::path dir;
  std::vector<std::string> args;
};

std::vector<FixtureCase> find_fixture_cases(const std::filesystem::path& root);

// Split a `cmd` line into arguments: whitespace separates, '...' and "..."
// group (no escapes inside single quotes).
std::vector<std::string> split_command(const std::string& line);

// Run mblint in-process in `dir`; returns stdout plus "[exit N]\n".
std::string run_case(const FixtureCase& fixture);

}  // namespace mblint::test
