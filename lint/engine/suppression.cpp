#include "lint/engine/suppression.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/model/schema.h"

namespace mblint {

namespace {

constexpr std::string_view kUnusedSuppression = "unused-suppression";
constexpr std::string_view kSuppressionWithoutReason = "suppression-without-reason";

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool all_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return is_blank(c); });
}

size_t line_end(std::string_view text, size_t from) {
  size_t newline = text.find('\n', from);
  size_t end = newline == std::string_view::npos ? text.size() : newline;
  if (end > from && text[end - 1] == '\r') --end;
  return end;
}

Comment make_comment(std::string_view text, size_t line_start, size_t hash, uint32_t line) {
  return Comment{static_cast<uint32_t>(hash), static_cast<uint32_t>(line_end(text, hash)), line,
                 all_blank(text.substr(line_start, hash - line_start))};
}

// ---- shell --------------------------------------------------------------

struct Heredoc {
  std::string delimiter;
  bool strip_tabs = false;
};

// `<<WORD`, `<<-'WORD'`: the delimiter with its quotes removed; `i` moves past it.
Heredoc read_heredoc(std::string_view text, size_t& i) {
  Heredoc heredoc;
  i += 2;
  if (i < text.size() && text[i] == '-') {
    heredoc.strip_tabs = true;
    ++i;
  }
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  while (i < text.size() && std::string_view(" \t\r\n;&|<>()").find(text[i]) == std::string_view::npos) {
    if (text[i] != '\'' && text[i] != '"' && text[i] != '\\') heredoc.delimiter += text[i];
    ++i;
  }
  return heredoc;
}

// Skips the bodies of the pending here-documents, starting at a line start.
void skip_heredoc_bodies(std::string_view text, size_t& i, uint32_t& line, const std::vector<Heredoc>& pending) {
  for (const Heredoc& heredoc : pending) {
    while (i < text.size()) {
      size_t end = line_end(text, i);
      std::string_view body_line = text.substr(i, end - i);
      if (heredoc.strip_tabs) body_line.remove_prefix(std::min(body_line.find_first_not_of('\t'), body_line.size()));
      size_t newline = text.find('\n', i);
      i = newline == std::string_view::npos ? text.size() : newline + 1;
      ++line;
      if (body_line == heredoc.delimiter) break;
    }
  }
}

bool shell_word_start(std::string_view text, size_t i, size_t line_start) {
  return i == line_start || std::string_view(" \t;&|()<>").find(text[i - 1]) != std::string_view::npos;
}

std::vector<Comment> scan_shell(std::string_view text) {
  enum class State { Normal, Single, AnsiC, Double };
  std::vector<Comment> comments;
  std::vector<Heredoc> pending;
  State state = State::Normal;
  size_t line_start = 0;
  uint32_t line = 1;
  size_t i = 0;
  auto newline = [&](size_t after) {
    ++line;
    i = after;
    line_start = after;
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '\n') {
      newline(i + 1);
      if (state == State::Normal && !pending.empty()) {
        skip_heredoc_bodies(text, i, line, pending);
        line_start = i;
        pending.clear();
      }
      continue;
    }
    if (c == '\\' && state != State::Single) {  // an escaped character or a continuation
      if (i + 1 < text.size() && text[i + 1] == '\n') newline(i + 2);
      else i += 2;
      continue;
    }
    if (state == State::Single || state == State::AnsiC) {
      if (c == '\'') state = State::Normal;
      ++i;
      continue;
    }
    if (state == State::Double) {
      if (c == '"') state = State::Normal;
      ++i;
      continue;
    }
    if (c == '\'') {
      state = i > 0 && text[i - 1] == '$' ? State::AnsiC : State::Single;
    } else if (c == '"') {
      state = State::Double;
    } else if (c == '#' && shell_word_start(text, i, line_start)) {
      comments.push_back(make_comment(text, line_start, i, line));
      i = comments.back().end;
      continue;
    } else if (c == '<' && text.substr(i, 2) == "<<" && text.substr(i, 3) != "<<<") {
      Heredoc heredoc = read_heredoc(text, i);
      if (!heredoc.delimiter.empty()) pending.push_back(std::move(heredoc));
      continue;
    }
    ++i;
  }
  return comments;
}

// ---- YAML ---------------------------------------------------------------

