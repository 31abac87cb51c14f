#include "lint/base/input_rules.h"
#include "lint/base/file_reader.h"

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

namespace mblint {

namespace {

// Closes the descriptor it holds.
struct FileDescriptor {
  explicit FileDescriptor(int fd) : value(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int value = -1;
  ~FileDescriptor() {
    if (value >= 0) ::close(value);
  }
};

Diagnostic unreadable(std::string message, Span where, std::string help) {
  return input_finding(input_rule::kUnreadableFile, std::move(message), where, std::move(help));
}

Diagnostic no_such_file(const std::string& display, Span where) {
  return unreadable(fmt::format("cannot read '{}': no such file", display), where,
                    "check the path (relative paths start from the current directory)");
}

}  // namespace

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    // Configs are almost all ASCII: skip it eight bytes at a time.
    if (uint64_t word = 0; i + sizeof word <= n) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += sizeof word;
        continue;
      }
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) length = 2, min = 0x80;
    else if ((c & 0xF0) == 0xE0) length = 3, min = 0x800;
    else if ((c & 0xF8) == 0xF0) length = 4, min = 0x10000;
    else return i;
    if (i + length > n) return i;
    uint32_t code = c & (0xFF >> (length + 1));
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return i;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += length;
  }
  return std::nullopt;
}

namespace {

// Text that stands in for `path` on disk: an editor's unsaved buffer (`mblint
// lsp`) or the edits `check --fix` re-lints before writing. Keyed by the
// weakly canonical path.
std::filesystem::path overlay_key(const std::filesystem::path& path) {
  std::error_code error;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  return error ? path.lexically_normal() : canonical;
}

const std::string* overlay_text(const std::map<std::filesystem::path, std::string>* overlay,
                                const std::filesystem::path& key) {
  if (!overlay || overlay->empty()) return nullptr;
  auto it = overlay->find(key);
  return it == overlay->end() ? nullptr : &it->second;
}

}  // namespace

std::filesystem::path sealed_key(const std::filesystem::path& dir) { return dir.lexically_normal() / ""; }

std::optional<std::filesystem::path> sealing_dir(const std::map<std::filesystem::path, std::string>* overlay,
                                                 const std::filesystem::path& path) {
  if (!overlay || overlay->empty()) return std::nullopt;
  std::filesystem::path at = overlay_key(path);
  // Sealed keys are few and end in '/': look each ancestor up (a path is a few levels deep).
  for (int depth = 0; depth < 256; ++depth) {
    if (overlay->count(sealed_key(at))) return at;
    if (!at.has_parent_path() || at.parent_path() == at) break;
    at = at.parent_path();
  }
  return std::nullopt;
}

bool source_file_exists(const std::filesystem::path& path,
                        const std::map<std::filesystem::path, std::string>* overlay) {
  if (overlay && !overlay->empty()) {
    if (overlay->count(overlay_key(path))) return true;
    if (sealing_dir(overlay, path)) return false;
  }
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

std::vector<std::filesystem::path> list_source_files(const std::filesystem::path& dir,
                                                     const std::map<std::filesystem::path, std::string>* overlay) {
  std::vector<std::filesystem::path> files;
  bool sealed = sealing_dir(overlay, dir).has_value();
  if (overlay && !overlay->empty()) {
    std::filesystem::path key = overlay_key(dir);
    for (const auto& [path, text] : *overlay) {
      if (path.parent_path() == key && !path.native().ends_with('/')) files.push_back(path);
    }
  }
  if (!sealed) {
    std::error_code error;
    for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
      if (it->is_regular_file(error)) files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

ReadResult read_source_file(SourceSet& sources, const std::filesystem::path& path, std::string display,
                            Span requested_at, size_t max_bytes,
                            const std::map<std::filesystem::path, std::string>* overlay) {
  ReadResult result;
  std::filesystem::path key = overlay && !overlay->empty() ? overlay_key(path) : std::filesystem::path();
  if (const std::string* text = overlay_text(overlay, key)) {
    if (text->size() > max_bytes) {
      result.problem = unreadable(fmt::format("'{}' is larger than {} MiB", display, max_bytes >> 20),
                                  requested_at, "training configs and launch scripts are small");
    } else if (text->find('\0') != std::string::npos) {
      result.problem = unreadable(fmt::format("'{}' is a binary file, not a config or a script", display),
                                  requested_at, "name the launch scripts and YAML files to check");
    } else {
      result.file = add_source(sources, std::move(display), *text);
    }
    return result;
  }
  if (sealing_dir(overlay, key)) {  // not in the revision read: absent, whatever the disk holds
    result.problem = no_such_file(display, requested_at);
    return result;
  }
  // Read once per run: a file the walk read is read again by the build of its job.
  std::string read_key = canonical_or_same(sources.canonical, path).native();
  read_key.append(1, '\0').append(display);
  if (auto it = sources.read_from_disk.find(read_key);
      it != sources.read_from_disk.end() && static_cast<size_t>(it->second) < sources.files.size() &&
      sources.files[it->second].text.size() <= max_bytes) {
    result.file = it->second;
    return result;
  }
  // One open and one fstat answer "missing?", "a directory?" and "how large?"
  // (a linter over a whole tree pays each system call per file). O_NONBLOCK:
  // opening a FIFO nobody writes to must not hang; reads block again below.
  auto system_error = [&] {  // what open, fstat or read said, in errno
    result.problem = unreadable(fmt::format("cannot read '{}': {}", display, std::strerror(errno)), requested_at,
                                "check the file's permissions");
    return result;
  };
  FileDescriptor fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.value < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    result.problem = no_such_file(display, requested_at);
    return result;
  }
  if (fd.value < 0) return system_error();
  struct stat info {};
  if (::fstat(fd.value, &info) != 0) return system_error();
  if (S_ISDIR(info.st_mode)) {
    result.problem = unreadable(fmt::format("'{}' is a directory", display), requested_at,
                                "name the launch scripts and YAML files to check");
    return result;
  }
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > max_bytes) {
    result.problem = unreadable(
        fmt::format("'{}' is {:.1f} MiB; mblint reads files up to {} MiB", display,
                    static_cast<double>(info.st_size) / (1 << 20), max_bytes >> 20),
        requested_at, "training configs and launch scripts are small: is this the right file?");
    return result;
  }
  if (!S_ISREG(info.st_mode)) ::fcntl(fd.value, F_SETFL, ::fcntl(fd.value, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  // A regular file's size is known: its text is allocated once.
  if (S_ISREG(info.st_mode)) text.reserve(static_cast<size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd.value, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return system_error();
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
    // All the size fstat saw: done without another read to see the end.
    if (S_ISREG(info.st_mode) && info.st_size > 0 && text.size() >= static_cast<size_t>(info.st_size)) break;
    if (text.size() > max_bytes) {  // a file that grew, or a device
      result.problem = unreadable(fmt::format("'{}' is larger than {} MiB", display, max_bytes >> 20),
                                  requested_at, "training configs and launch scripts are small");
      return result;
    }
  }
  if (text.find('\0') != std::string::npos) {
    result.problem = unreadable(fmt::format("'{}' is a binary file, not a config or a script", display),
                                requested_at, "name the launch scripts and YAML files to check");
    return result;
  }
  result.file = add_source(sources, std::move(display), std::move(text));
  sources.read_from_disk.emplace(std::move(read_key), result.file);
  return result;
}

}  // namespace mblint
