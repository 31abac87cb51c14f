// OmegaConf interpolations: what resolves, what names a missing key, what
// comes back to itself, and that hostile chains stay bounded.
#include <catch2/catch.hpp>

#include <chrono>

#include <fmt/format.h>

#include "lint/load/yaml/interpolation.h"
#include "lint/load/yaml/yaml_loader.h"

using namespace mblint;

namespace {

struct Resolved {
  SourceSet sources;
  FileId file = kNoFile;
  ConfigValue root;
  InterpolationResult result;

  explicit Resolved(const std::string& text, const InterpolationEnvironment* environment = nullptr) {
    file = add_source(sources, "config.yaml", text);
    root = load_yaml(sources, file, YamlFlavor::OmegaConf, Layer::ConfigFile).root;
    result = resolve_interpolations(root, environment);
  }
  const ConfigValue* at(std::string_view path) const { return find_path(root, path); }
};

using Path = std::vector<std::string>;

}  // namespace

TEST_CASE("a reference to a key the config lacks is recorded with where it stops", "[interpolation]") {
  Resolved r("model:\n  seq_length: ${foo.bar}\n");
  REQUIRE(r.result.problems.size() == 1);
  const InterpolationProblem& p = r.result.problems[0];
  CHECK(p.kind == InterpolationProblem::Kind::MissingKey);
  CHECK(p.target == Path{"foo", "bar"});
  CHECK(p.found == 0);
  CHECK(p.holder == Path{"model", "seq_length"});
  CHECK(p.text.substr(p.offset, p.length) == "${foo.bar}");
  CHECK(r.at("model.seq_length")->is_unknown());
}

TEST_CASE("relative references resolve from the holder's parent", "[interpolation]") {
  Resolved r("model:\n  num_layers: 32\n  a: ${.num_layers}\n  b: ${..train.iters}\n  c: x-${.nope}-${.num_layers}\n"
             "train:\n  iters: 100\n");
  CHECK(as_int(r.at("model.a")) == 32);
  CHECK(as_int(r.at("model.b")) == 100);
  REQUIRE(r.result.problems.size() == 1);
  const InterpolationProblem& p = r.result.problems[0];
  CHECK(p.target == Path{"model", "nope"});
  CHECK(p.found == 1);
  CHECK(p.text.substr(p.offset, p.length) == "${.nope}");
  CHECK(p.offset == 2);
}

TEST_CASE("resolvers, brackets and references past the root are unknown, not missing", "[interpolation]") {
  Resolved r("model:\n  a: ${oc.env:TP,1}\n  b: ${list[0]}\n  c: ${...x}\n  d: ${}\n  e: ${a..b}\n");
  CHECK(r.result.problems.empty());
  for (const char* path : {"model.a", "model.b", "model.c", "model.d", "model.e"}) {
    INFO(path);
    CHECK(r.at(path)->is_unknown());
  }
}

TEST_CASE("a reference through a value mblint does not know is not missing", "[interpolation]") {
  Resolved r("model:\n  a: ${oc.env:X}\n  b: ${model.a.deeper}\n  c: ${model.list.5}\n  list: [1, 2]\n");
  CHECK(r.result.problems.empty());
}

TEST_CASE("a cycle is recorded once, at the value that starts it", "[interpolation]") {
  Resolved two("model:\n  seq_length: ${dataset.seq_length}\ndataset:\n  seq_length: ${model.seq_length}\n");
  REQUIRE(two.result.problems.size() == 1);
  const InterpolationProblem& p = two.result.problems[0];
  CHECK(p.kind == InterpolationProblem::Kind::Cycle);
  CHECK(p.chain == std::vector<Path>{{"model", "seq_length"}, {"dataset", "seq_length"}, {"model", "seq_length"}});
  CHECK(p.holder == Path{"model", "seq_length"});
  REQUIRE(p.chain_at.size() == 2);
  CHECK(p.chain_at[1].begin == two.sources.files[two.file].text.find("${model.seq_length}"));

  Resolved self("train:\n  iters: ${.iters}\n");
  REQUIRE(self.result.problems.size() == 1);
  CHECK(self.result.problems[0].chain == std::vector<Path>{{"train", "iters"}, {"train", "iters"}});
}

TEST_CASE("a chain that ends in a value is not a cycle", "[interpolation]") {
  Resolved r("a: ${b}\nb: ${c}\nc: ${d}\nd: 7\ne: ${b}-${b}\n");
  CHECK(r.result.problems.empty());
  CHECK(as_int(r.at("a")) == 7);
  CHECK(r.at("e")->text == "7-7");
}

