// Following what a script hands on: `source FILE` / `. FILE` (walked in the
// same shell, so its variables and functions flow back), `bash|sh FILE`
// (walked as a child: only exported variables go in, nothing comes back, but
// its commands are recorded, so its launches are jobs) and `eval` of text
// whose value is known. Nothing is run; every file is read through
// ShellFiles, and what is not followed says why (ShellCommand::not_followed).
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "lint/load/shell/shell_walk.h"
#include "lint/base/text.h"

namespace mblint::shell {

namespace {

ShellCommand& recorded(Walker& w, size_t index) { return w.out.commands[index]; }

Outcome not_followed(Walker& w, size_t index, std::string why) {
  recorded(w, index).not_followed = std::move(why);
  return {Flow::Normal, Status::Unknown};
}

// Files, eval and child code nest at most max_source_depth deep (a script
// that sources itself through another): a note, and nullopt within the limit.
std::optional<Outcome> too_deep(Walker& w, size_t index) {
  if (w.follow_depth < w.limits.max_source_depth) return std::nullopt;
  return not_followed(w, index, fmt::format("files and eval are nested more than {} deep here",
                                            w.limits.max_source_depth));
}

// Files and code held in strings are followed at most max_follows times and
// max_followed_bytes in all: `x='eval "$x"; eval "$x"'; eval "$x"` doubles
// at each level, so the depth limit alone would let a short script cost
// seconds. Counts `bytes` within the limits; past them, a note and true.
bool over_followed(Walker& w, size_t index, size_t bytes) {
  if (w.follows >= w.limits.max_follows) {
    not_followed(w, index, fmt::format("this script follows more than {} files and code strings",
                                       w.limits.max_follows));
    return true;
  }
  if (w.followed_bytes + bytes > w.limits.max_followed_bytes) {
    not_followed(w, index, fmt::format("the files and code followed from this script pass {} MiB together",
                                       w.limits.max_followed_bytes >> 20));
    return true;
  }
  w.followed_bytes += bytes;
  ++w.follows;
  return false;
}

// Code held in a string (eval, `bash -c`, a here-document), walked one level
// deeper; with `arguments`, as a child's script whose $1... they are.
Outcome walk_code(Walker& w, MappedString code, bool certain,
                  std::optional<std::vector<MappedString>> arguments = std::nullopt) {
  const MappedString& kept = w.codes.emplace_back(std::move(code));
  std::optional<std::vector<MappedString>> caller = w.positional;
  if (arguments) w.positional = std::move(arguments);
  ++w.follow_depth;
  Outcome outcome = walk_text(w, code_source(kept), certain);
  --w.follow_depth;
  if (arguments) w.positional = std::move(caller);
  return outcome;
}

// The file `path` names, read through w.files, or why it is not followed.
std::optional<ShellFile> read_named(Walker& w, size_t index, const MappedString& path) {
  if (!fully_known(path)) {
    not_followed(w, index, fmt::format("its path `{}` is not known here", path.text));
    return std::nullopt;
  }
  if (too_deep(w, index)) return std::nullopt;
  std::string why;
  std::optional<ShellFile> file = w.files->read(path.text, w.directories.back(), why);
  if (!file) {
    not_followed(w, index, why);
    return std::nullopt;
  }
  if (std::find(w.walking.begin(), w.walking.end(), file->file) != w.walking.end()) {
    not_followed(w, index, fmt::format("`{}` is already being read: it sources itself", path.text));
    return std::nullopt;
  }
  if (over_followed(w, index, file->text.size())) return std::nullopt;
  return file;
}

// Walks a followed file with `arguments` as $1... (nullopt: the caller's).
Outcome walk_file(Walker& w, ShellFile file, std::optional<std::vector<MappedString>> arguments,
                  bool certain) {
  const std::string& text = w.texts.emplace_back(std::move(file.text));
  std::optional<std::vector<MappedString>> caller = w.positional;
  if (arguments) w.positional = std::move(arguments);
  w.directories.push_back(std::move(file.directory));
  w.walking.push_back(file.file);
  w.paths.push_back(std::move(file.path));
  ++w.follow_depth;
  Outcome outcome = walk_text(w, file_source(file.file, text), certain);
  --w.follow_depth;
  w.paths.pop_back();
  w.walking.pop_back();
  w.directories.pop_back();
  if (arguments) w.positional = std::move(caller);
  if (outcome.flow == Flow::Return) outcome.flow = Flow::Normal;  // `return` ends a sourced file
  return outcome;
}

std::vector<MappedString> arguments_after(const std::vector<MappedString>& argv, size_t first) {
  if (first >= argv.size()) return {};
  return {argv.begin() + static_cast<std::ptrdiff_t>(first), argv.end()};
}

// `source FILE [ARGS]`: the same shell. Arguments replace $1... while it runs.
Outcome follow_source(Walker& w, size_t index, bool certain) {
  std::vector<MappedString> argv = recorded(w, index).argv;
  std::optional<ShellFile> file = read_named(w, index, argv[1]);
  if (!file) {
    w.after_unfollowed_source = true;
    return {Flow::Normal, Status::Unknown};
  }
  recorded(w, index).followed = true;
  std::optional<std::vector<MappedString>> arguments;
  if (argv.size() > 2) arguments = arguments_after(argv, 2);
  return walk_file(w, std::move(*file), std::move(arguments), certain);
}

// A child process (`bash FILE`, `bash -c CODE`): it sees the exported
// variables and the command's own `VAR=x` prefixes, no functions, and
// changes nothing here. Its commands run under `launcher` (see
// ShellCommand::launcher).
// `expanded_here`: the code is an unquoted here-document, whose `$VAR`s this
// shell expands before the child reads it, so every variable is seen.
// `zero`: the child's $0 ("" when mblint does not know it).
template <typename Walk>
Outcome in_child(Walker& w, const std::vector<std::pair<std::string, VarState>>& prefix,
                 std::vector<MappedString> launcher, Walk walk, bool expanded_here = false,
                 std::string zero = {}) {
  push_branch(w);
  std::string caller_zero = std::exchange(w.dollar_zero, std::move(zero));
  std::vector<std::string> hidden;
  for (const auto& [name, state] : w.vars) {
    if (!state.var.exported && !expanded_here) hidden.push_back(name);
  }
  for (const std::string& name : hidden) set_var(w, name, std::nullopt);
  for (const auto& [name, state] : prefix) set_var(w, name, state);
  auto functions = std::move(w.functions);
  w.functions.clear();
  std::vector<Saved> locals = std::move(w.locals);  // `local` in the child is its own
  w.locals.clear();
  std::vector<MappedString> outer = std::exchange(w.launcher, std::move(launcher));
  Outcome outcome = walk();
  w.launcher = std::move(outer);
  w.dollar_zero = std::move(caller_zero);
  w.locals = std::move(locals);
  w.functions = std::move(functions);
  pop_branch(w, outcome);
  return {Flow::Normal, Status::Unknown};
}

// `bash FILE [ARGS]`.
Outcome follow_child(Walker& w, size_t index, size_t file_word,
                     const std::vector<std::pair<std::string, VarState>>& prefix, bool certain,
                     std::vector<MappedString> launcher) {
  std::vector<MappedString> argv = recorded(w, index).argv;
  std::optional<ShellFile> file = read_named(w, index, argv[file_word]);
  if (!file) return {Flow::Normal, Status::Unknown};
  recorded(w, index).followed = true;
  std::string zero = file->path;
  return in_child(
      w, prefix, std::move(launcher),
      [&]() { return walk_file(w, std::move(*file), arguments_after(argv, file_word + 1), certain); }, false,
      std::move(zero));
}

// `bash -c CODE [NAME ARGS]`: CODE read as a child's script, NAME its $0
// and ARGS its $1... (none given: there are none).
Outcome follow_shell_code(Walker& w, size_t index, size_t code_word,
                          const std::vector<std::pair<std::string, VarState>>& prefix, bool certain,
                          std::vector<MappedString> launcher) {
  if (auto refused = too_deep(w, index)) return *refused;
  const std::vector<MappedString>& argv = recorded(w, index).argv;
  MappedString code = argv[code_word];
  if (over_followed(w, index, code.text.size())) return {Flow::Normal, Status::Unknown};
  if (code.file == kNoFile) code.file = w.source.file;
  std::vector<MappedString> arguments = arguments_after(argv, code_word + 2);
  recorded(w, index).followed = true;
  return in_child(w, prefix, std::move(launcher),
                  [&]() { return walk_code(w, std::move(code), certain, std::move(arguments)); });
}

// `eval ARGS`: the arguments joined by spaces, read as code in this shell.
// An unknown part holds its expression as written (`$GPUS`), which expands
// to the same unknown again: the rest of the command is still read.
Outcome follow_eval(Walker& w, size_t index, bool certain) {
  const std::vector<MappedString>& argv = recorded(w, index).argv;
  MappedString code;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (i > 1) {
      Span at = span_of(argv[i - 1], argv[i - 1].text.size(), argv[i - 1].text.size());
      append_char(code, ' ', at.end, at.end);
    }
    append_mapped(code, argv[i]);
  }
  if (auto refused = too_deep(w, index)) return *refused;
  if (over_followed(w, index, code.text.size())) return {Flow::Normal, Status::Unknown};
  if (code.file == kNoFile) code.file = w.source.file;
  recorded(w, index).followed = true;
  return walk_code(w, std::move(code), certain);
}

bool is_option(const MappedString& word) { return !word.text.empty() && word.text[0] == '-'; }

}  // namespace

