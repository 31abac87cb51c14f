// mblint over every file of ../shared/corpus (1,480 real public configs): no
// crash, no internal error, no hang. Prints what it found, per rule.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lint/cli.h"
#include "rules/registry.h"
#include "tests/test_support.h"

using namespace mblint;

TEST_CASE("every corpus file is checked without an internal error", "[corpus][shared]") {
  auto shared = test::shared_or_skip("the corpus run");
  if (!shared) return;
  std::filesystem::path corpus = *shared / "corpus";
  std::map<std::string, int> by_rule;
  size_t files = 0;
  size_t with_findings = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(corpus)) {
    if (!entry.is_regular_file()) continue;
    std::string path = std::filesystem::relative(entry.path(), corpus).string();
    // Each file alone, as a pre-commit hook sees it, with JSON output.
    std::ostringstream out, err;
    CliEnvironment env{out, err, false, {}, corpus};
    int code = run_cli({"check", path, "--format", "json"}, all_rules(), env);
    INFO(path << "\n" << err.str());
    REQUIRE(code != kExitInternal);
    REQUIRE(code != kExitUsage);
    auto document = nlohmann::json::parse(out.str());
    ++files;
    if (!document["diagnostics"].empty()) ++with_findings;
    for (const auto& d : document["diagnostics"]) by_rule[d["rule"].get<std::string>()]++;
  }
  std::ostringstream report;
  report << "corpus: " << files << " files, " << with_findings << " with findings\n";
  for (const auto& [rule, count] : by_rule) report << "  " << rule << ": " << count << "\n";
  WARN(report.str());
  CHECK(files >= 1400);
}
