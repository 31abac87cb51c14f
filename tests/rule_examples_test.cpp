// Each rule's documented bad example must fire the rule; its good example
// must not. The examples are what `mblint explain` prints.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/fixture_runner.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

std::set<std::string> rules_fired(const RuleExample& example) {
  std::filesystem::path dir = test::make_temp_dir("mblint-rule-example");
  std::ofstream(dir / std::string(example.filename), std::ios::binary) << example.content;
  std::vector<std::string> args = {"check", "--format", "json"};
  for (const std::string& arg : test::split_command(std::string(example.args))) args.push_back(arg);
  std::string text = test::run_mblint(args, dir).out;
  std::filesystem::remove_all(dir);
  std::set<std::string> fired;
  size_t at = 0;
  while ((at = text.find("\"rule\": \"", at)) != std::string::npos) {
    at += 9;
    fired.insert(text.substr(at, text.find('"', at) - at));
  }
  // A finding folded into the first error at the same value still fired.
  const std::string folded = "the same value also fails: ";
  at = 0;
  while ((at = text.find(folded, at)) != std::string::npos) {
    size_t end = text.find("]\"", at);
    size_t open = text.rfind('[', end);
    if (end == std::string::npos || open == std::string::npos || open < at) break;
    fired.insert(text.substr(open + 1, end - open - 1));
    at = end;
  }
  return fired;
}

}  // namespace

TEST_CASE("documented bad examples fire and good examples stay silent", "[rules]") {
  for (const RuleInfo* rule : all_rules()) {
    INFO("rule " << rule->name);
    REQUIRE_FALSE(rule->bad.content.empty());
    REQUIRE_FALSE(rule->good.content.empty());
    CHECK(rules_fired(rule->bad).count(std::string(rule->name)) == 1);
    CHECK(rules_fired(good_example(*rule)).count(std::string(rule->name)) == 0);
  }
}

TEST_CASE("rule codes and names are unique and well formed", "[rules]") {
  std::set<std::string_view> codes, names;
  for (const RuleInfo* rule : all_rules()) {
    INFO("rule " << rule->name);
    CHECK(codes.insert(rule->code).second);
    CHECK(names.insert(rule->name).second);
    CHECK(rule->code.size() == 5);
    CHECK(rule->code.substr(0, 2) == "MB");
    for (char c : rule->name) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'));
    CHECK_FALSE(rule->summary.empty());
    CHECK(rule->doc.size() > 100);
  }
}
