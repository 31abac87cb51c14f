// rules/README.md is generated from the rules' metadata and must be current.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "lint/cli/cli.h"
#include "rules/registry.h"
#include "tests/cli_run.h"
#include "tests/test_support.h"

TEST_CASE("rules/README.md matches `mblint rules --format markdown`", "[rules]") {
  mblint::test::CliRun run = mblint::test::run_mblint({"rules", "--format", "markdown"}, mblint::test::source_dir());
  REQUIRE(run.code == 0);
  INFO("regenerate with: build/mblint rules --format markdown > rules/README.md");
  CHECK(run.out == mblint::test::read_file(mblint::test::source_dir() / "rules" / "README.md"));
}

// The README's rules table names some rules of each group: every row's group
// must be a group (its title up to any remark in parentheses) and every rule
// it names must exist and belong to that group. The counts live only in the
// generated reference.
TEST_CASE("README.md's rules table names real rules of the group of their row", "[rules]") {
  std::string readme = mblint::test::read_file(mblint::test::source_dir() / "README.md");
  std::string table = readme.substr(readme.find("| group | examples |"));
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // header
  std::getline(lines, line);  // |---|---|
  size_t rows = 0, named = 0;
  while (std::getline(lines, line) && line.rfind("| ", 0) == 0) {
    size_t bar = line.find(" | ", 2);
    REQUIRE(bar != std::string::npos);
    std::string title = line.substr(2, bar - 2);
    if (size_t paren = title.find(" ("); paren != std::string::npos) title.resize(paren);
    const mblint::RuleGroupInfo* group = nullptr;
    for (const mblint::RuleGroupInfo& g : mblint::rule_groups()) {
      if (g.title.substr(0, g.title.find(" (")) == title) group = &g;
    }
    INFO(line);
    REQUIRE(group != nullptr);
    ++rows;
    // Rule names are the backquoted kebab-case words; other code spans are values or keys.
    std::string examples = line.substr(bar + 3);
    for (size_t at = examples.find('`'); at != std::string::npos; at = examples.find('`', at + 1)) {
      size_t end = examples.find('`', at + 1);
      REQUIRE(end != std::string::npos);
      std::string word = examples.substr(at + 1, end - at - 1);
      at = end;
      if (!std::regex_match(word, std::regex("[a-z0-9]+(-[a-z0-9]+)+"))) continue;
      const mblint::RuleInfo* rule = mblint::find_rule(mblint::all_rules(), word);
      INFO(word);
      REQUIRE(rule != nullptr);
      CHECK(rule->group == group->group);
      ++named;
    }
  }
  CHECK(rows == mblint::rule_groups().size());
  CHECK(named > 40);
}
