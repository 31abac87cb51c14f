// Helpers shared by the unit tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace mblint::test {

// The repository root and ../shared (which may be absent in a user's clone;
// MBLINT_SHARED_DIR in the environment names another directory).
std::filesystem::path source_dir();
std::optional<std::filesystem::path> shared_dir();

// For a test that needs ../shared: the directory, or nullopt after a warning
// that `what` is skipped. Under MBLINT_REQUIRE_SHARED=1 (set by .ci/run) an
// absent ../shared fails the test instead: in CI a skip would pass unseen.
std::optional<std::filesystem::path> shared_or_skip(const std::string& what);
bool shared_required();

std::string read_file(const std::filesystem::path& path);

// A new empty directory under the system temp dir, unique across the test
// processes ctest runs in parallel.
std::filesystem::path make_temp_dir(const std::string& prefix);

}  // namespace mblint::test
