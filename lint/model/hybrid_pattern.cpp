#include "lint/model/hybrid_pattern.h"

namespace mblint {

int64_t HybridPatternParts::layers() const {
  int64_t n = 0;
  for (const std::string& segment : segments) n += static_cast<int64_t>(segment.size());
  return n;
}

HybridPatternParts split_hybrid_pattern(std::string_view pattern) {
  HybridPatternParts out;
  size_t slash = pattern.find('/');
  std::string_view main = pattern.substr(0, slash);
  while (slash != std::string_view::npos) {
    size_t next = pattern.find('/', slash + 1);
    std::string_view part = pattern.substr(slash + 1, next == std::string_view::npos ? std::string_view::npos : next - slash - 1);
    if (!part.empty()) out.mtp.emplace_back(part);
    slash = next;
  }
  out.segments.assign(1, "");
  for (char c : main) {
    if (c == '|') {
      out.segments.emplace_back();
    } else {
      out.segments.back() += c;
    }
  }
  return out;
}

}  // namespace mblint
