// Text positions as the Language Server Protocol counts them: 0-based lines
// and UTF-16 code units within a line (LSP's default position encoding),
// converted to and from the byte offsets mblint's Spans use.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mblint::lsp {

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // UTF-16 code units from the start of the line
};

// Byte offset where each line starts ("\n" ends a line; "\r\n" too).
std::vector<uint32_t> line_starts(std::string_view text);

// Byte offset -> LSP position. Offsets past the end clamp to the end; an
// offset inside a multi-byte character counts the character as passed.
Position to_position(std::string_view text, const std::vector<uint32_t>& starts, uint32_t offset);

// LSP position -> byte offset. A line past the end clamps to the end of the
// text, a character past the end of its line to the end of the line (before
// its terminator), as the protocol asks.
uint32_t to_offset(std::string_view text, const std::vector<uint32_t>& starts, Position position);

// Bytes [begin, end) of a text.
struct ByteRange {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// The bytes an LSP range covers (begin <= end, clamped as to_offset does).
ByteRange to_byte_range(std::string_view text, Position begin, Position end);

// Replace the range [begin, end) of `text` (an incremental didChange).
void apply_change(std::string& text, Position begin, Position end, std::string_view replacement);

// The one range of `before` that a replacement of the whole text changed:
// everything outside it is a common prefix or suffix. Lets a full-text
// didChange take the same fast paths as an incremental one.
ByteRange changed_range(std::string_view before, std::string_view after);

}  // namespace mblint::lsp
