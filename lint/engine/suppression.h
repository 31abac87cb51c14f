// Inline suppressions: `# mblint: disable=RULE[,RULE] -- reason` at the end of
// the offending line or alone on the line(s) above it (in a shell script:
// above the command, covering its `\` continuation lines), and
// `# mblint: disable-file=RULE[,RULE] -- reason` anywhere in a file. A
// post-processing step over the diagnostics of a run: rules and renderers
// know nothing of it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/rule/rule.h"

namespace mblint {

// How '#' comments are recognised: a shell script (quotes, escapes,
// here-documents) or YAML (quoted scalars, block scalars).
enum class CommentSyntax { Shell, Yaml };

// YAML for *.yaml / *.yml, the shell otherwise.
CommentSyntax comment_syntax_for(std::string_view path);

struct Comment {
  uint32_t begin = 0;  // offset of the '#'
  uint32_t end = 0;    // end of the line, without the line terminator
  uint32_t line = 0;   // 1-based
  bool alone = false;  // nothing but blanks before it on its line
};

// Every comment of `text`, found by a conservative scanner that never
// executes anything: a '#' inside a quoted string, a YAML block scalar or a
// here-document is no comment.
std::vector<Comment> scan_comments(std::string_view text, CommentSyntax syntax);

struct SuppressedRule {
  std::string name;             // as written: a rule name or code
  Span where;                   // the name inside the comment
  const RuleInfo* rule = nullptr;  // nullptr: no such rule
  bool used = false;
};

struct Suppression {
  FileId file = kNoFile;
  Span comment;
  bool file_wide = false;
  uint32_t target_line = 0;  // the first line it applies to (0: none, or file-wide)
  // The last line: target_line, except above a shell command continued with
  // `\` (its overrides are on the continuation lines, where no comment fits).
  uint32_t target_end_line = 0;
  std::vector<SuppressedRule> rules;
  std::string reason;  // after `--`, trimmed; empty when none
  bool malformed = false;  // `# mblint:` that is not `disable=` / `disable-file=`
};

// The suppressions written in one file.
std::vector<Suppression> find_suppressions(const SourceFile& file, FileId id, RuleSet rules);

// Removes the diagnostics a suppression covers and appends
// `unused-suppression` and `suppression-without-reason` findings (when those
// rules are in `rules`). Errors suppressed without a reason stay.
void apply_suppressions(const SourceSet& sources, RuleSet rules, std::vector<Diagnostic>& diagnostics);

}  // namespace mblint
