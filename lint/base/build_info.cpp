#include "lint/base/build_info.h"

// Rewritten at build time when HEAD moves (cmake/build_commit.cmake): only
// this file recompiles on a new commit.
#include "mblint_commit.h"

namespace mblint {

std::string_view build_commit() { return MBLINT_BUILD_COMMIT; }

std::string version_text() {
  std::string text = kVersion;
  if (!build_commit().empty()) text += " (" + std::string(build_commit()) + ")";
  return text;
}

}  // namespace mblint
