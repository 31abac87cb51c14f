// Reading a git repository the way `mblint diff` needs it: git runs as a
// child process with an argument vector (never through a shell), and nothing
// here checks out, writes the work tree or touches the index.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mblint {

// What one git command printed on stdout, and how it ended.
struct GitOutput {
  int status = -1;  // the exit code; -1 when git could not be run at all
  std::string out;
};

// `git -C root ARGS...`, with `input` on its stdin.
GitOutput run_git(const std::filesystem::path& root, const std::vector<std::string>& args,
                  const std::string& input = {});

// The top of the work tree that holds `dir`; nullopt outside a repository
// (or without git).
std::optional<std::filesystem::path> repository_root(const std::filesystem::path& dir);

// The commit `revision` names (`rev-parse --verify REV^{commit}`); nullopt
// when it names none.
std::optional<std::string> resolve_commit(const std::filesystem::path& root, const std::string& revision);

// A side's files mblint may read: the names a walk lints up to mblint's
// input limit, other files (a sourced `env`, a JSON) up to 1 MiB; a larger
// one (data, a checkpoint) is not read into memory and reads as absent.
inline constexpr size_t kMaxOtherBytes = 1u << 20;
bool read_for_diff(const std::filesystem::path& path, size_t size);

// Every file of `commit` that read_for_diff keeps (symbolic links and
// submodules left out), keyed by absolute path under `root`: ls-tree for the
// names, one `cat-file --batch` for all the contents. nullopt when git fails.
std::optional<std::map<std::filesystem::path, std::string>> read_commit_files(const std::filesystem::path& root,
                                                                              const std::string& commit);

// An overlay (lint/base/file_reader.h) that makes a lint run read `commit`'s
// files under `root`, and no file of the disk there: a file the commit does
// not have reads as absent. nullopt when git fails.
std::optional<std::map<std::filesystem::path, std::string>> revision_overlay(const std::filesystem::path& root,
                                                                             const std::string& commit);

// The same for the working tree: the files git lists there (tracked and
// untracked, not ignored) with their text on disk, so that a build
// directory or a virtualenv git ignores is not read as an added job.
std::optional<std::map<std::filesystem::path, std::string>> worktree_overlay(const std::filesystem::path& root);

}  // namespace mblint
