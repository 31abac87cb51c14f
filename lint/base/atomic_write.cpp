#include "lint/base/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace mblint {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(buffer).str();
}

WriteResult failed(std::string message) { return WriteResult{WriteStatus::Failed, std::move(message)}; }

bool write_all(int fd, std::string_view content) {
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

// Flush the directory entry of the rename too (best effort: some file
// systems do not allow opening a directory).
void sync_directory(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

WriteResult replace_file_if_unchanged(const fs::path& path, std::string_view expected, std::string_view content) {
  std::error_code error;
  fs::path target = fs::canonical(path, error);  // write through a symlink, keep the link
  if (error) return failed(fmt::format("cannot resolve '{}': {}", path.string(), error.message()));

  std::optional<std::string> on_disk = read_bytes(target);
  if (!on_disk) return failed(fmt::format("cannot re-read '{}': {}", path.string(), std::strerror(errno)));
  if (*on_disk != expected) {
    return WriteResult{WriteStatus::ChangedOnDisk,
                       fmt::format("'{}' changed on disk since mblint read it; not written", path.string())};
  }
  struct stat original {};
  if (::stat(target.c_str(), &original) != 0) {
    return failed(fmt::format("cannot stat '{}': {}", path.string(), std::strerror(errno)));
  }

  std::string temp = (target.parent_path() / fmt::format(".{}.mblint-XXXXXX", target.filename().string())).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return failed(fmt::format("cannot create a temp file next to '{}': {}", path.string(), std::strerror(errno)));
  bool ok = write_all(fd, content) && ::fchmod(fd, original.st_mode & 07777) == 0;
  if (ok && ::geteuid() == 0) {
    // Keep the owner when running as root (pre-commit in a container); an
    // ordinary user owns what they write anyway.
    ok = ::fchown(fd, original.st_uid, original.st_gid) == 0;
  }
  ok = ok && ::fsync(fd) == 0;
  int saved_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    saved_errno = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return failed(fmt::format("cannot write '{}': {}", path.string(), std::strerror(saved_errno)));
  }
  sync_directory(target.parent_path());
  return WriteResult{WriteStatus::Written, ""};
}

}  // namespace mblint
