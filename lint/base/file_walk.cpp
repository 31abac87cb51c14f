#include "lint/base/file_walk.h"

#include <algorithm>

namespace fs = std::filesystem;

namespace mblint {

bool is_walked_name(const fs::path& path) {
  std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".sh" || ext == ".sbatch" || ext == ".slurm";
}

bool is_hidden_name(const fs::path& path) {
  std::string name = path.filename().string();
  return name.size() > 1 && name[0] == '.' && name != "..";
}

namespace {

void walk_into(const fs::path& dir, const std::function<bool(const fs::path&)>& skip, std::vector<fs::path>& out,
               size_t depth) {
  if (depth > 64) return;  // deeper than any real repository: a pathological tree
  std::error_code error;
  fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, error);
  if (error) return;
  std::vector<fs::directory_entry> entries;
  for (; it != fs::directory_iterator(); it.increment(error)) {
    if (error) break;
    entries.push_back(*it);
  }
  std::sort(entries.begin(), entries.end(),
            [](const fs::directory_entry& a, const fs::directory_entry& b) { return a.path() < b.path(); });
  for (const fs::directory_entry& entry : entries) {
    const fs::path& path = entry.path();
    if (is_hidden_name(path)) continue;
    std::error_code status_error;
    if (entry.is_directory(status_error) && !entry.is_symlink(status_error)) {
      if (!skip(path)) walk_into(path, skip, out, depth + 1);
    } else if (entry.is_regular_file(status_error) && is_walked_name(path) && !skip(path)) {
      out.push_back(path);
    }
  }
}

// Character class at pattern[p] == '['; returns the index after ']' and
// whether `c` is in it, or npos when the class is not closed.
size_t match_class(std::string_view pattern, size_t p, char c, bool& matched) {
  size_t i = p + 1;
  bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
  if (negate) ++i;
  bool found = false;
  size_t first = i;
  for (; i < pattern.size() && (pattern[i] != ']' || i == first); ++i) {
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      if (c >= pattern[i] && c <= pattern[i + 2]) found = true;
      i += 2;
    } else if (pattern[i] == c) {
      found = true;
    }
  }
  if (i >= pattern.size()) return std::string_view::npos;
  matched = found != negate;
  return i + 1;
}

// Iterative backtracking glob: `*` within a segment, `**` across segments.
bool match_from(std::string_view pattern, size_t p, std::string_view path, size_t s, size_t& budget) {
  while (p < pattern.size()) {
    if (budget == 0) return false;
    --budget;
    if (pattern.compare(p, 2, "**") == 0) {
      size_t next = p + 2;
      bool slash = next < pattern.size() && pattern[next] == '/';
      // `**/` also matches zero directories.
      if (slash && match_from(pattern, next + 1, path, s, budget)) return true;
      for (size_t k = s; k <= path.size(); ++k) {
        if (match_from(pattern, next, path, k, budget)) return true;
      }
      return false;
    }
    char c = pattern[p];
    if (c == '*') {
      for (size_t k = s; k <= path.size(); ++k) {
        if (match_from(pattern, p + 1, path, k, budget)) return true;
        if (k < path.size() && path[k] == '/') break;
      }
      return false;
    }
    if (s >= path.size()) return false;
    if (c == '?') {
      if (path[s] == '/') return false;
      ++p, ++s;
      continue;
    }
    if (c == '[') {
      bool matched = false;
      size_t after = match_class(pattern, p, path[s], matched);
      if (after != std::string_view::npos) {
        if (!matched || path[s] == '/') return false;
        p = after, ++s;
        continue;
      }
    }
    if (c != path[s]) return false;
    ++p, ++s;
  }
  return s == path.size();
}

}  // namespace

std::vector<fs::path> walk_directory(const fs::path& dir, const std::function<bool(const fs::path&)>& skip) {
  std::vector<fs::path> out;
  walk_into(dir, skip, out, 0);
  return out;
}

bool glob_match(std::string_view pattern, std::string_view path) {
  if (pattern.size() > 1 && pattern.substr(0, 2) == "./") pattern.remove_prefix(2);
  while (!pattern.empty() && pattern.back() == '/') pattern.remove_suffix(1);
  size_t budget = 100000;  // shared by every backtracking step: hostile patterns cannot hang the run
  return match_from(pattern, 0, path, 0, budget);
}

bool excluded_by(std::string_view pattern, std::string_view relative_path) {
  std::string_view trimmed = pattern;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.remove_suffix(1);
  bool anywhere = trimmed.find('/') == std::string_view::npos;
  if (!trimmed.empty() && trimmed.front() == '/') trimmed.remove_prefix(1);  // `/build`: only at the top
  // The path and each of its parent directories.
  for (size_t end = relative_path.size(); end != std::string_view::npos && end > 0;
       end = relative_path.rfind('/', end - 1)) {
    std::string_view prefix = relative_path.substr(0, end);
    std::string_view name = prefix.substr(prefix.rfind('/') == std::string_view::npos ? 0 : prefix.rfind('/') + 1);
    if (glob_match(trimmed, anywhere ? name : prefix)) return true;
    // `third_party/**` also names the directory itself, so the walk can skip it.
    if (trimmed.size() > 3 && trimmed.substr(trimmed.size() - 3) == "/**" &&
        glob_match(trimmed.substr(0, trimmed.size() - 3), prefix)) {
      return true;
    }
  }
  return false;
}

}  // namespace mblint
