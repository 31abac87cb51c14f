// Source files and locations. Every value mblint reads keeps a Span into the
// file it was written in, so diagnostics can point at the exact characters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lint/base/canonical_path.h"

namespace mblint {

// Index of a file in a SourceSet; kNoFile means "no location".
using FileId = int32_t;
inline constexpr FileId kNoFile = -1;

// A half-open byte range [begin, end) in one source file.
struct Span {
  FileId file = kNoFile;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != kNoFile; }
  friend bool operator==(const Span&, const Span&) = default;
};

// 1-based line and column. Columns count bytes, like clang and gcc.
struct LineCol {
  uint32_t line = 0;
  uint32_t column = 0;
};

struct SourceFile {
  std::string path;                  // as displayed to the user
  std::string text;                  // the bytes that were read
  std::vector<uint32_t> line_starts;  // byte offset where each line starts
  bool synthetic = false;            // e.g. "<command-line>", not a file on disk
};

// All files of one lint run. Jobs refer to files by FileId.
struct SourceSet {
  std::vector<SourceFile> files;
  // Indexes that keep a run over thousands of files linear. Files are added
  // by add_source (which indexes the files added any other way on its next call).
  std::unordered_multimap<std::string, FileId> by_path;  // SourceFile.path -> ids
  size_t indexed = 0;                                     // files[0, indexed) are in by_path
  std::unordered_map<std::string, FileId> read_from_disk;  // read_source_file: canonical path + display -> id
  CanonicalPaths canonical;
};

FileId add_source(SourceSet& sources, std::string path, std::string text,
                  bool synthetic = false);

// Offset -> line and column. Offsets past the end clamp to the last position.
LineCol line_col(const SourceFile& file, uint32_t offset);

// The text of a 1-based line without its line terminator ("\n" or "\r\n").
std::string_view line_text(const SourceFile& file, uint32_t line);

// Byte offset of a 1-based line and column (clamped to the file).
uint32_t offset_of(const SourceFile& file, LineCol position);

inline Span make_span(FileId file, size_t begin, size_t end) {
  return Span{file, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)};
}

}  // namespace mblint
