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