// A quote opens a quoted scalar only where a scalar starts: at the start of
// the line or after `:`, `-`, `?`, `[`, `{` or `,` (so the apostrophe of
// `name: don't` is no quote).
bool yaml_scalar_start(std::string_view text, size_t i, size_t line_start) {
  size_t j = i;
  while (j > line_start && (text[j - 1] == ' ' || text[j - 1] == '\t')) --j;
  return j == line_start || std::string_view(":-?[{,").find(text[j - 1]) != std::string_view::npos;
}

// The column content of a block scalar started on this line must exceed
// (the key's column; the dash's for `- |`); -1 when no block scalar starts.
int block_scalar_parent(std::string_view content, size_t indent) {
  size_t end = content.size();
  while (end > 0 && is_blank(content[end - 1])) --end;
  size_t start = end;
  while (start > 0 && std::string_view("+-0123456789").find(content[start - 1]) != std::string_view::npos) --start;
  if (start == 0 || (content[start - 1] != '|' && content[start - 1] != '>')) return -1;
  size_t indicator = start - 1;
  if (indicator > 0 && !is_blank(content[indicator - 1])) return -1;
  size_t key = indent;
  while (key + 1 < content.size() && content[key] == '-' && content[key + 1] == ' ') {
    key += 2;
    while (key < content.size() && content[key] == ' ') ++key;
  }
  return static_cast<int>(key == indicator ? indent : key);
}

std::vector<Comment> scan_yaml(std::string_view text) {
  enum class State { Normal, Single, Double };
  std::vector<Comment> comments;
  State state = State::Normal;
  int block_parent = -1;
  uint32_t line = 0;
  for (size_t line_start = 0; line_start < text.size() || line == 0;) {
    ++line;
    size_t end = line_end(text, line_start);
    std::string_view content = text.substr(line_start, end - line_start);
    size_t indent = std::min(content.find_first_not_of(' '), content.size());
    size_t next = text.find('\n', line_start);
    size_t following = next == std::string_view::npos ? text.size() : next + 1;
    if (block_parent >= 0 && (all_blank(content) || static_cast<int>(indent) > block_parent)) {
      line_start = following;
      if (next == std::string_view::npos) break;
      continue;
    }
    block_parent = -1;
    size_t code_end = end;
    for (size_t i = line_start; i < end; ++i) {
      char c = text[i];
      if (state == State::Double) {
        if (c == '\\') ++i;
        else if (c == '"') state = State::Normal;
      } else if (state == State::Single) {
        if (c == '\'' && i + 1 < end && text[i + 1] == '\'') ++i;
        else if (c == '\'') state = State::Normal;
      } else if (c == '#' && (i == line_start || text[i - 1] == ' ' || text[i - 1] == '\t')) {
        comments.push_back(make_comment(text, line_start, i, line));
        code_end = i;
        break;
      } else if ((c == '"' || c == '\'') && yaml_scalar_start(text, i, line_start)) {
        state = c == '"' ? State::Double : State::Single;
      }
    }
    if (state == State::Normal) block_parent = block_scalar_parent(text.substr(line_start, code_end - line_start), indent);
    if (next == std::string_view::npos) break;
    line_start = following;
  }
  return comments;
}

// ---- suppressions -------------------------------------------------------

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// The first line after `line` with something other than blanks and comments.
uint32_t next_code_line(const SourceFile& file, uint32_t line, const std::vector<Comment>& comments) {
  for (uint32_t next = line + 1; next <= file.line_starts.size(); ++next) {
    bool comment_only = std::any_of(comments.begin(), comments.end(),
                                    [&](const Comment& c) { return c.line == next && c.alone; });
    if (!comment_only && !all_blank(line_text(file, next))) return next;
  }
  return 0;
}

// The last line of the command starting on `line`: continuation lines end
// with a backslash.
uint32_t command_end_line(const SourceFile& file, uint32_t line) {
  uint32_t last = line;
  while (last < file.line_starts.size()) {
    std::string_view text = line_text(file, last);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    if (text.empty() || text.back() != '\\') break;
    ++last;
  }
  return last;
}

void read_rule_names(std::string_view list, size_t list_offset, FileId id, RuleSet rules, Suppression& out) {
  size_t i = 0;
  while (i < list.size()) {
    while (i < list.size() && (list[i] == ',' || is_blank(list[i]))) ++i;
    size_t start = i;
    while (i < list.size() && list[i] != ',' && !is_blank(list[i])) ++i;
    if (i == start) continue;
    std::string_view name = list.substr(start, i - start);
    out.rules.push_back(SuppressedRule{std::string(name), make_span(id, list_offset + start, list_offset + i),
                                       find_rule(rules, name)});
  }
}

