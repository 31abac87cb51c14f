#include "lint/base/yaml_scalar.h"

#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include <re2/re2.h>

namespace mblint {

std::string_view yaml_flavor_name(YamlFlavor flavor) {
  switch (flavor) {
    case YamlFlavor::OmegaConf: return "OmegaConf";
    case YamlFlavor::PyYaml: return "PyYAML";
    case YamlFlavor::Yaml12: return "YAML 1.2";
  }
  return "OmegaConf";
}

namespace {

// The implicit resolvers of PyYAML's SafeLoader (YAML 1.1), OmegaConf's
// additional float resolver, and YAML 1.2's core schema. The patterns are the
// published resolver definitions restated as RE2.
struct Resolvers {
  RE2 yaml11_bool{"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"};
  RE2 yaml11_int{
      "[-+]?0b[0-1_]+"
      "|[-+]?0[0-7_]+"
      "|[-+]?(?:0|[1-9][0-9_]*)"
      "|[-+]?0x[0-9a-fA-F_]+"
      "|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"};
  RE2 yaml11_float{
      "[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?"
      "|\\.[0-9_]+(?:[eE][-+][0-9]+)?"
      "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*"
      "|[-+]?\\.(?:inf|Inf|INF)"
      "|\\.(?:nan|NaN|NAN)"};
  RE2 omegaconf_float{
      "[-+]?[0-9][0-9_]*\\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
      "|[-+]?[0-9][0-9_]*(?:[eE][-+]?[0-9]+)"
      "|\\.[0-9_]+(?:[eE][-+][0-9]+)?"
      "|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*"
      "|[-+]?\\.(?:inf|Inf|INF)"
      "|\\.(?:nan|NaN|NAN)"};
  RE2 yaml11_null{"~|null|Null|NULL|"};
  RE2 yaml12_bool{"true|True|TRUE|false|False|FALSE"};
  RE2 yaml12_int{"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"};
  RE2 yaml12_float{
      "[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
      "|[-+]?\\.(?:inf|Inf|INF)"
      "|\\.(?:nan|NaN|NAN)"};
};

const Resolvers& resolvers() {
  static const Resolvers instance;  // immutable after construction
  return instance;
}

std::string without_underscores(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '_') out += c;
  }
  return out;
}

