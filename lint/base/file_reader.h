// Reading input files with the limits that keep mblint bounded: a size cap,
// binary detection, directories and unreadable paths as diagnostics.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

// A git revision's files (`mblint diff`) stand in for a whole directory: the
// overlay then also holds the directory's sealed key, its path with a trailing
// '/'. A path under a sealed directory that the overlay does not hold is
// absent, whatever the disk holds there.
std::filesystem::path sealed_key(const std::filesystem::path& dir);

// Whether `path` is a file to read: the overlay's answer where it holds the
// path or seals a directory above it, else the disk's (a regular file).
bool source_file_exists(const std::filesystem::path& path,
                        const std::map<std::filesystem::path, std::string>* overlay);

// The regular files directly in `dir`, sorted: the overlay's where it seals
// `dir` or a directory above it (a git revision's files, not the work
// tree's), else the disk's, with the overlay's texts in `dir` (unsaved
// buffers) among them.
std::vector<std::filesystem::path> list_source_files(const std::filesystem::path& dir,
                                                     const std::map<std::filesystem::path, std::string>* overlay);

// The sealed directory `path` is in (or is), if any.
std::optional<std::filesystem::path> sealing_dir(const std::map<std::filesystem::path, std::string>* overlay,
                                                 const std::filesystem::path& path);

// Offset of the first byte that is not valid UTF-8, if any.
std::optional<size_t> first_invalid_utf8(std::string_view text);

}  // namespace mblint
