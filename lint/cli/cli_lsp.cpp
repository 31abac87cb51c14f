// `mblint lsp`: the language server on stdin/stdout (logs on stderr).
#include <unistd.h>

#include <charconv>
#include <optional>
#include <string>
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
      ("fix-check-delay-ms",
       "re-check the offered fixes after the input has been quiet this long (-1: before the first publish)",
       cxxopts::value<std::string>()->default_value(std::to_string(lsp::kFixCheckDelayMs)))
      ("stdio", "talk over stdin/stdout (the default; accepted for clients that pass it)")
      ("h,help", "show this help");
  return options;
}

// A whole number of milliseconds in [lowest, 10000], read as text: cxxopts'
// integer parser trips GCC 12's -Wrestrict.
std::optional<int> milliseconds(const std::string& text, int lowest) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < lowest || value > 10000) return std::nullopt;
  return value;
}

bool server_option(std::string_view arg) {
  for (std::string_view name : {"--debounce-ms", "--fix-check-delay-ms"}) {
    if (arg == name || (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=')) {
      return true;
    }
  }
  return false;
}

}  // namespace

int run_lsp(const std::vector<std::string>& args, RuleSet rules, const CliEnvironment& env) {
  cxxopts::Options parser = lsp_options();
  cxxopts::ParseResult parsed;
  if (auto stop = parse_command(parser, args, parsed, env)) return *stop;
  std::optional<int> debounce_ms = milliseconds(parsed["debounce-ms"].as<std::string>(), 0);
  if (!debounce_ms) return usage_error(env, "--debounce-ms takes 0 to 10000");
  std::optional<int> fix_check_delay_ms = milliseconds(parsed["fix-check-delay-ms"].as<std::string>(), -1);
  if (!fix_check_delay_ms) return usage_error(env, "--fix-check-delay-ms takes -1 to 10000");
  lsp::Server server;
  server.rules = rules;
  server.cwd = env.cwd;
  server.log = &env.err;
  server.fix_check_delay_ms = *fix_check_delay_ms;
  for (size_t i = 0; i < args.size(); ++i) {  // the rest are job options, applied to every lint
    std::string_view arg = args[i];
    if (arg == "--stdio") continue;
    if (server_option(arg)) {
      if (arg.find('=') == std::string_view::npos) ++i;  // its value is the next word
      continue;
    }
    server.job_args.push_back(args[i]);
  }
  // Check the job options once, as `mblint check` would.
  SourceSet sources;
  auto [full_args, line] = add_command_words(sources, "lsp", server.job_args);
  LintOptions options;
  if (auto stop = read_job_options(full_args, line, env, options)) return *stop;
  return lsp::serve(server, STDIN_FILENO, STDOUT_FILENO, *debounce_ms);
}

}  // namespace mblint
