// `#SBATCH` directives as sbatch reads them: lines starting in column 1
// before the first command, several options per line, no variable expansion.
#include <algorithm>
#include <array>
#include <exception>

#include "lint/load/shell/shell.h"

namespace mblint {

namespace {

constexpr size_t kMaxScriptBytes = size_t{8} << 20;

// Options that never take a value: the word after them is the next option.
bool takes_no_value(std::string_view option) {
  static constexpr std::array<std::string_view, 17> kFlags = {
      "--exclusive", "--overcommit", "--requeue",    "--no-requeue",    "--wait",
      "-H",          "--hold",       "-Q",           "--quiet",         "-v",
      "--verbose",   "--contiguous", "--spread-job", "--use-min-nodes", "-O",
      "--test-only", "--parsable"};
  return std::find(kFlags.begin(), kFlags.end(), option) != kFlags.end();
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

struct DirectiveWord {
  MappedString text;  // quotes removed
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Splits the rest of a directive line into words; a `#` starting a word
// begins a comment.
std::vector<DirectiveWord> split_words(FileId id, std::string_view line, uint32_t offset) {
  std::vector<DirectiveWord> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size() || line[i] == '#') break;
    DirectiveWord word;
    word.text.file = id;
    word.begin = offset + static_cast<uint32_t>(i);
    char quote = 0;
    for (; i < line.size() && (quote || !is_blank(line[i])); ++i) {
      char c = line[i];
      if (quote == 0 && (c == '"' || c == '\'')) {
        quote = c;
      } else if (c == quote) {
        quote = 0;
      } else {
        uint32_t at = offset + static_cast<uint32_t>(i);
        append_char(word.text, c, at, at + 1);
      }
    }
    word.end = offset + static_cast<uint32_t>(i);
    words.push_back(std::move(word));
  }
  return words;
}

SbatchDirective directive(FileId id, std::string option, uint32_t begin, uint32_t end) {
  SbatchDirective d;
  d.option = std::move(option);
  d.span = Span{id, begin, end};
  return d;
}

void read_options(FileId id, std::vector<DirectiveWord>& words, std::vector<SbatchDirective>& out) {
  for (size_t i = 0; i < words.size(); ++i) {
    const DirectiveWord& word = words[i];
    const std::string& text = word.text.text;
    if (text.size() < 2 || text[0] != '-') continue;  // a stray word sbatch would reject
    bool is_long = text[1] == '-';
    size_t equals = text.find('=');
    if (is_long && equals != std::string::npos) {  // --nodes=4
      SbatchDirective d = directive(id, text.substr(0, equals), word.begin, word.end);
      d.value = substring(word.text, equals + 1, text.size());
      out.push_back(std::move(d));
      continue;
    }
    if (!is_long && text.size() > 2) {  // -N4
      SbatchDirective d = directive(id, text.substr(0, 2), word.begin, word.end);
      if (!takes_no_value(d.option)) d.value = substring(word.text, 2, text.size());
      out.push_back(std::move(d));
      continue;
    }
    SbatchDirective d = directive(id, text, word.begin, word.end);
    bool next_is_value = i + 1 < words.size() && !words[i + 1].text.text.starts_with("-");
    if (!takes_no_value(text) && next_is_value) {  // -N 4, --nodes 4
      d.value = words[i + 1].text;
      d.span.end = words[i + 1].end;
      ++i;
    }
    out.push_back(std::move(d));
  }
}

// The directive lines before the first command.
void read_header(const SourceFile& file, FileId id, std::vector<SbatchDirective>& directives) {
  std::string_view text = file.text;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t newline = text.find('\n', pos);
    size_t end = newline == std::string_view::npos ? text.size() : newline;
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("#SBATCH") && (line.size() == 7 || is_blank(line[7]))) {
      std::vector<DirectiveWord> words =
          split_words(id, line.substr(7), static_cast<uint32_t>(pos + 7));
      read_options(id, words, directives);
    } else {
      size_t first = line.find_first_not_of(" \t");
      if (first != std::string_view::npos && line[first] != '#') break;  // the first command
    }
    pos = end + 1;
  }
}

}  // namespace

std::vector<SbatchDirective> read_sbatch_directives(const SourceFile& file, FileId id) {
  std::vector<SbatchDirective> directives;
  if (file.text.size() > kMaxScriptBytes) return directives;
  try {
    read_header(file, id, directives);
  } catch (const std::exception&) {  // out of memory: what was read so far
  }
  return directives;
}

}  // namespace mblint
