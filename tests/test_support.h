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

// A new empty directory under the system temp dir, unique across the test
// processes ctest runs in parallel.
std::filesystem::path make_temp_dir(const std::string& prefix);

}  // namespace mblint::test
