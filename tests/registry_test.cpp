// The list of rules is generated from the rule files (cmake/rule_list.cmake);
// each rule says its group once, in its RuleInfo, and its file sits in that
// group's folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <string>

#include "lint/base/input_rules.h"
#include "rules/registry.h"
#include "tests/test_support.h"

using namespace mblint;

TEST_CASE("the group table lists every group once, in RuleGroup's order", "[registry]") {
  size_t index = 0;
  std::set<std::string_view> folders;
  for (const RuleGroupInfo& group : rule_groups()) {
    CHECK(static_cast<size_t>(group.group) == index++);
    CHECK(folders.insert(group.folder).second);
    CHECK(std::filesystem::is_directory(test::source_dir() / "rules" / std::string(group.folder)));
  }
}

TEST_CASE("every rule's file is in the folder of its group", "[registry]") {
  REQUIRE(rule_locations().size() == all_rules().size());
  for (const RuleLocation& location : rule_locations()) {
    INFO(location.rule->name);
    CHECK(group_info(location.rule->group).folder == location.folder);
  }
}

TEST_CASE("all_rules lists the rules by group, then by code", "[registry]") {
  RuleSet rules = all_rules();
  REQUIRE(rules.size() > 150);
  for (size_t i = 1; i < rules.size(); ++i) {
    INFO(rules[i]->name);
    if (rules[i - 1]->group == rules[i]->group) {
      CHECK(rules[i - 1]->code < rules[i]->code);
    } else {
      CHECK(rules[i - 1]->group < rules[i]->group);
    }
  }
}

TEST_CASE("every rule the loaders report is registered, at the severity the loaders' table declares", "[registry]") {
  for (const InputRule& input : input_rule::kAll) {
    INFO(input.name);
    const RuleInfo* rule = find_rule(all_rules(), input.name);
    REQUIRE(rule != nullptr);
    CHECK(rule->severity == input.severity);
  }
}
