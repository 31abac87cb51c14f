// Runs every golden fixture under fixtures/ (see tests/fixture_runner.h).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <map>

#include "rules/registry.h"
#include "tests/fixture_runner.h"
#include "tests/test_support.h"

using namespace mblint::test;

TEST_CASE("golden fixtures produce exactly their expected output", "[fixtures]") {
  const bool update = std::getenv("MBLINT_UPDATE_FIXTURES") != nullptr;
  // MBLINT_FIXTURE_FILTER=text limits the run (and an update) to cases whose
  // path contains the text.
  const char* filter = std::getenv("MBLINT_FIXTURE_FILTER");
  std::vector<FixtureCase> cases = find_fixture_cases(source_dir() / "fixtures");
  REQUIRE(cases.size() > 0);
  for (const FixtureCase& fixture : cases) {
    if (filter && case_label(fixture).find(filter) == std::string::npos) continue;
    std::string actual = run_case(fixture);
    std::filesystem::path expected = expected_path(fixture);
    if (update) {
      std::ofstream(expected, std::ios::binary) << actual;
      continue;
    }
    INFO("fixture " << case_label(fixture) << " (regenerate: MBLINT_UPDATE_FIXTURES=1 build/tests/mblint_tests '[fixtures]')");
    REQUIRE(std::filesystem::exists(expected));
    CHECK(actual == read_file(expected));
  }
}

TEST_CASE("every rule has fixtures that fire and fixtures that stay silent", "[fixtures]") {
  std::vector<FixtureCase> cases = find_fixture_cases(source_dir() / "fixtures" / "rules");
  // Directory layout: fixtures/rules/<rule-name>/<fires-*|silent-*>/
  std::map<std::string, std::pair<int, int>> counts;
  for (const FixtureCase& fixture : cases) {
    std::string rule = fixture.dir.parent_path().filename().string();
    std::string name = case_name(fixture);
    std::string expected = read_file(expected_path(fixture));
    std::string tag = "[" + rule + "]";
    if (name.rfind("fires", 0) == 0) {
      INFO(case_label(fixture));
      CHECK(expected.find(tag) != std::string::npos);
      counts[rule].first++;
    } else if (name.rfind("silent", 0) == 0) {
      INFO(case_label(fixture));
      CHECK(expected.find(tag) == std::string::npos);
      counts[rule].second++;
    }
  }
  for (const auto& [rule, count] : counts) {
    INFO("rule " << rule);
    // A directory named after no rule would pass its silent cases forever.
    CHECK(mblint::find_rule(mblint::all_rules(), rule) != nullptr);
    CHECK(count.first > 0);
    CHECK(count.second > 0);
  }
}
