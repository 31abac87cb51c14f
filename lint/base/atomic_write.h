// Replacing a file's content so that a reader sees the old bytes or the new
// ones, never half of each, and never clobbering an edit made meanwhile.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace mblint {

enum class WriteStatus {
  Written,
  ChangedOnDisk,  // the file's bytes are no longer those that were read: left untouched
  Failed,         // an I/O error; the file is untouched and no temp file is left
};

struct WriteResult {
  WriteStatus status = WriteStatus::Failed;
  std::string message;  // why, for ChangedOnDisk and Failed
};

// Write `content` to `path` when the file still holds exactly `expected`:
// a temp file in the same directory gets the content and the original
// permissions, is flushed to disk, then renamed over the file (a symlink is
// followed: its target is replaced, the link stays).
WriteResult replace_file_if_unchanged(const std::filesystem::path& path, std::string_view expected,
                                      std::string_view content);

}  // namespace mblint
