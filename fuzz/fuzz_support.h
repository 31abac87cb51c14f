// Helpers shared by the libFuzzer harnesses. Each harness is one file
// fuzz/fuzz_<name>.cpp defining LLVMFuzzerTestOneInput; fuzz/CMakeLists.txt
// builds every such file, tools/fuzz.sh runs one by name with the seed
// directory tools/fuzz_seeds.py made for it and fuzz/<name>.dict (or the
// dictionaries it lists in fuzz/dicts.txt). A new parser (the LSP framing, say)
// gets a fuzz_<name>.cpp, a line in dicts.txt and a seed rule in fuzz_seeds.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/source.h"

namespace mblint::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The first byte of the input chooses a variant (flavor, file kind, option
// set); the rest is the text. Seeds written by tools/fuzz_seeds.py start with
// such a byte.
struct Selected {
  uint8_t selector = 0;
  std::string_view text;
};

inline Selected select(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  return {data[0], as_text(data + 1, size - 1)};
}

// The text split at '\n' (one override, one argv word, ... per line).
inline std::vector<std::pair<size_t, std::string_view>> lines_of(std::string_view text) {
  std::vector<std::pair<size_t, std::string_view>> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(start, text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Every diagnostic must point inside the file it names (renderers index the
// text with it); a span out of range is a bug the fuzzer should report.
template <typename Diagnostics>
void check_spans(const SourceSet& sources, const Diagnostics& problems) {
  for (const auto& d : problems) {
    if (!d.where.valid()) continue;
    if (d.where.file < 0 || static_cast<size_t>(d.where.file) >= sources.files.size()) __builtin_trap();
    const SourceFile& file = sources.files[d.where.file];
    if (d.where.begin > d.where.end || d.where.end > file.text.size()) __builtin_trap();
    for (const auto& note : d.notes) {
      if (!note.where.valid()) continue;
      if (static_cast<size_t>(note.where.file) >= sources.files.size()) __builtin_trap();
      const SourceFile& noted = sources.files[note.where.file];
      if (note.where.begin > note.where.end || note.where.end > noted.text.size()) __builtin_trap();
    }
  }
}

}  // namespace mblint::fuzz
