// ctest runs each test case by passing its name to the test binary as a
// filter (catch_discover_tests): a name that starts with '-' is read as an
// option there, so the test fails under ctest while it passes when the
// binary is run directly.
#include <catch2/catch.hpp>

TEST_CASE("no test case name starts with '-' (ctest passes names as arguments)", "[suite]") {
  const auto& tests = Catch::getAllTestCasesSorted(*Catch::getCurrentContext().getConfig());
  CHECK(tests.size() > 300);
  for (const Catch::TestCase& test : tests) {
    INFO(test.name);
    CHECK(test.name.front() != '-');
  }
}