// `# mblint: disable=a,b -- why`; nullopt for other comments.
std::optional<Suppression> parse_suppression(const SourceFile& file, FileId id, const Comment& comment,
                                             RuleSet rules) {
  std::string_view body = std::string_view(file.text).substr(comment.begin + 1, comment.end - comment.begin - 1);
  size_t lead = std::min(body.find_first_not_of(" \t"), body.size());
  if (body.substr(lead, 7) != "mblint:") return std::nullopt;
  Suppression s;
  s.file = id;
  s.comment = make_span(id, comment.begin, comment.end);
  size_t at = lead + 7;
  while (at < body.size() && is_blank(body[at])) ++at;
  std::string_view rest = body.substr(at);
  size_t directive = 0;
  if (rest.starts_with("disable-file=")) {
    s.file_wide = true;
    directive = 13;
  } else if (rest.starts_with("disable=")) {
    directive = 8;
  } else {
    s.malformed = true;
    return s;
  }
  rest.remove_prefix(directive);
  size_t dashes = rest.find("--");
  std::string_view list = rest.substr(0, dashes);
  if (dashes != std::string_view::npos) s.reason = std::string(trim(rest.substr(dashes + 2)));
  size_t list_offset = comment.begin + 1 + at + directive;
  read_rule_names(list, list_offset, id, rules, s);
  if (s.rules.empty()) s.malformed = true;
  return s;
}

uint32_t line_of(const SourceSet& sources, Span where) {
  return line_col(sources.files[where.file], where.begin).line;
}

bool located_in_file(const SourceSet& sources, Span where) {
  return where.valid() && where.file < static_cast<FileId>(sources.files.size()) &&
         !sources.files[where.file].synthetic;
}

// Marks what covers `d`. True when a suppression is honoured for it: errors
// need a reason (the job would fail), so a reason-less one is refused.
bool suppressed(const SourceSet& sources, const Diagnostic& d, std::vector<Suppression>& suppressions,
                std::vector<SuppressedRule*>& refused) {
  if (!located_in_file(sources, d.where)) return false;
  uint32_t line = line_of(sources, d.where);
  bool honoured = false;
  std::vector<SuppressedRule*> unreasoned;
  for (Suppression& s : suppressions) {
    bool on_target = s.target_line && s.target_line <= line && line <= s.target_end_line;
    if (s.file != d.where.file || s.malformed || (!s.file_wide && !on_target)) continue;
    for (SuppressedRule& entry : s.rules) {
      if (!entry.rule || entry.rule->name != d.rule) continue;
      entry.used = true;
      if (d.severity == Severity::Error && s.reason.empty()) unreasoned.push_back(&entry);
      else honoured = true;
    }
  }
  if (!honoured) refused.insert(refused.end(), unreasoned.begin(), unreasoned.end());
  return honoured;
}

void keep_unsuppressed(const SourceSet& sources, std::vector<Diagnostic>& diagnostics,
                       std::vector<Suppression>& suppressions, std::vector<SuppressedRule*>& refused) {
  std::vector<Diagnostic> kept;
  for (Diagnostic& d : diagnostics) {
    if (!suppressed(sources, d, suppressions, refused)) kept.push_back(std::move(d));
  }
  diagnostics = std::move(kept);
}

std::string closest_rule(RuleSet rules, std::string_view name) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const RuleInfo* rule : rules) {
    size_t distance = edit_distance(name, rule->name);
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(rule->name);
    }
  }
  return best;
}

Diagnostic unused_diagnostic(const RuleInfo& meta, const Suppression& s, const SuppressedRule& entry, RuleSet rules) {
  if (!entry.rule) {
    Diagnostic d = make_diagnostic(meta, fmt::format("'{}' is not an mblint rule, so this suppression does nothing",
                                                     entry.name), entry.where);
    std::string suggestion = closest_rule(rules, entry.name);
    d.help = suggestion.empty() ? "see `mblint rules` for the rule names and codes"
                                : fmt::format("did you mean {}?", suggestion);
    return d;
  }
  std::string scope = s.file_wide                           ? "in this file"
                      : s.target_end_line > s.target_line ? fmt::format("on lines {}-{}", s.target_line, s.target_end_line)
                      : s.target_line                     ? fmt::format("on line {}", s.target_line)
                                                          : "(no line follows the comment)";
  Diagnostic d = make_diagnostic(
      meta, fmt::format("suppression of {} matches no finding {}", entry.rule->name, scope), entry.where);
  d.help = "remove the rule from the comment (or the comment) once the finding is gone";
  return d;
}

