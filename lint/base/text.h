// Text tests the readers share, as free functions so they take any
// string-like argument (a std::string, a view, a MappedString's text).
#pragma once

#include <string_view>

namespace mblint {

inline bool starts_with(std::string_view text, std::string_view prefix) { return text.starts_with(prefix); }
inline bool ends_with(std::string_view text, std::string_view suffix) { return text.ends_with(suffix); }

// The last component of a slash-separated path: "train.sh" of "a/b/train.sh".
inline std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace mblint
