// rules/README.md is generated from the rules' metadata and must be current.
#include <catch2/catch.hpp>

#include <sstream>

#include "lint/cli.h"
#include "rules/registry.h"
#include "tests/test_support.h"

TEST_CASE("rules/README.md matches `mblint rules --format markdown`", "[rules]") {
  std::ostringstream out, err;
  mblint::CliEnvironment env{out, err, false, {}, mblint::test::source_dir()};
  REQUIRE(mblint::run_cli({"rules", "--format", "markdown"}, mblint::all_rules(), env) == 0);
  INFO("regenerate with: build/mblint rules --format markdown > rules/README.md");
  CHECK(out.str() == mblint::test::read_file(mblint::test::source_dir() / "rules" / "README.md"));
}

// The README's rules table summarises the registry by group: its total and
// per-group counts must match the rules that exist.
TEST_CASE("README.md states the number of rules in each group correctly", "[rules]") {
  std::string readme = mblint::test::read_file(mblint::test::source_dir() / "README.md");
  size_t total = mblint::all_rules().size();
  CHECK(readme.find(std::to_string(total) + " rules, in groups by code") != std::string::npos);
  // Rows look like "| MB401–MB413 | context parallelism | 13 | ...": count the
  // registry's rules whose code falls in each row's ranges.
  std::istringstream lines(readme);
  std::string line;
  size_t rows = 0, counted = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| MB", 0) != 0 || line.find("–") == std::string::npos) continue;
    std::vector<std::string> cells;
    std::istringstream row(line);
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(cell);
    REQUIRE(cells.size() >= 4);
    size_t claimed = std::stoul(cells[3]);
    size_t actual = 0;
    std::istringstream ranges(cells[1]);
    std::string range;
    while (std::getline(ranges, range, ',')) {
      size_t dash = range.find("–");
      size_t a = range.find("MB"), b = range.find("MB", dash);
      int from = std::stoi(range.substr(a + 2)), to = std::stoi(range.substr(b + 2));
      for (const mblint::RuleInfo* rule : mblint::all_rules()) {
        int code = std::stoi(std::string(rule->code.substr(2)));
        if (code >= from && code <= to) ++actual;
      }
    }
    INFO(line);
    CHECK(claimed == actual);
    ++rows;
    counted += actual;
  }
  CHECK(rows > 0);
  CHECK(counted == total);
}
