// The YAML loader: typing per flavor, spans, duplicates, anchors, merge keys,
// limits, and the typing vectors observed with PyYAML and OmegaConf.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lint/base/yaml_scalar.h"
#include "lint/load/yaml/yaml_loader.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

struct Loaded {
  SourceSet sources;
  FileId file = kNoFile;
  YamlDocument document;
};

Loaded load(const std::string& text, YamlFlavor flavor = YamlFlavor::OmegaConf, YamlLimits limits = {}) {
  Loaded loaded;
  loaded.file = add_source(loaded.sources, "t.yaml", text);
  loaded.document = load_yaml(loaded.sources, loaded.file, flavor, Layer::ConfigFile, limits);
  return loaded;
}

std::string text_of(const Loaded& loaded, Span span) {
  return loaded.sources.files[loaded.file].text.substr(span.begin, span.end - span.begin);
}

LineCol at(const Loaded& loaded, Span span) { return line_col(loaded.sources.files[loaded.file], span.begin); }

// Python's repr of a scalar, as the vectors print it.
std::string python_repr(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::Null: return "None";
    case ValueKind::Bool: return value.boolean ? "True" : "False";
    case ValueKind::Int: return std::to_string(value.integer);
    case ValueKind::Float: {
      std::string text = fmt::format("{}", value.real);
      if (text.find('.') == std::string::npos && text.find('e') == std::string::npos) text += ".0";
      if (text == "1e-04") return "0.0001";
      return text;
    }
    case ValueKind::String: return "'" + value.text + "'";
    default: return to_display(value);
  }
}

std::string python_dict(const ConfigValue& root) {
  std::string out = "{";
  for (size_t i = 0; i < root.entries.size(); ++i) {
    if (i) out += ", ";
    const MapEntry& entry = root.entries[i];
    out += "'" + entry.key + "': ";
    out += entry.value.is_map() ? python_dict(entry.value) : python_repr(entry.value);
  }
  return out + "}";
}

}  // namespace

TEST_CASE("OmegaConf flavor types YAML 1.1 scalars plus 1e-4 floats", "[yaml]") {
  Loaded l = load("a: 1e-4\nb: yes\nc: on\nd: 010\ne: 0x10\nf: 1_024\ng: None\nh: ~\ni:\nj: '3e-4'\nk: 08\nl: .inf\n");
  const ConfigValue& root = l.document.root;
  REQUIRE(root.is_map());
  CHECK(find_path(root, "a")->kind == ValueKind::Float);
  CHECK(find_path(root, "a")->real == Approx(1e-4));
  CHECK(as_bool(find_path(root, "b")) == true);
  CHECK(as_bool(find_path(root, "c")) == true);
  CHECK(as_int(find_path(root, "d")) == 8);
  CHECK(as_int(find_path(root, "e")) == 16);
  CHECK(as_int(find_path(root, "f")) == 1024);
  CHECK(as_string(find_path(root, "g")) == "None");
  CHECK(find_path(root, "h")->is_null());
  CHECK(find_path(root, "i")->is_null());
  CHECK(as_string(find_path(root, "j")) == "3e-4");
  CHECK(find_path(root, "j")->quoted);
  CHECK(as_string(find_path(root, "k")) == "08");
  CHECK(std::isinf(find_path(root, "l")->real));
}

TEST_CASE("PyYAML flavor keeps 1e-4 a string, as ConfigContainer.from_yaml does", "[yaml]") {
  Loaded l = load("optimizer:\n  lr: 1e-4\n  min_lr: 1.0e5\n", YamlFlavor::PyYaml);
  CHECK(as_string(find_path(l.document.root, "optimizer.lr")) == "1e-4");
  CHECK(find_path(l.document.root, "optimizer.min_lr")->kind == ValueKind::String);  // PyYAML needs e[-+]
  Loaded o = load("optimizer:\n  min_lr: 1.0e5\n", YamlFlavor::OmegaConf);
  CHECK(find_path(o.document.root, "optimizer.min_lr")->kind == ValueKind::Float);
}

