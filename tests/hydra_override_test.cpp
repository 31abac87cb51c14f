#include "lint/load/hydra/hydra_override.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tests/test_support.h"

namespace {

using mblint::ConfigValue;
using mblint::HydraParse;
using mblint::Layer;
using mblint::OverrideOp;
using mblint::ValueKind;
using nlohmann::json;

HydraParse parse(std::string_view text) {
  return mblint::parse_hydra_override(mblint::mapped_verbatim(0, 0, text), Layer::Override);
}

// An expansion the shell could not resolve ($TP unset, $(nproc)) over
// [begin, end) of the word.
mblint::Expansion unknown_expansion(size_t begin, size_t end) {
  mblint::Expansion expansion;
  expansion.begin = begin;
  expansion.end = end;
  expansion.known = false;
  return expansion;
}

// `text` as a launch script hands it over: one of its ranges comes from an
// expansion.
HydraParse parse_expanded(std::string_view text, mblint::Expansion expansion) {
  mblint::MappedString word = mblint::mapped_verbatim(0, 0, text);
  word.expansions.push_back(std::move(expansion));
  return mblint::parse_hydra_override(word, Layer::Override);
}

// The single value of a parse that must succeed without problems.
ConfigValue value_of(std::string_view text) {
  HydraParse result = parse(text);
  INFO(text);
  REQUIRE(result.parsed);
  REQUIRE(result.problems.empty());
  REQUIRE(result.parsed->value);
  return *result.parsed->value;
}

// The single problem of a parse that must fail.
mblint::Diagnostic problem_of(std::string_view text) {
  HydraParse result = parse(text);
  INFO(text);
  REQUIRE_FALSE(result.parsed);
  REQUIRE(result.problems.size() == 1);
  return result.problems[0];
}

// An override Hydra refuses, and the bytes its one problem points at.
struct Refusal {
  std::string_view text;
  uint32_t begin;
  uint32_t end;
};

void check_refusals(std::initializer_list<Refusal> refusals) {
  for (const Refusal& refusal : refusals) {
    INFO(refusal.text);
    CHECK(problem_of(refusal.text).where == mblint::Span{0, refusal.begin, refusal.end});
  }
}

// Python's json.dump writes NaN / Infinity / -Infinity, which are not JSON.
// Turn them into sentinel strings outside of JSON strings.
std::string replace_python_constants(const std::string& text) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view constant : {"-Infinity", "Infinity", "NaN"}) {
      if (text.compare(i, constant.size(), constant) == 0) {
        out += "\"__python_" + std::string(constant) + "__\"";
        i += constant.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

std::string python_type_of(const json& value) {
  if (value.is_null()) return "NoneType";
  if (value.is_boolean()) return "bool";
  if (value.is_number_integer()) return "int";
  if (value.is_number_float()) return "float";
  if (value.is_array()) return "list";
  if (value.is_object()) return "dict";
  std::string text = value.get<std::string>();
  return text.rfind("__python_", 0) == 0 ? "float" : "str";
}

// "" when `actual` is `expected` of Python type `type`, else what differs.
// With `subset`, a dict may hold fewer keys (Hydra merged it into the config).
std::string mismatch(const ConfigValue& actual, const json& expected, const std::string& type,
                     bool subset = false) {
  auto differs = [&](std::string what) {
    return what + " (got " + mblint::to_display(actual) + ", expected " + expected.dump() + ")";
  };
  if (type == "NoneType") return actual.kind == ValueKind::Null ? "" : differs("not null");
  if (type == "bool") {
    if (actual.kind != ValueKind::Bool) return differs("not a bool");
    return actual.boolean == expected.get<bool>() ? "" : differs("other bool");
  }
  if (type == "int") {
    if (actual.kind != ValueKind::Int) return differs("not an int");
    return actual.integer == expected.get<int64_t>() ? "" : differs("other int");
  }
  if (type == "float") {
    if (actual.kind != ValueKind::Float) return differs("not a float");
    if (expected.is_string()) {
      std::string constant = expected.get<std::string>();
      if (constant == "__python_NaN__") return std::isnan(actual.real) ? "" : differs("not nan");
      double infinity = constant == "__python_Infinity__" ? HUGE_VAL : -HUGE_VAL;
      return actual.real == infinity ? "" : differs("not inf");
    }
    return actual.real == expected.get<double>() ? "" : differs("other float");
  }
  if (type == "str") {
    if (actual.kind != ValueKind::String) return differs("not a string");
    return actual.text == expected.get<std::string>() ? "" : differs("other string");
  }
  if (type == "list") {
    if (actual.kind != ValueKind::List) return differs("not a list");
    if (actual.items.size() != expected.size()) return differs("other length");
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string inner = mismatch(actual.items[i], expected[i], python_type_of(expected[i]));
      if (!inner.empty()) return "item " + std::to_string(i) + ": " + inner;
    }
    return "";
  }
  if (type == "dict") {
    if (actual.kind != ValueKind::Map) return differs("not a dict");
    if (!subset && actual.entries.size() != expected.size()) return differs("other size");
    for (const mblint::MapEntry& entry : actual.entries) {
      if (!expected.contains(entry.key)) return differs("unexpected key " + entry.key);
      const json& inner_expected = expected.at(entry.key);
      std::string inner = mismatch(entry.value, inner_expected, python_type_of(inner_expected));
      if (!inner.empty()) return entry.key + ": " + inner;
    }
    return "";
  }
  return "unknown value_type " + type;
}

OverrideOp op_named(const std::string& name) {
  if (name == "ADD") return OverrideOp::Add;
  if (name == "FORCE_ADD") return OverrideOp::ForceAdd;
  if (name == "DEL") return OverrideOp::Delete;
  return OverrideOp::Change;
}

// Overrides that parse fine but fail against the vectors' config (a missing
// key, `+` on an existing key, ...): applying them is not the parser's job.
struct Expected {
  OverrideOp op;
  std::string key;
  json value;  // null with type "" when there is no value
  std::string type;
};

const std::map<std::string, Expected>& config_dependent() {
  static const std::map<std::string, Expected> cases = {
      {"train.nonexistent=5", {OverrideOp::Change, "train.nonexistent", 5, "int"}},
      {"+train.global_batch_size=5", {OverrideOp::Add, "train.global_batch_size", 5, "int"}},
      {"~train.rampup_batch_size", {OverrideOp::Delete, "train.rampup_batch_size", nullptr, ""}},
      {"~train.global_batch_size=256", {OverrideOp::Delete, "train.global_batch_size", 256, "int"}},
      {"comm_overlap.tp_comm_overlap=true",
       {OverrideOp::Change, "comm_overlap.tp_comm_overlap", true, "bool"}},
      {"peft.dim=8", {OverrideOp::Change, "peft.dim", 8, "int"}},
      {"env_vars.FOO=1", {OverrideOp::Change, "env_vars.FOO", 1, "int"}},
      {"logger.wandb_project=my-proj",
       {OverrideOp::Change, "logger.wandb_project", "my-proj", "str"}},
  };
  return cases;
}

void check_expected(const HydraParse& result, const Expected& expected) {
  REQUIRE(result.parsed);
  CHECK(result.problems.empty());
  CHECK(result.parsed->op == expected.op);
  CHECK(mblint::join_path(result.parsed->key) == expected.key);
  if (expected.type.empty()) {
    CHECK_FALSE(result.parsed->value);
  } else {
    REQUIRE(result.parsed->value);
    CHECK(mismatch(*result.parsed->value, expected.value, expected.type) == "");
  }
}

void check_success(const HydraParse& result, const json& vector, const json& base_config) {
  const std::string text = vector.at("override").get<std::string>();
  REQUIRE(result.parsed);
  CHECK(result.problems.size() == (text.find("=None") != std::string::npos ? 1u : 0u));
  const mblint::HydraOverride& parsed = *result.parsed;
  const std::string key = vector.at("key").get<std::string>();
  CHECK(parsed.op == op_named(vector.at("override_type").get<std::string>()));
  CHECK(mblint::join_path(parsed.key) == key);
  if (parsed.op == OverrideOp::Delete) {
    // The vector records the config after the delete; the parse keeps the
    // value to compare with only when one was written.
    CHECK(parsed.value.has_value() == (text.find('=') != std::string::npos));
    return;
  }
  REQUIRE(parsed.value);
  const ConfigValue& value = *parsed.value;
  const std::string value_text = text.substr(text.find('=') + 1);
  if (value.kind == ValueKind::String && value.text.rfind("${", 0) == 0) {
    // The vector holds the resolved interpolation; the parse keeps it as written.
    CHECK(value.text == value_text);
    return;
  }
  // A dict given for an existing mapping is merged into it by Hydra.
  const json* existing = &base_config;
  for (const std::string& segment : parsed.key) {
    existing =
        existing->is_object() && existing->contains(segment) ? &existing->at(segment) : nullptr;
    if (!existing) break;
  }
  bool merged = existing && existing->is_object() && parsed.op == OverrideOp::Change;
  CHECK(mismatch(value, vector.at("value"), vector.at("value_type").get<std::string>(), merged) ==
        "");
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<mblint::Span> {
  static std::string convert(const mblint::Span& span) {
    return "{file " + std::to_string(span.file) + ", " + std::to_string(span.begin) + ".." +
           std::to_string(span.end) + "}";
  }
};
}  // namespace Catch

TEST_CASE("hydra overrides: every observed vector", "[hydra_override][shared]") {
  std::optional<std::filesystem::path> shared = mblint::test::shared_or_skip("the observed override vectors (hydra_override_vectors.json)");
  if (!shared) return;
  std::filesystem::path path =
      *shared / "corpus/megatron-bridge/derived/hydra_override_vectors.json";
  json vectors = json::parse(replace_python_constants(mblint::test::read_file(path)));
  const json& base_config = vectors.at("base_config");
  size_t checked = 0;
  for (const json& vector : vectors.at("cases")) {
    const std::string text = vector.at("override").get<std::string>();
    INFO("override: " << text);
    HydraParse result = parse(text);
    auto dependent = config_dependent().find(text);
    if (vector.at("ok").get<bool>()) {
      check_success(result, vector, base_config);
    } else if (dependent != config_dependent().end()) {
      check_expected(result, dependent->second);
    } else {
      const std::string error = vector.at("error").get<std::string>();
      const std::string error_class = vector.at("error_class").get<std::string>();
      bool refused = error_class == "OverrideParseException" ||
                     error.rfind("Error merging override", 0) == 0 ||
                     error.find("looks like a config group") != std::string::npos ||
                     text.substr(0, text.find('=')).find('/') != std::string::npos;
      INFO("error: " << error);
      REQUIRE(refused);  // else: a new config-dependent case for the table above
      CHECK_FALSE(result.parsed);
      REQUIRE(result.problems.size() == 1);
      CHECK(result.problems[0].rule == "override-syntax");
    }
    ++checked;
  }
  CHECK(checked >= 70);
}

TEST_CASE("hydra overrides: forms and spans", "[hydra_override]") {
  SECTION("change") {
    HydraParse result = parse("model.seq_length=4096");
    REQUIRE(result.parsed);
    CHECK(result.parsed->op == OverrideOp::Change);
    CHECK(result.parsed->key == std::vector<std::string>{"model", "seq_length"});
    CHECK(result.parsed->key_span == mblint::Span{0, 0, 16});
    CHECK(result.parsed->statement_span == mblint::Span{0, 0, 21});
    const ConfigValue& value = *result.parsed->value;
    CHECK(value.kind == ValueKind::Int);
    CHECK(value.integer == 4096);
    CHECK(value.where.layer == Layer::Override);
    CHECK(value.where.value == mblint::Span{0, 17, 21});
    CHECK(value.where.key == mblint::Span{0, 0, 16});
    CHECK(value.where.statement == mblint::Span{0, 0, 21});
  }
  SECTION("prefixes") {
    HydraParse add = parse("+env_vars.FOO=1");
    REQUIRE(add.parsed);
    CHECK(add.parsed->op == OverrideOp::Add);
    CHECK(add.parsed->key_span == mblint::Span{0, 1, 13});
    HydraParse force = parse("++train.global_batch_size=5");
    REQUIRE(force.parsed);
    CHECK(force.parsed->op == OverrideOp::ForceAdd);
    CHECK(force.parsed->key_span == mblint::Span{0, 2, 25});
    HydraParse del = parse("~train.rampup_batch_size");
    REQUIRE(del.parsed);
    CHECK(del.parsed->op == OverrideOp::Delete);
    CHECK_FALSE(del.parsed->value);
    HydraParse del_value = parse("~train.global_batch_size=512");
    REQUIRE(del_value.parsed);
    CHECK(del_value.parsed->op == OverrideOp::Delete);
    CHECK(del_value.parsed->value->integer == 512);
    HydraParse del_empty = parse("~a=");
    REQUIRE(del_empty.parsed);
    CHECK(del_empty.parsed->value->kind == ValueKind::String);
    CHECK(del_empty.parsed->value->text.empty());
  }
  SECTION("empty value has an empty span right after '='") {
    ConfigValue value = value_of("model.virtual_pipeline_model_parallel_size=");
    CHECK(value.kind == ValueKind::String);
    CHECK(value.text.empty());
    CHECK(value.where.value == mblint::Span{0, 43, 43});
  }
  SECTION("blanks after '=' and at the end are not part of the value") {
    ConfigValue value = value_of("key= \tvalue \t");
    CHECK(value.text == "value");
    CHECK(value.where.value == mblint::Span{0, 6, 11});
  }
  SECTION("numeric and $ key segments") {
    HydraParse result = parse("model.recompute_modules.0=mlp");
    REQUIRE(result.parsed);
    CHECK(result.parsed->key == std::vector<std::string>{"model", "recompute_modules", "0"});
    REQUIRE(parse("$foo.bar$.x$z=1").parsed);
    REQUIRE(parse("ab-c.d-ef=1").parsed);
    REQUIRE(parse("choice=reverse").parsed);
  }
  SECTION("nested lists and dicts carry their own spans") {
    const std::string text = "x=[1, [2,3], {a: b, c: [d]}]";
    ConfigValue value = value_of(text);
    REQUIRE(value.kind == ValueKind::List);
    CHECK(value.where.value == mblint::Span{0, 2, static_cast<uint32_t>(text.size())});
    REQUIRE(value.items.size() == 3);
    CHECK(value.items[0].integer == 1);
    CHECK(value.items[0].where.value == mblint::Span{0, 3, 4});
    CHECK_FALSE(value.items[0].where.statement.valid());
    CHECK_FALSE(value.items[0].where.key.valid());
    CHECK(value.items[0].where.layer == Layer::Override);
    const ConfigValue& inner = value.items[1];
    REQUIRE(inner.kind == ValueKind::List);
    CHECK(inner.where.value == mblint::Span{0, 6, 11});
    CHECK(inner.items[1].where.value == mblint::Span{0, 9, 10});
    const ConfigValue& map = value.items[2];
    REQUIRE(map.kind == ValueKind::Map);
    CHECK(map.where.value == mblint::Span{0, 13, 27});
    REQUIRE(map.entries.size() == 2);
    CHECK(map.entries[0].key == "a");
    CHECK(map.entries[0].value.text == "b");
    CHECK(map.entries[0].value.where.value == mblint::Span{0, 17, 18});
    CHECK(map.entries[1].key == "c");
    REQUIRE(map.entries[1].value.kind == ValueKind::List);
    CHECK(map.entries[1].value.items[0].text == "d");
  }
  SECTION("dicts") {
    ConfigValue value = value_of("++env_vars={CUDA_DEVICE_MAX_CONNECTIONS:1,NCCL_NVLS_ENABLE:0}");
    REQUIRE(value.kind == ValueKind::Map);
    CHECK(value.entries.size() == 2);
    CHECK(value_of("x={}").entries.empty());
    CHECK(value_of("x=[]").items.empty());
    ConfigValue spaced = value_of("key={w s: 0}");
    REQUIRE(spaced.entries.size() == 1);
    CHECK(spaced.entries[0].key == "w s");
    ConfigValue colon = value_of("x={a:b:c}");
    CHECK(colon.entries[0].value.text == "b:c");
    ConfigValue repeated = value_of("x={a:1,b:2,a:3}");
    REQUIRE(repeated.entries.size() == 2);
    CHECK(repeated.entries[0].key == "a");
    CHECK(repeated.entries[0].value.integer == 3);
  }
}

TEST_CASE("hydra overrides: primitives are typed like _createPrimitive", "[hydra_override]") {
  struct Case {
    const char* value;
    ValueKind kind;
    const char* text;  // String: the text; otherwise unused
  };
  const Case cases[] = {
      {"08", ValueKind::String, "08"},
      {"0x10", ValueKind::String, "0x10"},
      {"1___0___", ValueKind::String, "1___0___"},
      {"123abc", ValueKind::String, "123abc"},
      {"abc-123", ValueKind::String, "abc-123"},
      {"value-1.0", ValueKind::String, "value-1.0"},
      {"yes", ValueKind::String, "yes"},
      {"on", ValueKind::String, "on"},
      {"None", ValueKind::String, "None"},
      {"/data/with space", ValueKind::String, "/data/with space"},
      {"a b c\t-\t1 2 3", ValueKind::String, "a b c\t-\t1 2 3"},
      {"c:\\foo\\a-b.txt", ValueKind::String, "c:\\foo\\a-b.txt"},
      {"/-\\+.$%*@?|", ValueKind::String, "/-\\+.$%*@?|"},
      {"xyz_${a.b.c}", ValueKind::String, "xyz_${a.b.c}"},
      {"${foo:1,2,3}", ValueKind::String, "${foo:1,2,3}"},
      {"a : b", ValueKind::String, "a : b"},
      {"infinity", ValueKind::String, "infinity"},
      {"-infinity", ValueKind::String, "-infinity"},
      {"'256'", ValueKind::String, "256"},
      {"\"null\"", ValueKind::String, "null"},
      {"'foo \\'bar'", ValueKind::String, "foo 'bar"},
      {"'foo \\\\\\'bar'", ValueKind::String, "foo \\'bar"},
      {"'foo\\bar'", ValueKind::String, "foo\\bar"},
      {"'foo bar\\\\'", ValueKind::String, "foo bar\\"},
      {"'\t []{},=+~'", ValueKind::String, "\t []{},=+~"},
      {"'a ${b}'", ValueKind::String, "a ${b}"},
      {"'\xd7\xa9'", ValueKind::String, "\xd7\xa9"},
      {"99990\\,8\\,2", ValueKind::String, "99990,8,2"},
      {"\\,", ValueKind::String, ","},
      {"\\ ab", ValueKind::String, " ab"},
      {"ab\\\\", ValueKind::String, "ab\\"},
      {"f\\(a\\, b\\)", ValueKind::String, "f(a, b)"},
      {"$\\{foo.bar\\}", ValueKind::String, "${foo.bar}"},
      {"1", ValueKind::Int, nullptr},
      {"+8", ValueKind::Int, nullptr},
      {"-1", ValueKind::Int, nullptr},
      {"1_024", ValueKind::Int, nullptr},
      {"5 ", ValueKind::Int, nullptr},
      {"1e-4", ValueKind::Float, nullptr},
      {"1E-4", ValueKind::Float, nullptr},
      {".5", ValueKind::Float, nullptr},
      {"5.", ValueKind::Float, nullptr},
      {"3.1_4", ValueKind::Float, nullptr},
      {"-10e1", ValueKind::Float, nullptr},
      {"1.e5", ValueKind::Float, nullptr},
      {"inf", ValueKind::Float, nullptr},
      {"+inf", ValueKind::Float, nullptr},
      {"NaN", ValueKind::Float, nullptr},
      {"true", ValueKind::Bool, nullptr},
      {"faLse", ValueKind::Bool, nullptr},
      {"null", ValueKind::Null, nullptr},
      {"NULL", ValueKind::Null, nullptr},
  };
  for (const Case& c : cases) {
    std::string text = std::string("key=") + c.value;
    INFO(text);
    HydraParse result = parse(text);
    REQUIRE(result.parsed);
    REQUIRE(result.parsed->value);
    const ConfigValue& value = *result.parsed->value;
    CHECK(value.kind == c.kind);
    if (c.kind == ValueKind::String) CHECK(value.text == c.text);
    if (c.value[0] == '\'' || c.value[0] == '"') CHECK(value.quoted);
  }
  CHECK(value_of("key=1_024").integer == 1024);
  CHECK(value_of("key=+8").integer == 8);
  CHECK(value_of("key=1e-4").real == 1e-4);
  CHECK(value_of("key=3.1_4").real == 3.14);
  CHECK(value_of("key=-10e1").real == -100.0);
  CHECK(value_of("key=-inf").real == -HUGE_VAL);
  CHECK(std::isnan(value_of("key=nan").real));
  CHECK(value_of("key=1e999").real == HUGE_VAL);
  CHECK(value_of("key=TRUE").boolean);
  CHECK_FALSE(value_of("key=False").boolean);
  // Python ints are unbounded; mblint keeps one beyond 64 bits as its text.
  ConfigValue huge = value_of("key=123456789012345678901234567890");
  CHECK(huge.kind == ValueKind::Unknown);
  CHECK(huge.text == "123456789012345678901234567890");
  // An interpolation stays a string: it is resolved later, by OmegaConf.
  ConfigValue interpolation = value_of("model.seq_length=${dataset.seq_length}");
  CHECK(interpolation.kind == ValueKind::String);
  CHECK(interpolation.text == "${dataset.seq_length}");
  CHECK_FALSE(interpolation.quoted);
}

TEST_CASE("hydra overrides: None is a string, with a warning", "[hydra_override]") {
  const std::string text = "model.virtual_pipeline_model_parallel_size=None";
  HydraParse result = parse(text);
  REQUIRE(result.parsed);
  CHECK(result.parsed->value->kind == ValueKind::String);
  CHECK(result.parsed->value->text == "None");
  REQUIRE(result.problems.size() == 1);
  const mblint::Diagnostic& warning = result.problems[0];
  CHECK(warning.rule == "override-syntax");
  CHECK(warning.message == "`None` is the string \"None\" in Hydra's grammar, not null");
  CHECK(warning.help == "write null");
  CHECK(warning.where == mblint::Span{0, 43, 47});

  HydraParse in_list = parse("x=[1, None]");
  REQUIRE(in_list.parsed);
  REQUIRE(in_list.problems.size() == 1);
  CHECK(in_list.problems[0].where == mblint::Span{0, 6, 10});
  HydraParse in_dict = parse("x={a: None, None: 1}");  // only the value warns
  REQUIRE(in_dict.parsed);
  REQUIRE(in_dict.problems.size() == 1);
  CHECK(in_dict.problems[0].where == mblint::Span{0, 6, 10});
  CHECK(parse("x='None'").problems.empty());
  CHECK(parse("x=None2").problems.empty());
  CHECK(parse("x=None x").problems.empty());
}

TEST_CASE("hydra overrides: errors point at the offending characters", "[hydra_override]") {
  SECTION("a comment") {
    mblint::Diagnostic d = problem_of("optimizer.lr=3e-4 # comment");
    CHECK(d.rule == "override-syntax");
    CHECK(d.code.empty());
    CHECK(d.severity == mblint::Severity::Error);
    CHECK(d.where == mblint::Span{0, 18, 19});
    CHECK(d.message ==
          "Hydra cannot parse this override: unexpected character '#' (comments are not "
          "allowed in overrides)");
    CHECK(d.help == "remove the comment: optimizer.lr=3e-4");
  }
  SECTION("a space before '='") {
    mblint::Diagnostic d = problem_of("train.global_batch_size = 5");
    CHECK(d.where == mblint::Span{0, 23, 24});
    CHECK(d.help == "write train.global_batch_size=5");
  }
  SECTION("a second '='") {
    mblint::Diagnostic d = problem_of("dataset.data_path=a=b");
    CHECK(d.where == mblint::Span{0, 19, 20});
    CHECK(d.help.find("dataset.data_path='a=b'") != std::string::npos);
    CHECK(d.help.find("a\\=b") != std::string::npos);
  }
  SECTION("brackets in the key") {
    mblint::Diagnostic d = problem_of("model.recompute_modules[0]=mlp");
    CHECK(d.where == mblint::Span{0, 23, 24});
    CHECK(d.help == "write model.recompute_modules.0=mlp");
  }
  SECTION("quotes the shell did not remove") {
    mblint::Diagnostic d = problem_of("'train.global_batch_size=8'");
    CHECK(d.where == mblint::Span{0, 0, 1});
    CHECK(d.help.find("train.global_batch_size=8 ") != std::string::npos);
    mblint::Diagnostic plus = problem_of("+\"env_vars.A=1\"");
    CHECK(plus.where == mblint::Span{0, 1, 2});
    CHECK(plus.help.find("+env_vars.A=1 ") != std::string::npos);
  }
  SECTION("'~' is no null") {
    mblint::Diagnostic d = problem_of("model.virtual_pipeline_model_parallel_size=~");
    CHECK(d.where == mblint::Span{0, 43, 44});
    CHECK(d.help == "write null: model.virtual_pipeline_model_parallel_size=null");
  }
  SECTION("unterminated quotes, brackets and interpolations point at the opening") {
    check_refusals({
        {"x='abc", 2, 3},
        {"x=it's", 4, 5},
        {"x=[1,2", 2, 3},
        {"x=[1,[2]", 2, 3},
        {"x={a:1", 2, 3},
        {"x=choice(1", 8, 9},
        {"x=${abc", 2, 4},
        {"x=a${}", 3, 5},
        {"key=[1,2,3]'", 11, 12},
    });
  }
  SECTION("structure errors") {
    check_refusals({
        {"x=[1,]", 5, 6},
        {"x=[1}", 4, 5},
        {"x=]", 2, 3},
        {"key=[]aa", 6, 8},
        {"x=a[0]", 3, 4},
        {"x=a b(1)", 5, 6},
        {"checkpoint.save=/ckpt/run(1)", 25, 26},
        {"x=a'b'", 3, 6},
        {"key={' abc ': 0}", 5, 12},
        {"x={${a}: 0}", 3, 7},
        {"x={a}", 3, 4},
        {"x={:1}", 3, 4},
        {"x=1,", 3, 4},
    });
  }
  SECTION("bytes Hydra's lexer does not accept outside quotes") {
    check_refusals({
        {std::string_view("x=a\0b", 5), 3, 4},
        {"x=caf\xc3\xa9", 5, 6},
        {"x=\xff", 2, 3},
        {"k\xc3\xa9y=1", 1, 2},
    });
    CHECK(value_of("x='caf\xc3\xa9'").text == "caf\xc3\xa9");
    CHECK(value_of("x=\"a\xff\"").text == "a\xff");
  }
  SECTION("keys") {
    check_refusals({
        {"--lr=1", 0, 1},
        {"a..b=1", 1, 2},
        {"0=1", 0, 1},
        {"a.01=1", 3, 4},
        {"+++a=1", 2, 3},
        {"a:b=1", 1, 2},
        {"train.global_batch_size", 0, 23},
    });
  }
}

TEST_CASE("hydra overrides: sweeps, functions and config groups", "[hydra_override]") {
  SECTION("a sweep points at the first top-level comma") {
    mblint::Diagnostic d = problem_of("dataset.split=99990,8,2");
    CHECK(d.where == mblint::Span{0, 19, 20});
    CHECK(d.message.rfind("Error merging override dataset.split=99990,8,2", 0) == 0);
    CHECK(d.help.find("dataset.split=\"99990,8,2\"") != std::string::npos);
    CHECK(d.help.find("'dataset.split=\"99990,8,2\"'") != std::string::npos);
    CHECK(d.help.find("dataset.split=99990\\,8\\,2") != std::string::npos);
    CHECK(problem_of("key=[1,2],[3,4]").where == mblint::Span{0, 9, 10});
    CHECK(problem_of("key=1 ,  2").where == mblint::Span{0, 6, 7});
  }
  SECTION("sweep functions point at the name") {
    check_refusals({
        {"train.global_batch_size=choice(1,2)", 24, 30},
        {"x=range(1,3)", 2, 7},
        {"x=[interval(0,1)]", 3, 11},
        {"x=tag(a,choice(1,2))", 8, 14},
        {"x=glob(*)", 2, 6},
        {"x=choice (1)", 2, 8},
    });
  }
  SECTION("unknown functions") {
    mblint::Diagnostic d = problem_of("checkpoint.save=run(1)");
    CHECK(d.where == mblint::Span{0, 16, 19});
    CHECK(d.message.find("unknown function 'run'") != std::string::npos);
    CHECK(d.help.find("checkpoint.save='run(1)'") != std::string::npos);
    // A blank before '(' still makes a call (POPEN absorbs it).
    CHECK(problem_of("x=a (1)").where == mblint::Span{0, 2, 3});
  }
  SECTION("casts are evaluated") {
    CHECK(value_of("x=int(10.0)").integer == 10);
    CHECK(value_of("x=int('7')").integer == 7);
    CHECK(value_of("x=float(10)").real == 10.0);
    CHECK(value_of("x=bool(10.0)").boolean);
    CHECK_FALSE(value_of("x=bool(value=false)").boolean);
    CHECK(value_of("x=str(10.0)").text == "10.0");
    CHECK(value_of("x=str(1e-5)").text == "1e-05");
    CHECK(value_of("x=str(1e16)").text == "1e+16");
    CHECK(value_of("x=str(0.0001)").text == "0.0001");
    CHECK(value_of("x=str(true)").text == "true");
    ConfigValue list = value_of("key=str(\t  [  1,\t2  ]\t   )");
    REQUIRE(list.items.size() == 2);
    CHECK(list.items[1].text == "2");
    CHECK(value_of("x=float(float(10))").real == 10.0);
    CHECK(value_of("x=sort([3,1])").kind == ValueKind::Unknown);
    mblint::Diagnostic bad = problem_of("x=int(abc)");
    CHECK(bad.message.find("ValueError while evaluating 'int(abc)': invalid literal for int() "
                           "with base 10: 'abc'") != std::string::npos);
    CHECK(problem_of("x=int(inf)").message.find("OverflowError") != std::string::npos);
    CHECK(problem_of("x=int(1,2)").where == mblint::Span{0, 2, 5});  // a choice sweep
    CHECK(problem_of("x=int()").message.find("TypeError") != std::string::npos);
    CHECK(problem_of("x=choice(a=1, 2)").message.find("positional argument follows keyword") !=
          std::string::npos);
  }
  SECTION("config groups") {
    mblint::Diagnostic at = problem_of("model@x=1");
    CHECK(at.message.find("Override model@x=1 looks like a config group override, but config "
                          "group 'model' does not exist") != std::string::npos);
    CHECK(at.where == mblint::Span{0, 5, 7});
    mblint::Diagnostic slash = problem_of("train/global_batch_size=1");
    CHECK(slash.message.find("Could not override 'train/global_batch_size'") != std::string::npos);
    CHECK(slash.where == mblint::Span{0, 5, 6});
    CHECK(slash.help.find("train.global_batch_size=1") != std::string::npos);
  }
  SECTION("syntax errors come before refusals") {
    CHECK(problem_of("x=choice(1,2),[").message.find("never closed") != std::string::npos);
    CHECK(problem_of("x=foo(1),2").message.find("unknown function") != std::string::npos);
  }
}

TEST_CASE("hydra overrides: expansions", "[hydra_override]") {
  SECTION("an unknown expansion makes the value unknown") {
    mblint::Expansion tp = unknown_expansion(33, 36);
    tp.expression = mblint::Span{0, 33, 36};
    tp.name = "TP";
    HydraParse result = parse_expanded("model.tensor_model_parallel_size=$TP", tp);
    REQUIRE(result.parsed);
    CHECK(result.problems.empty());
    CHECK(result.parsed->value->kind == ValueKind::Unknown);
    CHECK(result.parsed->value->text == "$TP");
    CHECK(result.parsed->value->where.value == mblint::Span{0, 33, 36});
  }
  SECTION("a list keeps its structure around an unknown leaf") {
    HydraParse result = parse_expanded("x=[1,$(nproc),3]", unknown_expansion(5, 13));
    REQUIRE(result.parsed);
    const ConfigValue& value = *result.parsed->value;
    REQUIRE(value.kind == ValueKind::List);
    REQUIRE(value.items.size() == 3);
    CHECK(value.items[1].kind == ValueKind::Unknown);
    CHECK(value.items[1].text == "$(nproc)");
    CHECK(value.items[2].integer == 3);
  }
  SECTION("a syntax error next to an unknown expansion is not reported") {
    HydraParse result = parse_expanded("x=[$ITEMS", unknown_expansion(3, 9));
    REQUIRE(result.parsed);
    CHECK(result.problems.empty());
    CHECK(result.parsed->value->kind == ValueKind::Unknown);
    CHECK(result.parsed->value->text == "[$ITEMS");
  }
  SECTION("an unknown key leaves nothing to say") {
    HydraParse result = parse_expanded("$KEY=1", unknown_expansion(0, 4));
    CHECK_FALSE(result.parsed);
    CHECK(result.problems.empty());
  }
  SECTION("a known expansion maps back to its expression and definition") {
    // `train.global_batch_size=$GBS` in a script, GBS=256 defined at bytes 10..17.
    mblint::MappedString word = mblint::mapped_verbatim(1, 100, "train.global_batch_size=");
    for (char c : std::string("256")) mblint::append_char(word, c, 124, 128);
    mblint::Expansion gbs;
    gbs.begin = 24;
    gbs.end = 27;
    gbs.expression = mblint::Span{1, 124, 128};
    gbs.definition = mblint::Span{1, 10, 17};
    gbs.name = "GBS";
    word.expansions.push_back(gbs);
    HydraParse result = mblint::parse_hydra_override(word, Layer::Override);
    REQUIRE(result.parsed);
    const ConfigValue& value = *result.parsed->value;
    CHECK(value.integer == 256);
    CHECK(value.where.value == mblint::Span{1, 124, 128});
    REQUIRE(value.where.via.size() == 1);
    CHECK(value.where.via[0] == mblint::Span{1, 10, 17});
    CHECK(result.parsed->key_span == mblint::Span{1, 100, 123});
  }
}

TEST_CASE("hydra overrides: depth limit", "[hydra_override]") {
  std::string ok = "x=" + std::string(100, '[') + std::string(100, ']');
  HydraParse fine = parse(ok);
  REQUIRE(fine.parsed);
  CHECK(fine.problems.empty());
  std::string deep = "x=" + std::string(101, '[') + std::string(101, ']');
  mblint::Diagnostic d = problem_of(deep);
  CHECK(d.where == mblint::Span{0, 102, 103});
  CHECK(d.message.find("100 levels") != std::string::npos);
  std::string hostile = "x=" + std::string(200000, '[');
  CHECK(problem_of(hostile).where == mblint::Span{0, 102, 103});
  std::string dicts;
  for (int i = 0; i < 150; ++i) dicts += "{a:";
  CHECK(problem_of("x=" + dicts).where == mblint::Span{0, 302, 303});
  std::string calls;
  for (int i = 0; i < 5000; ++i) calls += "int(";
  CHECK_FALSE(parse("x=" + calls).parsed);
}

TEST_CASE("hydra overrides: garbage never crashes", "[hydra_override]") {
  for (std::string_view text : {"",      "=",   "+",    "++",   "~",    "=x",  "~=",   "+=1", "'",
                                "\"",    "x='", "x=\\", "x=$",  "x=${", "x=(", "x=)",  "x=,", "x=:",
                                "x=[,]", "@=1", "/=1",  "a@=1", "a/=1", "x= ", "x=\t", " x=1"}) {
    INFO(text);
    HydraParse result = parse(text);
    CHECK((result.parsed || !result.problems.empty()));
  }
  CHECK(problem_of("").message.find("empty") != std::string::npos);
  CHECK(problem_of("=").where == mblint::Span{0, 0, 1});
  CHECK(problem_of("~").where == mblint::Span{0, 0, 1});
  CHECK(problem_of("++").where == mblint::Span{0, 0, 2});
  CHECK(value_of("x=$").text == "$");
  CHECK(value_of("x=:").text == ":");
  CHECK(value_of("x= ").text.empty());

  // Random words over the characters the grammar cares about, with a fixed seed.
  const std::string alphabet = "ab0189_.=+~-[]{}(),:'\"\\ \t$#@/e\xff";
  std::mt19937 random(12345);
  for (int round = 0; round < 20000; ++round) {
    std::string text = "k=";
    if (round % 3 == 0) text.clear();
    size_t length = random() % 24;
    for (size_t i = 0; i < length; ++i) text += alphabet[random() % alphabet.size()];
    INFO(text);
    mblint::MappedString word = mblint::mapped_verbatim(0, 0, text);
    bool unknown = false;
    if (round % 2 == 1) {  // an expansion somewhere, possibly empty, possibly unknown
      mblint::Expansion expansion;
      expansion.begin = random() % (text.size() + 1);
      expansion.end = expansion.begin + random() % (text.size() - expansion.begin + 1);
      expansion.known = random() % 2 == 0;
      unknown = !expansion.known;
      word.expansions.push_back(expansion);
    }
    HydraParse result = mblint::parse_hydra_override(word, Layer::Override);
    if (!result.parsed)
      REQUIRE((result.problems.size() == 1 || (unknown && result.problems.empty())));
    for (const mblint::Diagnostic& problem : result.problems) {
      REQUIRE(problem.where.begin <= problem.where.end);
      REQUIRE(problem.where.end <= text.size());
      REQUIRE_FALSE(problem.message.empty());
      REQUIRE_FALSE(problem.help.empty());
    }
  }
}
