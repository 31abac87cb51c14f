#include "lint/base/source.h"

#include <algorithm>

namespace mblint {

namespace {

std::vector<uint32_t> compute_line_starts(std::string_view text) {
  std::vector<uint32_t> starts{0};
  starts.reserve(text.size() / 32 + 1);  // config lines are a few dozen bytes
  for (size_t at = text.find('\n'); at != std::string_view::npos; at = text.find('\n', at + 1)) {
    starts.push_back(static_cast<uint32_t>(at + 1));
  }
  return starts;
}

}  // namespace

FileId add_source(SourceSet& sources, std::string path, std::string text, bool synthetic) {
  // A file read twice in one run (a launch script linted on its own and for a
  // project context) keeps one id, so its findings are reported once.
  if (sources.indexed > sources.files.size()) {  // files were dropped by hand: index them again
    sources.by_path.clear();
    sources.indexed = 0;
  }
  for (; sources.indexed < sources.files.size(); ++sources.indexed) {
    sources.by_path.emplace(sources.files[sources.indexed].path, static_cast<FileId>(sources.indexed));
  }
  if (!synthetic) {
    auto [begin, end] = sources.by_path.equal_range(path);
    FileId found = kNoFile;
    for (auto it = begin; it != end; ++it) {
      const SourceFile& known = sources.files[it->second];
      if (!known.synthetic && known.text == text && (found == kNoFile || it->second < found)) found = it->second;
    }
    if (found != kNoFile) return found;
  }
  SourceFile file;
  file.path = std::move(path);
  file.line_starts = compute_line_starts(text);
  file.text = std::move(text);
  file.synthetic = synthetic;
  sources.files.push_back(std::move(file));
  FileId id = static_cast<FileId>(sources.files.size() - 1);
  sources.by_path.emplace(sources.files.back().path, id);
  sources.indexed = sources.files.size();
  return id;
}

LineCol line_col(const SourceFile& file, uint32_t offset) {
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(file.text.size()));
  auto it = std::upper_bound(file.line_starts.begin(), file.line_starts.end(), offset);
  size_t line_index = static_cast<size_t>(it - file.line_starts.begin()) - 1;
  return LineCol{static_cast<uint32_t>(line_index + 1),
                 offset - file.line_starts[line_index] + 1};
}

std::string_view line_text(const SourceFile& file, uint32_t line) {
  if (line == 0 || line > file.line_starts.size()) return {};
  size_t begin = file.line_starts[line - 1];
  size_t end = line < file.line_starts.size() ? file.line_starts[line] : file.text.size();
  std::string_view text(file.text.data() + begin, end - begin);
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return text;
}

uint32_t offset_of(const SourceFile& file, LineCol position) {
  if (position.line == 0) return 0;
  if (position.line > file.line_starts.size()) return static_cast<uint32_t>(file.text.size());
  uint32_t begin = file.line_starts[position.line - 1];
  uint32_t length = static_cast<uint32_t>(line_text(file, position.line).size());
  uint32_t column = position.column == 0 ? 0 : position.column - 1;
  return begin + std::min(column, length);
}

}  // namespace mblint
