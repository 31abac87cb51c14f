#include "lint/base/canonical_path.h"

namespace fs = std::filesystem;

namespace mblint {

fs::path canonical_or_same(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal() : canonical;
}

namespace {

bool plain_name(const fs::path& name) {
  return !name.empty() && name != "." && name != "..";
}

fs::path canonical_dir_uncached(CanonicalPaths& cache, const fs::path& dir);

// canonical(dir), or nothing when `dir` does not exist or cannot be read.
const fs::path* canonical_dir(CanonicalPaths& cache, const fs::path& dir) {
  if (auto it = cache.dirs.find(dir.native()); it != cache.dirs.end()) {
    return it->second.empty() ? nullptr : &it->second;
  }
  fs::path canonical = canonical_dir_uncached(cache, dir);
  auto it = cache.dirs.emplace(dir.native(), std::move(canonical)).first;
  return it->second.empty() ? nullptr : &it->second;
}

// A directory that is no symlink, under a canonical parent, is that parent
// with its name: one lstat per directory instead of a readlink per component.
fs::path canonical_dir_uncached(CanonicalPaths& cache, const fs::path& dir) {
  std::error_code error;
  fs::path name = dir.filename();
  if (dir.is_absolute() && plain_name(name) && dir.parent_path() != dir) {
    if (const fs::path* parent = canonical_dir(cache, dir.parent_path())) {
      fs::file_status status = fs::symlink_status(dir, error);
      if (!error && fs::exists(status) && !fs::is_symlink(status)) return *parent / name;
    }
  }
  fs::path canonical = fs::canonical(dir, error);
  return error ? fs::path() : canonical;
}

// A file that is not a symlink, in an existing directory, is canonical(dir)/name:
// one lstat instead of a readlink per component.
fs::path compute(CanonicalPaths& cache, const fs::path& path) {
  fs::path name = path.filename();
  if (!path.is_absolute() || !plain_name(name)) return canonical_or_same(path);
  const fs::path* dir = canonical_dir(cache, path.parent_path());
  if (!dir) return canonical_or_same(path);
  std::error_code error;
  fs::file_status status = fs::symlink_status(path, error);
  if (fs::is_symlink(status)) return canonical_or_same(path);
  if (error && status.type() != fs::file_type::not_found) return canonical_or_same(path);
  return *dir / name;
}

}  // namespace

const fs::path& canonical_or_same(CanonicalPaths& cache, const fs::path& path) {
  auto [it, added] = cache.paths.try_emplace(path.native());
  if (added) it->second = compute(cache, path);
  return it->second;
}

}  // namespace mblint