Diagnostic malformed_diagnostic(const RuleInfo& meta, const Suppression& s) {
  Diagnostic d = make_diagnostic(meta, "this `# mblint:` comment is no suppression mblint understands, so it does nothing",
                                 s.comment);
  d.help = "write `# mblint: disable=RULE[,RULE] -- reason` or `# mblint: disable-file=RULE -- reason`";
  return d;
}

bool names_meta_rule(const SuppressedRule& entry) {
  return entry.rule && (entry.rule->name == kUnusedSuppression || entry.rule->name == kSuppressionWithoutReason);
}

std::vector<Diagnostic> refused_diagnostics(const RuleInfo& meta, const std::vector<SuppressedRule*>& refused) {
  std::vector<Diagnostic> out;
  std::vector<const SuppressedRule*> seen;
  for (const SuppressedRule* entry : refused) {
    if (std::find(seen.begin(), seen.end(), entry) != seen.end()) continue;
    seen.push_back(entry);
    Diagnostic d = make_diagnostic(
        meta,
        fmt::format("{} reports an error that makes the job fail; suppressing it needs a reason, so this "
                    "suppression is not honoured",
                    entry->rule->name),
        entry->where);
    d.help = fmt::format("say why after the rule names: `# mblint: disable={} -- why this job is fine`",
                         entry->rule->name);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

CommentSyntax comment_syntax_for(std::string_view path) {
  return path.ends_with(".yaml") || path.ends_with(".yml") ? CommentSyntax::Yaml : CommentSyntax::Shell;
}

std::vector<Comment> scan_comments(std::string_view text, CommentSyntax syntax) {
  return syntax == CommentSyntax::Yaml ? scan_yaml(text) : scan_shell(text);
}

std::vector<Suppression> find_suppressions(const SourceFile& file, FileId id, RuleSet rules) {
  std::vector<Suppression> out;
  if (file.text.find("mblint:") == std::string::npos) return out;
  std::vector<Comment> comments = scan_comments(file.text, comment_syntax_for(file.path));
  for (const Comment& comment : comments) {
    std::optional<Suppression> s = parse_suppression(file, id, comment, rules);
    if (!s) continue;
    if (!s->file_wide) {
      s->target_line = comment.alone ? next_code_line(file, comment.line, comments) : comment.line;
      s->target_end_line = s->target_line;
      if (comment.alone && s->target_line && comment_syntax_for(file.path) == CommentSyntax::Shell) {
        s->target_end_line = command_end_line(file, s->target_line);
      }
    }
    out.push_back(std::move(*s));
  }
  return out;
}

void apply_suppressions(const SourceSet& sources, RuleSet rules, std::vector<Diagnostic>& diagnostics) {
  std::vector<Suppression> suppressions;
  for (size_t id = 0; id < sources.files.size(); ++id) {
    if (sources.files[id].synthetic) continue;
    std::vector<Suppression> found = find_suppressions(sources.files[id], static_cast<FileId>(id), rules);
    suppressions.insert(suppressions.end(), found.begin(), found.end());
  }
  if (suppressions.empty()) return;
  std::vector<SuppressedRule*> refused;
  keep_unsuppressed(sources, diagnostics, suppressions, refused);

  // The findings about suppressions can themselves be suppressed; a
  // suppression of them that matches nothing is not reported (no regress).
  std::vector<Diagnostic> meta;
  if (const RuleInfo* rule = find_rule(rules, kSuppressionWithoutReason)) meta = refused_diagnostics(*rule, refused);
  if (const RuleInfo* rule = find_rule(rules, kUnusedSuppression)) {
    for (const Suppression& s : suppressions) {
      if (s.malformed) {
        meta.push_back(malformed_diagnostic(*rule, s));
        continue;
      }
      for (const SuppressedRule& entry : s.rules) {
        if (!entry.used && !names_meta_rule(entry)) meta.push_back(unused_diagnostic(*rule, s, entry, rules));
      }
    }
  }
  std::vector<SuppressedRule*> ignored;
  keep_unsuppressed(sources, meta, suppressions, ignored);
  diagnostics.insert(diagnostics.end(), std::make_move_iterator(meta.begin()), std::make_move_iterator(meta.end()));
}

}  // namespace mblint
