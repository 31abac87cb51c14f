// The contract of `mblint resolve --format json` (docs/commands.md, "mblint resolve"),
// checked key by key and type by type; shared by the resolve unit test and
// the launch-script corpus run.
#pragma once

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace mblint::test {

namespace resolve_contract {

using nlohmann::json;

inline std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

inline bool int_or_null(const json& j) { return j.is_null() || j.is_number_integer(); }
inline bool string_or_null(const json& j) { return j.is_null() || j.is_string(); }

// A location: file, line (and column) all null, or a file and 1-based numbers.
inline void check_location(const json& j, bool column) {
  if (j["file"].is_null()) {
    CHECK(j["line"].is_null());
    if (column) CHECK(j["column"].is_null());
    return;
  }
  CHECK(j["file"].is_string());
  REQUIRE(j["line"].is_number_integer());
  CHECK(j["line"].get<int>() >= 1);
  if (column) {
    REQUIRE(j["column"].is_number_integer());
    CHECK(j["column"].get<int>() >= 1);
  }
}

inline const std::set<std::string> kLayers = {"default",      "recipe",  "config file", "flag",
                                              "override",     "Megatron-LM flag", "command line",
                                              "rewrite",      "launcher", "derived"};

}  // namespace resolve_contract

// Every key and type the contract names.
inline void check_contract(const nlohmann::json& document) {
  using namespace resolve_contract;
  REQUIRE(document.is_object());
  CHECK(keys_of(document) == std::set<std::string>{"version", "jobs"});
  CHECK(document["version"] == 1);
  REQUIRE(document["jobs"].is_array());
  for (const json& job : document["jobs"]) {
    INFO(job.dump());
    REQUIRE(keys_of(job) == std::set<std::string>{"file", "line", "launcher", "entry", "dialect", "recipe", "nodes",
                                                  "gpus_per_node", "world_size", "settings", "derived", "unresolved"});
    check_location(job, false);
    CHECK(string_or_null(job["launcher"]));
    CHECK(job["entry"].is_string());
    CHECK(std::set<std::string>{"bridge", "megatron-lm", "nemo"}.count(job["dialect"].get<std::string>()) == 1);
    CHECK(string_or_null(job["recipe"]));
    for (const char* size : {"nodes", "gpus_per_node", "world_size"}) CHECK(int_or_null(job[size]));
    REQUIRE(job["settings"].is_object());
    for (const auto& [key, setting] : job["settings"].items()) {
      INFO(key);
      REQUIRE(keys_of(setting) == std::set<std::string>{"value", "file", "line", "column", "layer"});
      check_location(setting, true);
      CHECK(kLayers.count(setting["layer"].get<std::string>()) == 1);
    }
    REQUIRE(job["derived"].is_object());
    for (const char* name : {"data_parallel_size", "expert_data_parallel_size", "microbatches", "min_gpus"}) {
      REQUIRE(job["derived"].contains(name));
      CHECK(int_or_null(job["derived"][name]));
    }
    REQUIRE(job["derived"].contains("pipeline_bubble"));
    CHECK((job["derived"]["pipeline_bubble"].is_null() || job["derived"]["pipeline_bubble"].is_number()));
    REQUIRE(job["unresolved"].is_array());
    for (const json& u : job["unresolved"]) {
      for (const char* key : {"what", "why", "file", "line"}) REQUIRE(u.contains(key));
      CHECK(u["what"].is_string());
      CHECK(u["why"].is_string());
      check_location(u, false);
    }
  }
}

}  // namespace mblint::test
