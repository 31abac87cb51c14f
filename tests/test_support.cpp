#include "tests/test_support.h"

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

}  // namespace mblint::test
