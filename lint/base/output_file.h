// Writing a report or a baseline without ever leaving a half-written file: a
// temporary file next to the target, then rename (atomic on POSIX).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace mblint {

// False with `error` set when the file cannot be written; the target is then
// unchanged. An existing target keeps its permissions.
bool write_file_atomically(const std::filesystem::path& target, std::string_view content, std::string& error);

}  // namespace mblint
