#include "lint/base/mapped_string.h"

#include <algorithm>

namespace mblint {

MappedString mapped_verbatim(FileId file, uint32_t offset, std::string_view text) {
  MappedString out;
  out.file = file;
  out.text.assign(text);
  out.begins.resize(text.size());
  out.ends.resize(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out.begins[i] = offset + static_cast<uint32_t>(i);
    out.ends[i] = offset + static_cast<uint32_t>(i) + 1;
  }
  return out;
}

void append_char(MappedString& out, char c, uint32_t begin, uint32_t end) {
  out.text.push_back(c);
  out.begins.push_back(begin);
  out.ends.push_back(end);
}

void append_mapped(MappedString& out, const MappedString& other) {
  if (out.file == kNoFile) out.file = other.file;
  size_t shift = out.text.size();
  out.text += other.text;
  out.begins.insert(out.begins.end(), other.begins.begin(), other.begins.end());
  out.ends.insert(out.ends.end(), other.ends.begin(), other.ends.end());
  for (Expansion expansion : other.expansions) {
    expansion.begin += shift;
    expansion.end += shift;
    out.expansions.push_back(std::move(expansion));
  }
}

Span span_of(const MappedString& s, size_t begin, size_t end) {
  if (s.text.empty() || s.begins.empty()) return Span{s.file, 0, 0};
  begin = std::min(begin, s.text.size());
  end = std::min(std::max(end, begin), s.text.size());
  if (begin == end) {
    uint32_t at = begin < s.begins.size() ? s.begins[begin] : s.ends.back();
    return Span{s.file, at, at};
  }
  uint32_t lo = s.begins[begin];
  uint32_t hi = s.ends[end - 1];
  for (size_t i = begin; i < end; ++i) {  // expansions may map out of order
    lo = std::min(lo, s.begins[i]);
    hi = std::max(hi, s.ends[i]);
  }
  return Span{s.file, lo, hi};
}

std::vector<Span> definitions_in(const MappedString& s, size_t begin, size_t end) {
  std::vector<Span> spans;
  for (const Expansion& expansion : s.expansions) {
    if (expansion.end <= begin || expansion.begin >= end) continue;
    if (expansion.definition.valid() &&
        std::find(spans.begin(), spans.end(), expansion.definition) == spans.end()) {
      spans.push_back(expansion.definition);
    }
  }
  return spans;
}

bool has_unknown(const MappedString& s, size_t begin, size_t end) {
  for (const Expansion& expansion : s.expansions) {
    if (!expansion.known && expansion.begin < end && expansion.end > begin) return true;
    if (!expansion.known && expansion.begin == expansion.end && expansion.begin >= begin &&
        expansion.begin <= end)
      return true;
  }
  return false;
}

MappedString substring(const MappedString& s, size_t begin, size_t end) {
  MappedString out;
  out.file = s.file;
  begin = std::min(begin, s.text.size());
  end = std::min(std::max(end, begin), s.text.size());
  out.text = s.text.substr(begin, end - begin);
  out.begins.assign(s.begins.begin() + begin, s.begins.begin() + end);
  out.ends.assign(s.ends.begin() + begin, s.ends.begin() + end);
  for (const Expansion& record : s.expansions) {
    if (record.end <= begin || record.begin >= end) continue;  // copy only what overlaps (a record owns a name)
    Expansion& expansion = out.expansions.emplace_back(record);
    expansion.begin = std::max(record.begin, begin) - begin;
    expansion.end = std::min(record.end, end) - begin;
  }
  return out;
}

}  // namespace mblint
