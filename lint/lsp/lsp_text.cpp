#include "lint/lsp/lsp_text.h"

#include <algorithm>
#include <cstring>

namespace mblint::lsp {

namespace {

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for a stray
// continuation byte or an invalid lead: each such byte counts as one unit).
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Characters outside the Basic Multilingual Plane take two UTF-16 units.
uint32_t utf16_units(size_t length) { return length == 4 ? 2 : 1; }

// End of line `index` before its "\n" or "\r\n".
uint32_t line_content_end(std::string_view text, const std::vector<uint32_t>& starts, size_t index) {
  uint32_t end = index + 1 < starts.size() ? starts[index + 1] : static_cast<uint32_t>(text.size());
  if (end > starts[index] && text[end - 1] == '\n') --end;
  if (end > starts[index] && text[end - 1] == '\r') --end;
  return end;
}

}  // namespace

std::vector<uint32_t> line_starts(std::string_view text) {
  std::vector<uint32_t> starts{0};
  const char* data = text.data();
  const char* end = data + text.size();
  for (const char* at = data; at < end;) {
    const void* found = std::memchr(at, '\n', static_cast<size_t>(end - at));
    if (!found) break;
    at = static_cast<const char*>(found) + 1;
    starts.push_back(static_cast<uint32_t>(at - data));
  }
  return starts;
}

Position to_position(std::string_view text, const std::vector<uint32_t>& starts, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text.size()));
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  size_t index = static_cast<size_t>(it - starts.begin()) - 1;
  Position position{static_cast<uint32_t>(index), 0};
  for (uint32_t at = starts[index]; at < offset;) {
    size_t length = sequence_length(static_cast<unsigned char>(text[at]));
    position.character += utf16_units(length);
    at += static_cast<uint32_t>(length);
  }
  return position;
}

uint32_t to_offset(std::string_view text, const std::vector<uint32_t>& starts, Position position) {
  if (position.line >= starts.size()) return static_cast<uint32_t>(text.size());
  uint32_t at = starts[position.line];
  uint32_t end = line_content_end(text, starts, position.line);
  uint32_t units = 0;
  while (at < end && units < position.character) {
    size_t length = sequence_length(static_cast<unsigned char>(text[at]));
    units += utf16_units(length);
    at = std::min<uint32_t>(end, at + static_cast<uint32_t>(length));
  }
  return at;
}

ByteRange to_byte_range(std::string_view text, Position begin, Position end) {
  std::vector<uint32_t> starts = line_starts(text);
  uint32_t from = to_offset(text, starts, begin);
  return ByteRange{from, std::max(from, to_offset(text, starts, end))};
}

void apply_change(std::string& text, Position begin, Position end, std::string_view replacement) {
  ByteRange range = to_byte_range(text, begin, end);
  text.replace(range.begin, range.end - range.begin, replacement);
}

ByteRange changed_range(std::string_view before, std::string_view after) {
  size_t limit = std::min(before.size(), after.size());
  size_t prefix = 0;
  while (prefix < limit && before[prefix] == after[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < limit - prefix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix]) ++suffix;
  return ByteRange{static_cast<uint32_t>(prefix), static_cast<uint32_t>(before.size() - suffix)};
}

}  // namespace mblint::lsp
