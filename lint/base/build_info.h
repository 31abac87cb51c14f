// mblint's own version (CMake project(VERSION), generated/mblint_version.h)
// and, for a build between releases, its commit.
#pragma once

#include <string>
#include <string_view>

#include "mblint_version.h"

namespace mblint {

// "X.Y.Z": what JSON, SARIF and the fixtures show, stable across commits.
inline constexpr const char* kVersion = MBLINT_VERSION;

// The short commit of a build between releases; empty at the tag vX.Y.Z and
// in a build from a source tree without git.
std::string_view build_commit();

// "X.Y.Z", or "X.Y.Z (abc1234)" between releases: `mblint --version`.
std::string version_text();

}  // namespace mblint
