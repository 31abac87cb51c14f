// Canonical paths, looked up once per run. A lint of a whole tree asks for
// the canonical form of every file several times (files named twice, YAML
// files a script already read, the project config above each directory), and
// each std::filesystem::weakly_canonical is one readlink per path component.
#pragma once

#include <filesystem>
#include <string>
#include <unordered_map>

namespace mblint {

struct CanonicalPaths {
  std::unordered_map<std::string, std::filesystem::path> paths;  // path as asked -> weakly canonical
  std::unordered_map<std::string, std::filesystem::path> dirs;   // existing directory -> canonical
};

// std::filesystem::weakly_canonical(path), or path.lexically_normal() when
// that fails; the same answer, remembered in `cache` (the reference stays
// valid as long as the cache).
const std::filesystem::path& canonical_or_same(CanonicalPaths& cache, const std::filesystem::path& path);

// The same without a cache.
std::filesystem::path canonical_or_same(const std::filesystem::path& path);

}  // namespace mblint