namespace {

// The words sbatch reads from a job script's `#SBATCH` lines, as
// `--option=value` words for the launcher line.
std::vector<MappedString> directive_words(const Walker& w, const HeredocBody& body) {
  if (w.source.mapped) return {};  // a here-document inside a string: not read for directives
  SourceFile header;
  header.text.assign(body.begin, '\n');  // keeps the offsets of the file
  header.text.append(w.source.text.substr(body.begin, body.end - body.begin));
  std::vector<MappedString> words;
  for (const SbatchDirective& directive : read_sbatch_directives(header, w.source.file)) {
    MappedString word = uniform_text(directive.option, directive.span);
    if (directive.value) {
      append_char(word, '=', directive.span.begin, directive.span.end);
      append_mapped(word, *directive.value);
    }
    words.push_back(std::move(word));
  }
  return words;
}

bool names_a_script(const MappedString& word) {
  std::string_view text = word.text;
  return ends_with(text, ".sh") || ends_with(text, ".sbatch") || ends_with(text, ".sub") ||
         ends_with(text, ".slurm");
}

}  // namespace

std::optional<Outcome> follow_heredoc(Walker& w, const Node& node, size_t index,
                                      const std::vector<std::pair<std::string, VarState>>& prefix,
                                      bool certain) {
  if (!node.detail || node.detail->heredocs.empty()) return std::nullopt;
  const std::vector<MappedString>& argv = recorded(w, index).argv;
  if (argv.empty() || !fully_known(argv[0])) return std::nullopt;
  std::string_view program = basename(argv[0].text);
  bool sbatch = program == "sbatch";
  if (!sbatch && program != "bash" && program != "sh") return std::nullopt;
  for (size_t i = 1; i < argv.size(); ++i) {  // a script named, or `bash -c`: the body is only input
    if (sbatch ? names_a_script(argv[i]) : !is_option(argv[i]) || argv[i].text.find('c') != std::string::npos)
      return std::nullopt;
  }
  auto found = w.bodies ? w.bodies->find(node.detail->heredocs.back()) : decltype(w.bodies->end()){};
  if (!w.bodies || found == w.bodies->end() || found->second.begin > found->second.end ||
      found->second.end > w.source.text.size()) {
    return not_followed(w, index,
                        "mblint cannot read its here-document here (it is in a function another file "
                        "defines, or never closed)");
  }
  const HeredocBody& body = found->second;
  if (auto refused = too_deep(w, index)) return *refused;
  MappedString code = w.source.mapped
                          ? substring(*w.source.mapped, body.begin, body.end)
                          : mapped_verbatim(w.source.file, body.begin,
                                            w.source.text.substr(body.begin, body.end - body.begin));
  if (over_followed(w, index, code.text.size())) return Outcome{Flow::Normal, Status::Unknown};
  std::vector<MappedString> launcher = w.launcher;
  if (sbatch) {  // a new job: sbatch, the script's #SBATCH lines, then its own options (they win)
    launcher.push_back(argv[0]);
    for (MappedString& word : directive_words(w, body)) launcher.push_back(std::move(word));
    launcher.insert(launcher.end(), argv.begin() + 1, argv.end());
  }
  recorded(w, index).followed = true;
  return in_child(
      w, prefix, std::move(launcher),
      [&]() { return walk_code(w, std::move(code), certain, std::vector<MappedString>{}); }, !body.quoted);
}

