#include "lint/diff/git_repo.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lint/base/file_reader.h"
#include "lint/base/file_walk.h"

extern char** environ;

namespace mblint {

namespace {

// Both ends of a pipe, closed when they go out of scope.
struct Pipe {
  int ends[2] = {-1, -1};
  Pipe() {
    if (::pipe2(ends, O_CLOEXEC) != 0) ends[0] = ends[1] = -1;
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  bool ok() const { return ends[0] >= 0; }
  void close_end(int which) {
    if (ends[which] >= 0) ::close(ends[which]);
    ends[which] = -1;
  }
};

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return;  // git stopped reading: its exit code says why
    done += static_cast<size_t>(wrote);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out.append(buffer, static_cast<size_t>(got));
  }
  return out;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

bool read_for_diff(const std::filesystem::path& path, size_t size) {
  return size <= kMaxInputBytes && (is_walked_name(path) || size <= kMaxOtherBytes);
}

GitOutput run_git(const std::filesystem::path& root, const std::vector<std::string>& args, const std::string& input) {
  GitOutput result;
  std::vector<std::string> words = {"git", "-C", root.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  Pipe in, out;
  if (!in.ok() || !out.ok()) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.ends[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.ends[1], STDOUT_FILENO);
  // git's own messages ("fatal: not a git repository") are replaced by mblint's.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int spawned = ::posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return result;
  in.close_end(0);
  out.close_end(1);
  // Fed from a thread: a large input and a large output would each wait for
  // the other to be read.
  std::thread feeder([&] {
    write_all(in.ends[1], input);
    in.close_end(1);
  });
  result.out = read_all(out.ends[0]);
  feeder.join();
  result.status = wait_for(pid);
  return result;
}

std::optional<std::filesystem::path> repository_root(const std::filesystem::path& dir) {
  GitOutput top = run_git(dir, {"rev-parse", "--show-toplevel"});
  if (top.status != 0) return std::nullopt;
  std::error_code error;
  std::filesystem::path root = std::filesystem::canonical(trimmed(top.out), error);
  if (error) return std::nullopt;
  return root;
}

std::optional<std::string> resolve_commit(const std::filesystem::path& root, const std::string& revision) {
  // `--end-of-options`: a revision that starts with '-' is a name, not an option.
  GitOutput commit = run_git(root, {"rev-parse", "--verify", "--quiet", "--end-of-options", revision + "^{commit}"});
  if (commit.status != 0) return std::nullopt;
  std::string sha = trimmed(commit.out);
  if (sha.empty()) return std::nullopt;
  return sha;
}

namespace {

struct TreeFile {
  std::string object;
  std::string path;
};

// `ls-tree -r -z --long`: "MODE TYPE OBJECT SIZE\tPATH\0" per entry.
std::vector<TreeFile> parse_tree(const std::string& listing, const std::function<bool(const std::string&, size_t)>& keep) {
  std::vector<TreeFile> files;
  size_t at = 0;
  while (at < listing.size()) {
    size_t end = listing.find('\0', at);
    if (end == std::string::npos) end = listing.size();
    std::string_view entry(listing.data() + at, end - at);
    at = end + 1;
    size_t tab = entry.find('\t');
    if (tab == std::string_view::npos) continue;
    std::string_view head = entry.substr(0, tab);
    // Regular files only: 100644 and 100755 (120000 is a link, 160000 a submodule).
    if (head.substr(0, 4) != "1006" && head.substr(0, 4) != "1007") continue;
    size_t object_at = head.find(' ', head.find(' ') + 1) + 1;
    size_t object_end = head.find(' ', object_at);
    if (object_at == 0 || object_end == std::string_view::npos) continue;
    std::string_view size_text = head.substr(object_end + 1);
    while (!size_text.empty() && size_text.front() == ' ') size_text.remove_prefix(1);
    size_t size = 0;
    for (char c : size_text) size = size * 10 + static_cast<size_t>(c - '0');
    std::string path(entry.substr(tab + 1));
    if (!keep(path, size)) continue;
    files.push_back(TreeFile{std::string(head.substr(object_at, object_end - object_at)), std::move(path)});
  }
  return files;
}

}  // namespace

std::optional<std::map<std::filesystem::path, std::string>> read_commit_files(const std::filesystem::path& root,
                                                                              const std::string& commit) {
  GitOutput listing = run_git(root, {"ls-tree", "-r", "-z", "--long", "--full-tree", commit});
  if (listing.status != 0) return std::nullopt;
  std::vector<TreeFile> files =
      parse_tree(listing.out, [](const std::string& path, size_t size) { return read_for_diff(path, size); });
  std::string objects;
  for (const TreeFile& file : files) objects += file.object + "\n";
  GitOutput contents = run_git(root, {"cat-file", "--batch"}, objects);
  if (contents.status != 0) return std::nullopt;
  // "OBJECT blob SIZE\n" then SIZE bytes and "\n", in the order asked.
  std::map<std::filesystem::path, std::string> out;
  size_t at = 0;
  for (const TreeFile& file : files) {
    size_t line_end = contents.out.find('\n', at);
    if (line_end == std::string::npos) return std::nullopt;
    size_t space = contents.out.rfind(' ', line_end);
    if (space == std::string::npos || space < at) return std::nullopt;
    // "OBJECT missing" or any other line without a size: the listing is not what was asked.
    size_t size = 0;
    const char* first = contents.out.data() + space + 1;
    const char* last = contents.out.data() + line_end;
    if (std::from_chars(first, last, size).ptr != last) return std::nullopt;
    if (line_end + 1 + size > contents.out.size()) return std::nullopt;
    out.emplace((root / file.path).lexically_normal(), contents.out.substr(line_end + 1, size));
    at = line_end + 1 + size + 1;
  }
  return out;
}

std::optional<std::map<std::filesystem::path, std::string>> revision_overlay(const std::filesystem::path& root,
                                                                             const std::string& commit) {
  auto files = read_commit_files(root, commit);
  if (files) files->emplace(sealed_key(root), std::string());
  return files;
}

std::optional<std::map<std::filesystem::path, std::string>> worktree_overlay(const std::filesystem::path& root) {
  GitOutput listing = run_git(root, {"ls-files", "-z", "--cached", "--others", "--exclude-standard"});
  if (listing.status != 0) return std::nullopt;
  std::map<std::filesystem::path, std::string> files;
  size_t at = 0;
  while (at < listing.out.size()) {
    size_t end = std::min(listing.out.find('\0', at), listing.out.size());
    std::filesystem::path path = (root / listing.out.substr(at, end - at)).lexically_normal();
    at = end + 1;
    std::error_code error;
    // A tracked file deleted from the work tree is absent; links and large files are left out as for a revision.
    if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(path, error))) continue;
    size_t size = std::filesystem::file_size(path, error);
    if (error || !read_for_diff(path, size)) continue;
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) continue;
    files.emplace(std::move(path), std::move(text));
  }
  files.emplace(sealed_key(root), std::string());
  return files;
}

}  // namespace mblint
