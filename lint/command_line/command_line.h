// What the mblint subcommands share: mblint's own command line as a located
// source (so --recipe, --set and --nodes values get a file:line:col like any
// other value), option lookup, the options that describe a job, and each
// command's entry point (one file per command: cli_check.cpp, cli_rules.cpp...).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cxxopts.hpp>

#include "lint/base/build_info.h"
#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/command_line/environment.h"
#include "lint/model/job.h"

namespace mblint {

// mblint's own command line as a source file.
struct CommandLine {
  FileId file = kNoFile;
  std::vector<uint32_t> offsets;  // where each argument starts
};

CommandLine add_command_line(SourceSet& sources, const std::vector<std::string>& args);

// `mblint COMMAND ARGS...` as a command sees it: its words with the command
// name first, and the command line they make in the sources.
struct CommandWords {
  std::vector<std::string> full_args;
  CommandLine line;
};

CommandWords add_command_words(SourceSet& sources, std::string command, const std::vector<std::string>& args);

// Every value of option `name` (`--name value` or `--name=value`), located.
std::vector<CommandLineValue> option_values(const std::vector<std::string>& args, const CommandLine& line,
                                            std::initializer_list<std::string_view> names);
std::optional<CommandLineValue> last_value(const std::vector<std::string>& args, const CommandLine& line,
                                           std::initializer_list<std::string_view> names);

std::optional<Severity> parse_severity(std::string_view text);
bool use_color(const std::string& mode, const CliEnvironment& env);
int usage_error(const CliEnvironment& env, const std::string& message);

// Parses `args` (without the command name) with cxxopts. Returns an exit code
// when the command must stop here (a usage error, or --help was printed).
std::optional<int> parse_command(cxxopts::Options& options, const std::vector<std::string>& args,
                                 cxxopts::ParseResult& parsed, const CliEnvironment& env);

// The options that describe a job: --recipe, --nodes, --gpus-per-node, --gpu,
// --set, --bridge-version, --megatron-core-version, --dialect.
void add_job_options(cxxopts::Options& options);

// Fills `options` from the job options of `full_args` (the command name
// first, as add_command_line saw it). Returns an exit code on a usage error.
std::optional<int> read_job_options(const std::vector<std::string>& full_args, const CommandLine& line,
                                    const CliEnvironment& env, LintOptions& options);

// read_job_options for layout, plan and estimate, which work from the
// recipe's values: a --recipe that names no catalogued recipe is a usage
// error with the closest names, not a run on defaults. Returns the exit code
// when the command must stop.
std::optional<int> read_recipe_job_options(const std::vector<std::string>& full_args, const CommandLine& line,
                                           const CliEnvironment& env, LintOptions& options);


}  // namespace mblint