namespace {

// Programs that run the command they are given on compute nodes or in a
// container: their options and the command's words precede `bash ...`.
bool runs_a_command(std::string_view program) {
  return program == "srun" || program == "mpirun" || program == "mpiexec" || program == "docker";
}

// `bash [OPTIONS] FILE ARGS` or `bash [OPTIONS] -c CODE ...` at argv[at].
std::optional<Outcome> follow_shell(Walker& w, size_t index, size_t at,
                                    const std::vector<std::pair<std::string, VarState>>& prefix,
                                    bool certain, std::vector<MappedString> launcher) {
  const std::vector<MappedString>& argv = recorded(w, index).argv;
  size_t i = at + 1;
  bool code = false;
  for (; i < argv.size() && is_option(argv[i]) && fully_known(argv[i]); ++i) {
    std::string_view option = argv[i].text;
    if (option == "-o" || option == "-O" || option == "--rcfile" || option == "--init-file") {
      ++i;  // takes a value
      continue;
    }
    bool letters = option.size() > 1 && option[1] != '-';
    if (letters && option.find('c') != std::string_view::npos) {  // -c, -xc, -lc
      code = true;
      ++i;
      break;
    }
  }
  if (i >= argv.size()) return std::nullopt;
  if (code) return follow_shell_code(w, index, i, prefix, certain, std::move(launcher));
  if (!w.files || is_option(argv[i])) return std::nullopt;
  return follow_child(w, index, i, prefix, certain, std::move(launcher));
}

// A script a launcher runs by its path (`srun ... ./run_and_time.sh`): a
// `.sh` file named with a directory, as `./other.sh` runs at the prompt.
bool script_by_path(const MappedString& word) {
  return !is_option(word) && ends_with(word.text, ".sh") && word.text.find('/') != std::string::npos;
}

// The word of a launcher's command line that starts the shell it runs
// (`srun --mpi=pmix bash -c ...`, `mpirun -np 16 bash train.sh`,
// `srun ... slurm2pytorch ./run_and_time.sh`), or 0.
size_t shell_under_launcher(const std::vector<MappedString>& argv) {
  for (size_t k = 1; k < argv.size(); ++k) {
    if (!fully_known(argv[k])) continue;
    std::string_view word = basename(argv[k].text);
    if (word == "bash" || word == "sh" || script_by_path(argv[k])) return k;
  }
  return 0;
}

// The value of `--name=N` / `--name N` among a launcher's words.
const MappedString* launcher_option(const std::vector<MappedString>& launcher, std::string_view name,
                                    MappedString& storage) {
  for (size_t k = 0; k < launcher.size(); ++k) {
    std::string_view text = launcher[k].text;
    if (text.starts_with(name) && text.size() > name.size() && text[name.size()] == '=') {
      storage = substring(launcher[k], name.size() + 1, text.size());
      return &storage;
    }
    if (text == name && k + 1 < launcher.size()) return &launcher[k + 1];
  }
  return nullptr;
}

// What a task srun starts finds in its environment: SLURM_PROCID,
// SLURM_LOCALID and SLURM_NODEID (set, per task), SLURM_NTASKS and
// SLURM_NTASKS_PER_NODE from srun's options. Under MLPerf's
// `slurm2pytorch CMD` (mlperf-common), CMD also gets torchrun's variables
// taken from those: RANK and LOCAL_RANK per task, WORLD_SIZE and
// LOCAL_WORLD_SIZE, which run_and_time.sh tests to choose between
// `python -u` (one task per GPU) and torchrun.
void srun_task_environment(const std::vector<MappedString>& launcher, Span at,
                           std::vector<std::pair<std::string, VarState>>& prefix) {
  auto named = [&](std::string_view name) {
    return std::any_of(launcher.begin(), launcher.end(),
                       [&](const MappedString& word) { return basename(word.text) == name; });
  };
  if (!named("srun")) return;
  bool torch = named("slurm2pytorch");
  for (const char* name : {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID"})
    prefix.emplace_back(name, opaque_var(at, true));
  if (torch) {
    for (const char* name : {"RANK", "LOCAL_RANK"}) prefix.emplace_back(name, opaque_var(at, true));
  }
  auto count = [&](std::string_view option, std::initializer_list<const char*> names) {
    MappedString storage;
    const MappedString* value = launcher_option(launcher, option, storage);
    for (const char* name : names) {
      bool known = value && fully_known(*value);
      prefix.emplace_back(name, known ? known_scalar(*value, span_of(*value, 0, value->text.size()), true)
                                      : opaque_var(at, true));
    }
  };
  count("--ntasks", torch ? std::initializer_list<const char*>{"SLURM_NTASKS", "WORLD_SIZE"}
                          : std::initializer_list<const char*>{"SLURM_NTASKS"});
  count("--ntasks-per-node", torch ? std::initializer_list<const char*>{"SLURM_NTASKS_PER_NODE", "LOCAL_WORLD_SIZE"}
                                   : std::initializer_list<const char*>{"SLURM_NTASKS_PER_NODE"});
}

}  // namespace

std::optional<Outcome> follow_command(Walker& w, size_t index,
                                      const std::vector<std::pair<std::string, VarState>>& prefix,
                                      bool certain) {
  const std::vector<MappedString>& argv = recorded(w, index).argv;
  if (argv.empty() || !fully_known(argv[0])) return std::nullopt;
  std::string_view name = argv[0].text;
  if (w.functions.count(name)) return std::nullopt;  // a function of that name runs instead
  if (name == "eval" && argv.size() > 1) return follow_eval(w, index, certain);
  std::string_view program = basename(name);
  if ((program == "bash" || program == "sh") && argv.size() > 1)
    return follow_shell(w, index, 0, prefix, certain, w.launcher);
  if (runs_a_command(program)) {
    size_t shell = shell_under_launcher(argv);
    if (shell == 0) return std::nullopt;
    std::vector<MappedString> launcher = w.launcher;
    launcher.insert(launcher.end(), argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(shell));
    bool by_path = script_by_path(argv[shell]);
    if (by_path && !w.files) return std::nullopt;
    std::vector<std::pair<std::string, VarState>> seen = prefix;
    srun_task_environment(launcher, recorded(w, index).span, seen);
    if (by_path) return follow_child(w, index, shell, seen, certain, std::move(launcher));
    return follow_shell(w, index, shell, seen, certain, std::move(launcher));
  }
  if (!w.files) return std::nullopt;
  if ((name == "source" || name == ".") && argv.size() > 1) return follow_source(w, index, certain);
  if (ends_with(program, ".sh") && name.find('/') != std::string_view::npos)  // ./other.sh
    return follow_child(w, index, 0, prefix, certain, w.launcher);
  return std::nullopt;
}

namespace {

// The words of a command substitution, with quotes, `--` and redirections to
// /dev/null dropped: what is left must be one of the idioms below.
std::vector<std::string> idiom_words(std::string_view code) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&]() {
    bool redirection = word == "2>&1" || word == "&>" || word == ">" || word == "2>" || word == "1>";
    if (!word.empty() && word != "--" && word.find("/dev/null") == std::string::npos && !redirection)
      words.push_back(word);
    word.clear();
  };
  for (char c : code) {
    if (c == '"' || c == '\'') continue;
    if (c == ' ' || c == '\t' || c == '(' || c == ')') {
      flush();
      continue;
    }
    word += c;
  }
  flush();
  return words;
}

bool names_script(std::string_view word) {
  return word == "$0" || word == "${0}" || word == "${BASH_SOURCE[0]}" || word == "$BASH_SOURCE" ||
         word == "${BASH_SOURCE}";
}

}  // namespace

