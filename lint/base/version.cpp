#include "lint/base/version.h"

#include <cctype>

namespace mblint {

std::optional<Version> parse_version(std::string_view text) {
  size_t start = 0;
  while (start < text.size() && !std::isdigit(static_cast<unsigned char>(text[start]))) ++start;
  if (start == text.size() || start > 8) return std::nullopt;
  int parts[3] = {0, 0, 0};
  int count = 0;
  size_t i = start;
  while (count < 3) {
    if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    int value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      value = value * 10 + (text[i] - '0');
      if (value > 100000) return std::nullopt;
      ++i;
    }
    parts[count++] = value;
    if (i < text.size() && text[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (count < 2) return std::nullopt;
  return Version{parts[0], parts[1], parts[2]};
}

std::string to_string(const Version& version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor) + "." +
         std::to_string(version.patch);
}

}  // namespace mblint
