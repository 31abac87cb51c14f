// Helpers shared by the unit tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace mblint::test {

// The repository root and ../shared (which may be absent in a user's clone).
std::filesystem::path source_dir();
std::optional<std::filesystem::path> shared_dir();

std::string read_file(const std::filesystem::path& path);

}  // namespace mblint::test