// Parse a YAML 1.1 integer (sign, 0b, 0x, leading-zero octal, sexagesimal).
ConfigValue yaml11_integer(std::string_view text) {
  std::string digits = without_underscores(text);
  bool negative = false;
  size_t i = 0;
  if (i < digits.size() && (digits[i] == '+' || digits[i] == '-')) negative = digits[i++] == '-';
  std::string body = digits.substr(i);
  long double value = 0;
  if (body.find(':') != std::string::npos) {  // base 60: 1:30 == 90
    size_t start = 0;
    while (start <= body.size()) {
      size_t colon = body.find(':', start);
      std::string part = body.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      value = value * 60 + std::stold(part.empty() ? "0" : part);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  } else if (body.size() > 2 && body[0] == '0' && (body[1] == 'b' || body[1] == 'x')) {
    int base = body[1] == 'b' ? 2 : 16;
    for (char c : body.substr(2)) {
      int d = (c >= '0' && c <= '9') ? c - '0' : (c | 0x20) - 'a' + 10;
      value = value * base + d;
    }
  } else if (body.size() > 1 && body[0] == '0') {
    for (char c : body.substr(1)) value = value * 8 + (c - '0');
  } else {
    for (char c : body) value = value * 10 + (c - '0');
  }
  if (negative) value = -value;
  if (value > static_cast<long double>(std::numeric_limits<int64_t>::max()) ||
      value < static_cast<long double>(std::numeric_limits<int64_t>::min())) {
    return make_float(static_cast<double>(value));  // Python ints are unbounded
  }
  return make_int(static_cast<int64_t>(value));
}

ConfigValue yaml_float(std::string_view text) {
  std::string digits = without_underscores(text);
  std::string lower;
  for (char c : digits) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("inf") != std::string::npos) {
    return make_float(lower[0] == '-' ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity());
  }
  if (lower.find("nan") != std::string::npos) return make_float(std::numeric_limits<double>::quiet_NaN());
  if (digits.find(':') != std::string::npos) {  // sexagesimal float 1:30.5
    bool negative = digits[0] == '-';
    size_t i = (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
    double value = 0;
    size_t start = i;
    while (true) {
      size_t colon = digits.find(':', start);
      std::string part = digits.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      value = value * 60 + std::strtod(part.c_str(), nullptr);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    return make_float(negative ? -value : value);
  }
  return make_float(std::strtod(digits.c_str(), nullptr));
}

ConfigValue yaml12_integer(std::string_view text) {
  std::string s(text);
  errno = 0;
  long long value = 0;
  if (s.rfind("0o", 0) == 0) value = std::strtoll(s.c_str() + 2, nullptr, 8);
  else if (s.rfind("0x", 0) == 0) value = std::strtoll(s.c_str() + 2, nullptr, 16);
  else value = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return make_float(std::strtod(s.c_str(), nullptr));
  return make_int(value);
}

// Only a scalar that starts like a number, a bool or a null can resolve to one
// (PyYAML indexes its resolvers by first character the same way), and no bool
// or null word is longer than 5 characters. Most config values (names, paths)
// are thus typed without running the resolvers.
bool may_resolve(std::string_view text) {
  if (text.empty()) return true;
  char c = text[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == '~') return true;
  return text.size() <= 5 && std::string_view("yYnNtTfFoO").find(c) != std::string_view::npos;
}

// A plain decimal integer without a leading zero and short enough for
// int64 ("8192", "-1"): every flavor's int resolver takes it and none of the
// others does, so it is typed without running them.
std::optional<int64_t> plain_decimal(std::string_view text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  size_t digits = text.size() - i;
  if (digits == 0 || digits > 18 || (text[i] == '0' && digits > 1)) return std::nullopt;
  int64_t value = 0;
  for (size_t k = i; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return std::nullopt;
    value = value * 10 + (text[k] - '0');
  }
  return text[0] == '-' ? -value : value;
}

bool starts_with_letter(std::string_view text) {
  char c = text.empty() ? '0' : static_cast<char>(text[0] | 0x20);
  return c >= 'a' && c <= 'z';
}

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  for (std::string_view word : words) {
    if (text == word) return true;
  }
  return false;
}

// `[-+]?[0-9]+\.[0-9]*` with an optional `[eE][-+][0-9]+` ("0.5", "3.0e-05"):
// every flavor's float resolver takes it and none of the others does.
bool simple_decimal_float(std::string_view text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (!digits() || i >= text.size() || text[i] != '.') return false;
  ++i;
  digits();
  if (i == text.size()) return true;
  if (text[i] != 'e' && text[i] != 'E') return false;
  if (++i >= text.size() || (text[i] != '-' && text[i] != '+')) return false;
  ++i;
  return digits() && i == text.size();
}

ConfigValue decimal_float(std::string_view text) {
  char buffer[64];
  if (text.size() >= sizeof buffer) return yaml_float(text);
  text.copy(buffer, text.size());
  buffer[text.size()] = '\0';
  return make_float(std::strtod(buffer, nullptr));
}

ConfigValue type_yaml11_by_resolvers(std::string_view text, bool omegaconf) {
  const Resolvers& r = resolvers();
  re2::StringPiece piece(text.data(), text.size());
  if (RE2::FullMatch(piece, r.yaml11_bool)) {
    char c = text[0];
    return make_bool(c == 'y' || c == 'Y' || c == 't' || c == 'T' ||
                     ((c == 'o' || c == 'O') && (text[1] == 'n' || text[1] == 'N')));
  }
  if (RE2::FullMatch(piece, omegaconf ? r.omegaconf_float : r.yaml11_float)) return yaml_float(text);
  if (RE2::FullMatch(piece, r.yaml11_int)) return yaml11_integer(text);
  if (RE2::FullMatch(piece, r.yaml11_null)) return make_null();
  return make_string(std::string(text));
}

ConfigValue type_yaml12_by_resolvers(std::string_view text) {
  const Resolvers& r = resolvers();
  re2::StringPiece piece(text.data(), text.size());
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return make_null();
  if (RE2::FullMatch(piece, r.yaml12_bool)) return make_bool(text[0] == 't' || text[0] == 'T');
  if (RE2::FullMatch(piece, r.yaml12_int)) return yaml12_integer(text);
  if (RE2::FullMatch(piece, r.yaml12_float)) return yaml_float(text);
  return make_string(std::string(text));
}

// The type of a scalar whose type is certain without the resolvers: text no
// resolver can take, plain decimal ints and floats, and the bool and null
// words of `flavor` (a scalar that starts with a letter can be nothing else:
// every int and float pattern starts with a digit, a sign or a dot).
std::optional<ConfigValue> typed_without_resolvers(std::string_view text, YamlFlavor flavor) {
  if (!may_resolve(text)) return make_string(std::string(text));
  if (auto value = plain_decimal(text)) return make_int(*value);
  if (simple_decimal_float(text)) return decimal_float(text);
  if (!starts_with_letter(text)) return std::nullopt;
  bool yaml11 = flavor != YamlFlavor::Yaml12;
  if (is_one_of(text, {"true", "True", "TRUE"}) ||
      (yaml11 && is_one_of(text, {"yes", "Yes", "YES", "on", "On", "ON"}))) {
    return make_bool(true);
  }
  if (is_one_of(text, {"false", "False", "FALSE"}) ||
      (yaml11 && is_one_of(text, {"no", "No", "NO", "off", "Off", "OFF"}))) {
    return make_bool(false);
  }
  if (is_one_of(text, {"null", "Null", "NULL"})) return make_null();
  return make_string(std::string(text));
}

}  // namespace

ConfigValue type_plain_scalar(std::string_view text, YamlFlavor flavor) {
  if (std::optional<ConfigValue> value = typed_without_resolvers(text, flavor)) return std::move(*value);
  return type_plain_scalar_by_resolvers(text, flavor);
}

ConfigValue type_plain_scalar_by_resolvers(std::string_view text, YamlFlavor flavor) {
  switch (flavor) {
    case YamlFlavor::OmegaConf: return type_yaml11_by_resolvers(text, /*omegaconf=*/true);
    case YamlFlavor::PyYaml: return type_yaml11_by_resolvers(text, /*omegaconf=*/false);
    case YamlFlavor::Yaml12: return type_yaml12_by_resolvers(text);
  }
  return make_string(std::string(text));
}

}  // namespace mblint