TEST_CASE("YAML 1.2 flavor: yes is a string, 1e-4 a float", "[yaml]") {
  Loaded l = load("a: yes\nb: 1e-4\nc: 010\n", YamlFlavor::Yaml12);
  CHECK(as_string(find_path(l.document.root, "a")) == "yes");
  CHECK(find_path(l.document.root, "b")->kind == ValueKind::Float);
  CHECK(as_int(find_path(l.document.root, "c")) == 10);
}

TEST_CASE("every value and key keeps its exact span", "[yaml]") {
  Loaded l = load("# comment\nmodel:\n  tensor_model_parallel_size: 4  # tp\n  name: \"a b\"\n  l: [1, 2]\n");
  const ConfigValue* tp = find_path(l.document.root, "model.tensor_model_parallel_size");
  REQUIRE(tp);
  CHECK(text_of(l, tp->where.value) == "4");
  CHECK(at(l, tp->where.value).line == 3);
  CHECK(at(l, tp->where.value).column == 31);
  CHECK(text_of(l, tp->where.key) == "tensor_model_parallel_size");
  CHECK(text_of(l, find_path(l.document.root, "model.name")->where.value) == "\"a b\"");
  CHECK(text_of(l, find_path(l.document.root, "model.l")->where.value) == "[1, 2]");
  CHECK(text_of(l, find_path(l.document.root, "model.l.1")->where.value) == "2");
  CHECK(tp->where.layer == Layer::ConfigFile);
}

TEST_CASE("an empty value points just after its key's colon", "[yaml]") {
  Loaded l = load("a:\n  b:\nc: 1\n");
  const ConfigValue* b = find_path(l.document.root, "a.b");
  REQUIRE(b);
  CHECK(b->is_null());
  CHECK(at(l, b->where.value).line == 2);
  CHECK(at(l, b->where.value).column == 5);
}

TEST_CASE("duplicate keys: an error under OmegaConf, a warning elsewhere; the last wins", "[yaml]") {
  std::string text = "train:\n  global_batch_size: 8\n  global_batch_size: 16\n";
  Loaded l = load(text);
  REQUIRE(l.document.problems.size() == 1);
  const Diagnostic& d = l.document.problems[0];
  CHECK(d.rule == "duplicate-key");
  CHECK(d.severity == Severity::Error);
  CHECK(at(l, d.where).line == 3);
  REQUIRE(d.notes.size() == 1);
  CHECK(at(l, d.notes[0].where).line == 2);
  CHECK(as_int(find_path(l.document.root, "train.global_batch_size")) == 16);
  Loaded p = load(text, YamlFlavor::PyYaml);
  REQUIRE(p.document.problems.size() == 1);
  CHECK(p.document.problems[0].severity == Severity::Warning);
}

TEST_CASE("duplicate keys in a wide map are found through its key index", "[yaml][limits]") {
  // 200,000 keys: a linear search per key would take minutes (found by the fuzzing work).
  std::string text;
  for (int i = 0; i < 200000; ++i) text += fmt::format("k{}: {}\n", i, i);
  text += "k7: again\nk199999: last\nk200000: new\n";
  Loaded l = load(text);
  REQUIRE(l.document.problems.size() == 2);
  CHECK(l.document.problems[0].message.find("duplicate key 'k7'") == 0);
  CHECK(at(l, l.document.problems[0].where).line == 200001);
  REQUIRE(l.document.problems[0].notes.size() == 1);
  CHECK(at(l, l.document.problems[0].notes[0].where).line == 8);
  CHECK(l.document.problems[1].message.find("duplicate key 'k199999'") == 0);
  CHECK(l.document.root.entries.size() == 200001);
  CHECK(as_string(find_path(l.document.root, "k7")) == "again");
  CHECK(as_string(find_path(l.document.root, "k200000")) == "new");
}