std::optional<std::string> script_directory_idiom(const Walker& w, std::string_view code) {
  if (!w.files || w.directories.empty()) return std::nullopt;
  if (code.starts_with("$(")) code.remove_prefix(2);
  else if (code.starts_with("`")) code.remove_prefix(1);
  else return std::nullopt;
  if (code.ends_with(")") || code.ends_with("`")) code.remove_suffix(1);
  std::vector<std::string> words = idiom_words(code);
  // Accepted: dirname S | cd $dirname S && pwd | dirname $readlink -f S |
  // dirname $realpath S | realpath $dirname S, where S names the script.
  std::vector<std::string> kept;
  for (const std::string& word : words) {
    if (word == "$" || word == "-f" || word == "-e" || word == "-P" || word == "readlink" ||
        word == "realpath" || word == "cd" || word == "&&" || word == "pwd") {
      continue;
    }
    kept.push_back(word);
  }
  if (kept.size() != 2 || kept[0] != "dirname" || !names_script(kept[1])) return std::nullopt;
  bool cd = std::find(words.begin(), words.end(), "cd") != words.end();
  bool pwd = std::find(words.begin(), words.end(), "pwd") != words.end();
  if (cd != pwd) return std::nullopt;
  // $0 is the script that was run; BASH_SOURCE is the file being read.
  bool bash_source = kept[1].find("BASH_SOURCE") != std::string::npos;
  return bash_source ? w.directories.back() : w.directories.front();
}

}  // namespace mblint::shell
