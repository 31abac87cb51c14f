// Static reading of bash / sbatch launch scripts. The script is parsed and
// walked, never run: assignments, `export`, arrays, `${V:-default}`,
// `$(( ))` on known integers, `if`/`case` on known values and function calls
// are followed; anything that needs the real environment or a command's
// output is *unknown* and stays so. Nothing is executed, sourced or globbed.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/mapped_string.h"
#include "lint/base/source.h"

namespace mblint {

// One `#SBATCH` option, as sbatch reads it (no variable expansion).
struct SbatchDirective {
  std::string option;                 // "--nodes", "-N", "--gres", ...
  std::optional<MappedString> value;  // "4" for --nodes=4, -N 4 and -N4
  Span span;                          // the option and its value
};

// A shell variable as known at some point of the walk.
struct ShellVariable {
  bool known = true;        // false: value depends on the environment or a command
  bool is_array = false;
  MappedString value;       // scalar value (also ${A[0]} of an array)
  std::vector<MappedString> elements;  // array elements
  Span definition;          // the assignment that gave the value
  bool exported = false;
};

using ShellEnvironment = std::map<std::string, ShellVariable>;

// A simple command reached by the walk, after expansion, quote removal and
// word splitting.
struct ShellCommand {
  std::vector<MappedString> argv;
  // `VAR=value cmd` prefix assignments (visible to cmd only).
  std::vector<std::pair<std::string, MappedString>> assignments;
  Span span;  // the command as written, first word to last
  // False when mblint could not tell whether the command runs: inside a
  // branch whose condition is unknown, a loop body, or after `||`.
  bool certain = true;
  // Exported variables (and prefix assignments) the command would see:
  // shared by the commands recorded between two changes of the script's
  // variables, so a long script does not copy its environment per command.
  std::shared_ptr<const ShellEnvironment> environment;
  const ShellEnvironment& variables() const;  // *environment, or none
  // `source FILE`, `bash FILE`, `eval ...`: true when mblint read what the
  // command runs (its commands follow it); else, when it tried, why not.
  bool followed = false;
  std::string not_followed;
  // The launchers that run this command, outermost first: the words of
  // `srun -N 2` / `mpirun -np 16` before the `bash FILE` or `bash -c CODE`
  // whose commands this one is. Empty for a command the script runs itself.
  std::vector<MappedString> launcher;
  // Recorded while a command that reads a variable with several possible
  // values (set differently by branches mblint cannot decide) was walked
  // once per value: the fork (0: none) and which of its arms this is.
  uint32_t fork_group = 0;
  uint32_t fork_arm = 0;
};

struct ShellScript {
  std::vector<SbatchDirective> directives;
  std::vector<ShellCommand> commands;
  ShellEnvironment final_environment;  // variables at the end of the walk
  // Per fork (ShellCommand::fork_group): how many arms it has; an arm may
  // record no command at all.
  std::map<uint32_t, uint32_t> fork_arms;
  // Problems that make bash itself fail or mblint stop reading: unterminated
  // quotes, `$(`, `${`, heredocs or a continuation at end of file, limits
  // hit. Rule "script-syntax"; code and severity are filled in later.
  std::vector<Diagnostic> problems;
};

// Limits that keep a hostile script bounded in time and memory.
struct ShellLimits {
  size_t max_words_per_command = 100000;
  size_t max_word_length = 1 << 20;
  size_t max_commands = 100000;     // simple commands walked
  size_t max_call_depth = 16;       // nested function calls / bash -c
  size_t max_source_depth = 8;      // nested source / bash FILE / eval
  size_t max_followed_bytes = size_t{16} << 20;  // all files and code strings followed, together
  size_t max_follows = 4096;        // files and code strings followed in all
};

// A file a script sources or runs, read by the caller into its SourceSet so
// that findings can point into it.
struct ShellFile {
  FileId file = kNoFile;
  std::string text;       // a copy: the SourceSet may grow while the walk reads it
  std::string directory;  // the file's directory, absolute (`$(dirname "$0")`)
  std::string path;       // the file, absolute (`$0` of a child, `${BASH_SOURCE[0]}`)
};

// How a walk reaches the files a script names. Without it (or with an empty
// `read`), `source FILE` and `bash FILE` are recorded but not followed.
struct ShellFiles {
  std::string script_directory;  // absolute directory of the script walked
  std::string script_path;       // the script walked, absolute (`$(basename "$0" .sh)`)
  // `path` as written in a file of `from_directory`; nullopt with `why` set
  // when it is not read (missing, a device, too large).
  std::function<std::optional<ShellFile>(const std::string& path, const std::string& from_directory,
                                         std::string& why)>
      read;
  // The script's own positional parameters ($1, $2, $@) as the user will
  // call it (`mblint check script.sh -- A B`); nullopt: unknown.
  std::optional<std::vector<MappedString>> arguments;
};

// `#SBATCH` lines before the first command (sbatch ignores later ones).
std::vector<SbatchDirective> read_sbatch_directives(const SourceFile& file, FileId id);

// Walk a whole script. `initial` holds variables the launcher environment is
// known to provide (SLURM_NNODES derived from `#SBATCH --nodes`, ...).
// With `files`, `source FILE`, `. FILE`, `bash|sh FILE` and `eval` of known
// text are followed: a sourced file's variables and functions flow back, a
// child script's do not; the commands of both are recorded.
ShellScript walk_shell_script(const SourceSet& sources, FileId file,
                              const ShellEnvironment& initial,
                              const ShellLimits& limits = {}, const ShellFiles* files = nullptr);

// Walk a piece of shell code that is itself a value: `bash -c "..."`. The
// commands keep exact source positions through `code`'s mapping.
ShellScript walk_shell_code(const MappedString& code, const ShellEnvironment& initial,
                            const ShellLimits& limits = {});

}  // namespace mblint
