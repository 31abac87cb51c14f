// Reading input files with the limits that keep mblint bounded: a size cap,
// binary detection, directories and unreadable paths as diagnostics.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

inline constexpr size_t kMaxInputBytes = 8u << 20;  // 8 MiB: configs are kilobytes

struct ReadResult {
  FileId file = kNoFile;
  std::optional<Diagnostic> problem;  // rule "unreadable-file", located at `requested_at`
};

// Read `path` (displayed as `display`) into `sources`. `requested_at` is where
// the file was named (a command-line argument, a --config-file flag). A file
// whose canonical path is in `overlay` gets that text instead of its bytes.
ReadResult read_source_file(SourceSet& sources, const std::filesystem::path& path, std::string display,
                            Span requested_at, size_t max_bytes = kMaxInputBytes,
                            const std::map<std::filesystem::path, std::string>* overlay = nullptr);

// Offset of the first byte that is not valid UTF-8, if any.
std::optional<size_t> first_invalid_utf8(std::string_view text);

}  // namespace mblint
