// A string whose characters map back to the source bytes that produced them.
// After shell quote removal and variable expansion the characters of a word
// are no longer contiguous in the file; diagnostics about part of the word
// (the value of `key=value`) still need exact columns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lint/base/source.h"

namespace mblint {

// A stretch of the text that came from expanding `$NAME` / `${NAME...}`.
struct Expansion {
  size_t begin = 0;   // range in MappedString::text
  size_t end = 0;
  Span expression;    // the `$TP` / `${TP:-4}` as written
  Span definition;    // where the variable got its value (`TP=16`); may be invalid
  std::string name;   // the variable name
  // False when the value could not be known statically ($SLURM_NNODES with
  // no #SBATCH, $(command), an unset variable): the text then holds the
  // expression as written and consumers must treat it as unknown.
  bool known = true;
};

struct MappedString {
  std::string text;
  FileId file = kNoFile;
  // For each character of `text`, the source byte range that produced it:
  // a literal character maps to itself, an escaped `\,` to both bytes, and
  // each character of an expansion to the whole `$NAME` expression.
  std::vector<uint32_t> begins;
  std::vector<uint32_t> ends;
  std::vector<Expansion> expansions;
};

// A string read verbatim from `file` at byte `offset` (no quoting, no expansion).
MappedString mapped_verbatim(FileId file, uint32_t offset, std::string_view text);

// Append one character produced by source bytes [begin, end).
void append_char(MappedString& out, char c, uint32_t begin, uint32_t end);

// Append `other` (its mapping and expansions follow it).
void append_mapped(MappedString& out, const MappedString& other);

// The source span covering text[begin, end). An empty range maps to an empty
// span at the position of `begin`.
Span span_of(const MappedString& s, size_t begin, size_t end);

// Spans where the variables expanded inside text[begin, end) were defined.
std::vector<Span> definitions_in(const MappedString& s, size_t begin, size_t end);

// True when an unknown expansion overlaps text[begin, end).
bool has_unknown(const MappedString& s, size_t begin, size_t end);
inline bool has_unknown(const MappedString& s) { return has_unknown(s, 0, s.text.size()); }

// text[begin, end) as its own MappedString (expansions clipped to the range).
MappedString substring(const MappedString& s, size_t begin, size_t end);

}  // namespace mblint
