#include "tests/test_support.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace mblint::test {

std::filesystem::path source_dir() { return MBLINT_SOURCE_DIR; }

std::optional<std::filesystem::path> shared_dir() {
  std::filesystem::path dir = MBLINT_SHARED_DIR;
  if (std::filesystem::is_directory(dir / "corpus")) return std::filesystem::canonical(dir);
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
