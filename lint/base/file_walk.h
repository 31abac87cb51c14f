// Which files `mblint check DIR` reads: a recursive, sorted walk over the
// names mblint lints, and the glob matching `.mblint.yaml` uses for its
// `exclude` and `context` patterns.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

namespace mblint {

// *.yaml, *.yml, *.sh, *.sbatch, *.slurm: what a directory walk picks up.
bool is_walked_name(const std::filesystem::path& path);

// A file or directory the walk never enters: a hidden name (.git, .github,
// .venv, .mblint.yaml itself).
bool is_hidden_name(const std::filesystem::path& path);

// Every walked file under `dir`, depth first, in byte order of the paths, so
// the output does not depend on the file system. `skip` is asked about each
// directory and file (absolute, normalised paths); a skipped directory is not
// entered. Symlinked directories are not followed (no cycles); unreadable
// directories are passed over.
std::vector<std::filesystem::path> walk_directory(const std::filesystem::path& dir,
                                                  const std::function<bool(const std::filesystem::path&)>& skip);

// Glob over '/'-separated relative paths: `*` and `?` stay within one
// segment, `**` spans any number of segments (`a/**` matches everything under
// a, `**/b` matches b at any depth), `[abc]` is a character class.
bool glob_match(std::string_view pattern, std::string_view path);

// `.mblint.yaml` exclude semantics, like .gitignore: the pattern excludes the
// path when it matches the path or one of its parent directories; a pattern
// without '/' matches a name at any depth.
bool excluded_by(std::string_view pattern, std::string_view relative_path);

}  // namespace mblint
