#include "lint/base/python_number.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace mblint {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Appends the digits of a run starting at `i` ("1_000" -> "1000") and returns
// where the run ends; an underscore must sit between two digits.
size_t take_digits(std::string_view s, size_t i, std::string& out) {
  while (i < s.size()) {
    if (is_digit(s[i])) {
      out += s[i++];
    } else if (s[i] == '_' && !out.empty() && is_digit(out.back()) && i + 1 < s.size() && is_digit(s[i + 1])) {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

bool equals_lower(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view python_strip(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::optional<int64_t> python_int(std::string_view text, bool* overflow) {
  if (overflow) *overflow = false;
  text = python_strip(text);
  std::string digits;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    if (text.front() == '-') digits += '-';
    text.remove_prefix(1);
  }
  size_t start = digits.size();
  if (text.empty() || !is_digit(text.front())) return std::nullopt;
  if (take_digits(text, 0, digits) != text.size() || digits.size() == start) return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    if (overflow) *overflow = true;
    return std::nullopt;
  }
  return value;
}

std::optional<double> python_float(std::string_view text) {
  text = python_strip(text);
  std::string cleaned;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    cleaned += text.front();
    text.remove_prefix(1);
  }
  double sign = cleaned == "-" ? -1.0 : 1.0;
  if (equals_lower(text, "inf") || equals_lower(text, "infinity")) return sign * std::numeric_limits<double>::infinity();
  if (equals_lower(text, "nan")) return std::numeric_limits<double>::quiet_NaN();
  size_t i = take_digits(text, 0, cleaned);
  bool mantissa_digits = i > 0;
  if (i < text.size() && text[i] == '.') {
    cleaned += '.';
    size_t before = cleaned.size();
    if (i + 1 < text.size() && is_digit(text[i + 1])) i = take_digits(text, i + 1, cleaned);
    else ++i;
    mantissa_digits = mantissa_digits || cleaned.size() > before;
  }
  if (!mantissa_digits) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    cleaned += 'e';
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) cleaned += text[i++];
    size_t before = cleaned.size();
    if (i >= text.size() || !is_digit(text[i])) return std::nullopt;
    i = take_digits(text, i, cleaned);
    if (cleaned.size() == before) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  return std::strtod(cleaned.c_str(), nullptr);
}

}  // namespace mblint
