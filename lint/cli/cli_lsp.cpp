// `mblint lsp`: the language server on stdin/stdout (logs on stderr).
#include <unistd.h>

#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "lint/cli/cli.h"
#include "lint/command_line/command_line.h"
#include "lint/lsp/lsp_server.h"

namespace mblint {

namespace {

cxxopts::Options lsp_options() {
  cxxopts::Options options("mblint lsp", "Language server (LSP over stdio) for editors.");
  options.custom_help("[options]");
  add_job_options(options);
  options.add_options("server")
      ("debounce-ms", "lint after the input has been quiet this long", cxxopts::value<std::string>()->default_value("0"))
      ("stdio", "talk over stdin/stdout (the default; accepted for clients that pass it)")
      ("h,help", "show this help");
  return options;
}

}  // namespace

int run_lsp(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = lsp_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  // Read as text: cxxopts' integer parser trips GCC 12's -Wrestrict.
  std::string debounce = parsed["debounce-ms"].as<std::string>();
  int debounce_ms = -1;
  auto [end, error] = std::from_chars(debounce.data(), debounce.data() + debounce.size(), debounce_ms);
  if (error != std::errc() || end != debounce.data() + debounce.size() || debounce_ms < 0 || debounce_ms > 10000) {
    return usage_error(env, "--debounce-ms takes 0 to 10000");
  }
  lsp::Server server;
  server.rules = rules;
  server.cwd = env.cwd;
  server.log = &env.err;
  for (size_t i = 0; i < args.size(); ++i) {  // the rest are job options, applied to every lint
    std::string_view arg = args[i];
    if (arg == "--stdio" || arg.substr(0, 14) == "--debounce-ms=") continue;
    if (args[i] == "--debounce-ms") {
      ++i;
      continue;
    }
    server.job_args.push_back(args[i]);
  }
  // Check the job options once, as `mblint check` would.
  SourceSet sources;
  std::vector<std::string> full_args = {"lsp"};
  full_args.insert(full_args.end(), server.job_args.begin(), server.job_args.end());
  CommandLine line = add_command_line(sources, full_args);
  LintOptions options;
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  return lsp::serve(server, STDIN_FILENO, STDOUT_FILENO, debounce_ms);
}

}  // namespace mblint