TEST_CASE("merge keys into a wide map keep the keys written in it", "[yaml]") {
  std::string base = "base: &b\n";
  for (int i = 0; i < 50; ++i) base += fmt::format("  k{}: {}\n", i, i);
  std::string derived = "d:\n  <<: *b\n";
  for (int i = 25; i < 75; ++i) derived += fmt::format("  k{}: -{}\n", i, i);
  Loaded l = load(base + derived);
  CHECK(l.document.problems.empty());
  const ConfigValue* d = find_path(l.document.root, "d");
  REQUIRE(d);
  CHECK(d->entries.size() == 75);
  CHECK(as_int(find_path(l.document.root, "d.k0")) == 0);
  CHECK(as_int(find_path(l.document.root, "d.k30")) == -30);
  CHECK(as_int(find_path(l.document.root, "d.k74")) == -74);
}

TEST_CASE("anchors, aliases and merge keys", "[yaml]") {
  Loaded l = load("base: &b\n  x: 1\n  y: 2\nd:\n  <<: *b\n  y: 3\ne: *b\n");
  CHECK(as_int(find_path(l.document.root, "d.x")) == 1);
  CHECK(as_int(find_path(l.document.root, "d.y")) == 3);
  CHECK(as_int(find_path(l.document.root, "e.y")) == 2);
  CHECK_FALSE(find_path(l.document.root, "d.<<"));
  CHECK(l.document.problems.empty());
}

TEST_CASE("syntax errors are located", "[yaml]") {
  Loaded l = load("a: [1, 2\nb: 3\n");
  REQUIRE_FALSE(l.document.problems.empty());
  CHECK(l.document.problems[0].rule == "yaml-syntax");
  CHECK(at(l, l.document.problems[0].where).line == 2);
}

TEST_CASE("a second document is reported", "[yaml]") {
  Loaded l = load("a: 1\n---\nb: 2\n");
  REQUIRE(l.document.problems.size() == 1);
  CHECK(at(l, l.document.problems[0].where).line == 2);
  CHECK(as_int(find_path(l.document.root, "a")) == 1);
}

TEST_CASE("an alias bomb stops at the node limit with a diagnostic", "[yaml][limits]") {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'j'; ++name) {
    text += fmt::format("{}: &{} [*{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}, *{}]\n", name, name, previous, previous,
                        previous, previous, previous, previous, previous, previous, previous, previous);
    previous = name;
  }
  Loaded l = load(text);
  REQUIRE(l.document.problems.size() == 1);
  CHECK(l.document.problems[0].message.find("nodes") != std::string::npos);
  CHECK_FALSE(l.document.ok);
}

TEST_CASE("deep nesting stops at the depth limit with a diagnostic", "[yaml][limits]") {
  Loaded l = load(std::string(10000, '[') + std::string(10000, ']') + "\n");
  REQUIRE_FALSE(l.document.problems.empty());
  CHECK(l.document.problems[0].rule == "yaml-syntax");
}

TEST_CASE("empty and comment-only files are empty configs", "[yaml]") {
  CHECK(load("").document.ok);
  CHECK(load("").document.root.is_null());
  CHECK(load("# nothing\n").document.problems.empty());
}

TEST_CASE("typing matches the observed PyYAML and OmegaConf vectors", "[yaml][shared]") {
  auto shared = test::shared_or_skip("the YAML typing vectors");
  if (!shared) return;
  auto vectors = nlohmann::json::parse(
      test::read_file(*shared / "corpus/megatron-bridge/derived/yaml_scalar_vectors.json"));
  int checked = 0;
  for (const auto& [name, vector] : vectors["cases"].items()) {
    std::string yaml = vector["yaml"];
    for (auto [flavor, field] : {std::pair{YamlFlavor::PyYaml, "pyyaml_safe_load"},
                                 std::pair{YamlFlavor::OmegaConf, "omegaconf_load"}}) {
      std::string expected = vector[field];
      INFO(name << " with " << yaml_flavor_name(flavor) << ": " << expected);
      Loaded l = load(yaml, flavor);
      if (expected.rfind("ERROR", 0) == 0) {
        bool has_error = false;
        for (const Diagnostic& d : l.document.problems) has_error |= d.severity == Severity::Error;
        CHECK(has_error);
      } else if (expected.find("datetime") != std::string::npos) {
        CHECK(python_dict(l.document.root).find("2025-01-01") != std::string::npos);  // kept as text
      } else {
        CHECK(python_dict(l.document.root) == expected);
      }
      ++checked;
    }
  }
  CHECK(checked >= 30);
}

