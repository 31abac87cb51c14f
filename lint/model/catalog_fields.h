// Reading the catalog's packed fields: data/model_dims.csv writes some model
// features as numbers joined by '/' (mamba_mixer, dsa_indexer,
// gated_delta_net); tools/gen_catalog.py checks their form at build time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mblint {

// The first `count` numbers of `field` ("32/128/2048/4/3"); fewer when the
// field is empty, null or shorter; stops at a word ("/unfused").
inline std::vector<int64_t> slash_numbers(const char* field, size_t count) {
  std::vector<int64_t> numbers;
  std::string_view text = field ? field : "";
  for (size_t at = 0; at < text.size() && numbers.size() < count;) {
    size_t end = std::min(text.find('/', at), text.size());
    std::string_view part = text.substr(at, end - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos) break;
    numbers.push_back(std::stoll(std::string(part)));
    at = end + 1;
  }
  return numbers;
}

}  // namespace mblint