TEST_CASE("a 10,000-long chain, deep nesting and wide self references stay bounded", "[interpolation][bad-input]") {
  // Each lookup scans the map it searches: in maps this wide the work bound
  // (kInterpolationWork) ends resolution early, and what is left is unknown.
  auto started = std::chrono::steady_clock::now();
  std::string chain;
  for (int i = 0; i < 10000; ++i) chain += fmt::format("k{}: ${{k{}}}\n", i, i + 1);
  Resolved longest(chain + "k10000: 1\n");
  CHECK(longest.result.problems.empty());
  CHECK(longest.at("k0")->is_unknown());

  std::string ring;
  for (int i = 0; i < 10000; ++i) ring += fmt::format("r{}: ${{r{}}}\n", i, (i + 1) % 10000);
  Resolved big_cycle(ring);
  CHECK(big_cycle.result.problems.empty());  // longer than the chains mblint follows

  std::string small;
  for (int i = 0; i < 10000; ++i) small += fmt::format("s{0}: ${{s{0}}}\n", i);
  Resolved selves(small);
  CHECK(!selves.result.problems.empty());
  CHECK(selves.result.problems.size() <= 10000);
  for (const InterpolationProblem& p : selves.result.problems) CHECK(p.kind == InterpolationProblem::Kind::Cycle);

  std::string nested = "v: ";
  for (int i = 0; i < 5000; ++i) nested += "${";
  nested += "x";
  for (int i = 0; i < 5000; ++i) nested += "}";
  Resolved deep(nested + "\n");
  CHECK(deep.result.problems.empty());
  CHECK(deep.at("v")->is_unknown());

  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

TEST_CASE("a chain longer than the depth mblint follows is unknown, not an error", "[interpolation]") {
  std::string chain = "model:\n";
  for (int i = 0; i < 40; ++i) chain += fmt::format("  k{}: ${{.k{}}}\n", i, i + 1);
  Resolved r(chain + "  k40: 1\n");
  CHECK(r.result.complete);
  CHECK(r.result.problems.empty());
  CHECK(r.at("model.k0")->is_unknown());  // 40 links
  CHECK(as_int(r.at("model.k20")) == 1);  // 20 links
}

namespace {

// TP=4 and MINIBS=256 set, RUN set to something mblint cannot know, the rest unset.
InterpolationEnvironment test_environment() {
  InterpolationEnvironment environment;
  environment.lookup = [](std::string_view name) {
    EnvironmentValue value;
    value.state = EnvironmentValue::State::Unset;
    if (name == "TP" || name == "MINIBS") {
      value.state = EnvironmentValue::State::Set;
      value.value = name == "TP" ? "4" : "256";
    } else if (name == "RUN") {
      value.state = EnvironmentValue::State::Unknown;
    }
    return value;
  };
  return environment;
}

}  // namespace

TEST_CASE("oc.env reads the environment: set, unset with a default, unknown", "[interpolation]") {
  InterpolationEnvironment environment = test_environment();
  Resolved r(
      "a: ${oc.env:TP}\n"
      "b: ${oc.decode:${oc.env:TP,1}}\n"
      "c: ${oc.decode:${oc.env:CP,2}}\n"
      "d: ${oc.env:CP,2}\n"
      "e: ${oc.decode:${oc.env:RUN,1}}\n"
      "f: ${oc.env:CP}\n"
      "g: ${oc.decode:${oc.env:CP,${oc.env:TP,1}}}\n"
      "h: ${oc.decode:${oc.env:CP,'a2a'}}\n"
      "i: ${oc.env:CP,null}\n",
      &environment);
  CHECK(r.at("a")->kind == ValueKind::String);  // OmegaConf's oc.env gives text
  CHECK(r.at("a")->text == "4");
  CHECK(as_int(r.at("b")) == 4);
  CHECK(as_int(r.at("c")) == 2);
  CHECK(r.at("d")->kind == ValueKind::String);  // the default as text: str(2)
  CHECK(r.at("e")->is_unknown());
  CHECK(r.at("f")->is_unknown());  // unset without a default: OmegaConf raises
  CHECK(as_int(r.at("g")) == 4);
  CHECK(r.at("h")->text == "a2a");
  CHECK(r.at("i")->is_null());
}

TEST_CASE("integer resolvers evaluate on known integers only", "[interpolation]") {
  InterpolationEnvironment environment = test_environment();
  Resolved r(
      "trainer: {devices: 8, num_nodes: 32}\n"
      "model:\n"
      "  tensor_model_parallel_size: 4\n"
      "  pipeline_model_parallel_size: 8\n"
      "  global_batch_size: ${multiply:${oc.decode:${oc.env:MINIBS}},${floor_div:${multiply:${trainer.devices},"
      "${trainer.num_nodes}},${multiply:${model.tensor_model_parallel_size},${model.pipeline_model_parallel_size}}}}\n"
      "  ffn: ${multiply:4, ${.global_batch_size}}\n"
      "  up: ${ceil_div:5,2}\n"
      "  down: ${floor_div:-7,2}\n"
      "  by_zero: ${floor_div:7,0}\n"
      "  fraction: ${multiply:0.125,8}\n"
      "  sum: ${add:1,2}\n"
      "  other: ${if:${oc.env:TP},1,2}\n"
      "  overflow: ${multiply:9223372036854775807,2}\n",
      &environment);
  CHECK(as_int(r.at("model.global_batch_size")) == 2048);
  CHECK(as_int(r.at("model.ffn")) == 8192);
  CHECK(as_int(r.at("model.up")) == 3);
  CHECK(as_int(r.at("model.down")) == -4);  // Python's // floors
  CHECK(r.at("model.by_zero")->is_unknown());
  CHECK(r.at("model.fraction")->is_unknown());
  CHECK(as_int(r.at("model.sum")) == 3);
  CHECK(r.at("model.other")->is_unknown());
  CHECK(r.at("model.overflow")->is_unknown());
}

TEST_CASE("without an environment every resolver stays unknown", "[interpolation]") {
  Resolved r("a: ${oc.decode:${oc.env:TP,1}}\nb: ${multiply:2,3}\n");
  CHECK(r.at("a")->is_unknown());
  CHECK(r.at("b")->is_unknown());
  CHECK(r.result.problems.empty());
}
