#include "tests/test_support.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace mblint::test {

std::filesystem::path source_dir() { return MBLINT_SOURCE_DIR; }

namespace {

std::filesystem::path configured_shared_dir() {
  const char* named = std::getenv("MBLINT_SHARED_DIR");
  return named && *named ? std::filesystem::path(named) : std::filesystem::path(MBLINT_SHARED_DIR);
}

}  // namespace

std::optional<std::filesystem::path> shared_dir() {
  std::filesystem::path dir = configured_shared_dir();
  if (std::filesystem::is_directory(dir / "corpus")) return std::filesystem::canonical(dir);
  return std::nullopt;
}

bool shared_required() {
  const char* required = std::getenv("MBLINT_REQUIRE_SHARED");
  return required && std::string(required) == "1";
}

std::optional<std::filesystem::path> shared_or_skip(const std::string& what) {
  if (auto dir = shared_dir()) return dir;
  std::string where = configured_shared_dir().lexically_normal().string();
  if (shared_required()) {
    FAIL(where << " (the reference corpus) is absent and MBLINT_REQUIRE_SHARED=1: " << what << " cannot run");
  }
  WARN(where << " is absent: skipping " << what);
  return std::nullopt;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::filesystem::path make_temp_dir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              (prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace mblint::test