namespace {

bool same_typed_value(const ConfigValue& a, const ConfigValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::Bool: return a.boolean == b.boolean;
    case ValueKind::Int: return a.integer == b.integer;
    case ValueKind::Float:
      return (std::isnan(a.real) && std::isnan(b.real)) || std::memcmp(&a.real, &b.real, sizeof a.real) == 0;
    default: return a.text == b.text;
  }
}

}  // namespace

TEST_CASE("the typing shortcuts give what the published resolvers give", "[yaml][typing]") {
  std::vector<std::string> scalars = {"", "~", "0", "-0", "+1", "007", "0.5", "-0.5", "+3.", "1.0e-05", "1.0E+3",
                                      "1.0e5", "1e-4", "1_000", "1:30", "0x1F", "0b101", "0o17", ".5", ".inf",
                                      "-.inf", ".nan", "12345678901234567890", "3.14.15", "1.0e-", "1.0e+",
                                      "tp", "fp16", "bf16", "yes", "Yes", "YES", "yES", "no", "No", "NO", "on",
                                      "On", "ON", "oN", "off", "Off", "OFF", "true", "True", "TRUE", "tRUE",
                                      "false", "False", "FALSE", "null", "Null", "NULL", "nULL", "y", "n", "t", "f"};
  // Random texts over the characters numbers, bools and nulls are made of.
  const std::string alphabet = "0123456789.-+eE_:xob~nulyesfatrNULYESFATR";
  uint64_t state = 20261129;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    size_t length = next() % 9;
    for (size_t k = 0; k < length; ++k) text += alphabet[next() % alphabet.size()];
    scalars.push_back(text);
  }
  int differences = 0;
  for (YamlFlavor flavor : {YamlFlavor::OmegaConf, YamlFlavor::PyYaml, YamlFlavor::Yaml12}) {
    for (const std::string& text : scalars) {
      ConfigValue fast = type_plain_scalar(text, flavor);
      ConfigValue reference = type_plain_scalar_by_resolvers(text, flavor);
      if (!same_typed_value(fast, reference)) {
        INFO("'" << text << "' with " << yaml_flavor_name(flavor) << ": " << to_display(fast) << " against "
                  << to_display(reference));
        CHECK(false);
        if (++differences > 20) return;
      }
    }
  }
  CHECK(differences == 0);
}

TEST_CASE("a syntax error in a second document keeps the first document's values", "[yaml]") {
  Loaded l = load("model:\n  tensor_model_parallel_size: 2\n---\nkey: [unclosed\n");
  CHECK(l.document.ok);
  CHECK(as_int(find_path(l.document.root, "model.tensor_model_parallel_size")) == 2);
  REQUIRE_FALSE(l.document.problems.empty());
  CHECK(l.document.problems.back().rule == "yaml-syntax");
}

TEST_CASE("values read before a syntax error are kept with their problems", "[yaml]") {
  // Duplicate keys before the error are still reported, before the syntax error.
  Loaded l = load("a: 1\na: 2\nb: [1, 2\n");
  REQUIRE(l.document.problems.size() == 2);
  CHECK(l.document.problems[0].rule == "duplicate-key");
  CHECK(l.document.problems[1].rule == "yaml-syntax");
}
