#include "lint/load/shell/hand_off.h"
#include "lint/base/text.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace mblint {

namespace {

// Files sourced to set up a shell (a virtualenv, environment modules, a
// login profile) cannot change a training job's settings.
bool sets_up_shell(std::string_view path) {
  std::string_view name = basename(path);
  return name == "activate" || name == ".bashrc" || name == ".profile" || name == ".bash_profile" ||
         name == "modules.sh" || name == "conda.sh" || path.substr(0, 5) == "/etc/";
}

bool is_python(std::string_view name) {
  return name == "python" || name == "python3" || (name.substr(0, 7) == "python3" && name.size() <= 10);
}

// Launchers mblint does not read yet: their jobs are not checked.
constexpr std::array<std::string_view, 8> kOtherLaunchers = {"deepspeed", "mpirun", "mpiexec", "ray",
                                                             "docker",    "megatron", "accelerate", "enroot"};

std::string words(const std::vector<MappedString>& argv, size_t count) {
  std::string out;
  for (size_t i = 0; i < argv.size() && i < count; ++i) out += (i ? " " : "") + argv[i].text;
  if (argv.size() > count) out += " ...";
  return out;
}

const MappedString* python_program(const std::vector<MappedString>& argv) {
  for (const MappedString& word : argv) {
    if (ends_with(word.text, ".py")) return &word;
  }
  return nullptr;
}

std::optional<Unresolved> hand_off(const ShellCommand& command) {
  const std::vector<MappedString>& argv = command.argv;
  if (argv.empty() || command.followed) return std::nullopt;  // its commands are in the script
  const MappedString& first = argv[0];
  if (has_unknown(first)) {
    return Unresolved{"command", fmt::format("the command is `{}`, which is not known here", words(argv, 3)),
                      "give the variable a literal value in the script", command.span};
  }
  std::string_view name = basename(first.text);
  if ((name == "source" || name == ".") && argv.size() > 1) {
    if (sets_up_shell(argv[1].text) && !has_unknown(argv[1])) return std::nullopt;
    std::string why = command.not_followed.empty() ? "mblint does not read sourced files" : command.not_followed;
    return Unresolved{"sourced file", fmt::format("`{}` is not followed: {}", words(argv, 2), why),
                      "write the settings in the launching script, or pass them with --set", command.span};
  }
  if (name == "eval") {
    std::string why = command.not_followed.empty() ? "mblint does not evaluate eval" : command.not_followed;
    return Unresolved{"command", fmt::format("`{}` is not followed: {}", words(argv, 3), why),
                      "write the command out in the script", command.span};
  }
  bool other_script = ((name == "bash" || name == "sh") && argv.size() > 1 && !argv[1].text.empty() &&
                       argv[1].text[0] != '-') ||
                      ends_with(name, ".sh");
  if (other_script) {
    std::string why = command.not_followed.empty() ? "which mblint does not follow" : "not followed: " + command.not_followed;
    return Unresolved{"script", fmt::format("`{}` runs another script, {}", words(argv, 2), why),
                      "check that script itself", command.span};
  }
  if (!command.not_followed.empty()) {  // `srun ... bash FILE`, `mpirun ... bash -c CODE`
    return Unresolved{"script", fmt::format("`{}` runs another script, not followed: {}", words(argv, 3),
                                            command.not_followed),
                      "check that script itself", command.span};
  }
  if (name == "megatron" && argv.size() > 2 && !argv[2].text.empty() && argv[2].text[0] != '-') {
    return Unresolved{"config file",
                      fmt::format("`{}` takes its settings from a file mblint does not read", words(argv, 3)),
                      "pass the settings as --flag value arguments of `megatron`", command.span};
  }
  if (name == "ray" && (argv.size() < 2 || argv[1].text != "job")) return std::nullopt;  // ray start, stop, status
  if (name == "deepspeed" || name == "ray" || name == "mpirun" || name == "mpiexec") {  // read, but what they run here is no entry point mblint knows
    return Unresolved{"launcher", fmt::format("`{}` runs no training entry point mblint knows", words(argv, 3)),
                      "check the training command it runs in a script of its own", command.span};
  }
  if (std::find(kOtherLaunchers.begin(), kOtherLaunchers.end(), name) != kOtherLaunchers.end()) {
    return Unresolved{"launcher", fmt::format("`{}` is a launcher mblint does not read", words(argv, 3)),
                      "check the training command it runs in a script of its own", command.span};
  }
  if (is_python(name) || name == "torchrun" || name == "srun") {
    if (const MappedString* program = python_program(argv)) {
      return Unresolved{"entry point",
                        fmt::format("`{}` is not an entry point mblint knows (Megatron-LM's pretrain_*.py, "
                                    "Megatron Bridge's run_recipe.py, or a script that takes --config-file)",
                                    program->text),
                        "check a Megatron-LM or Megatron Bridge launch", command.span};
    }
  }
  return std::nullopt;
}

bool is_launch(const ShellCommand& command, const std::vector<Launch>& launches) {
  return std::any_of(launches.begin(), launches.end(), [&](const Launch& launch) {
    return launch.span.file == command.span.file && launch.span.begin >= command.span.begin &&
           launch.span.begin < command.span.end;
  });
}

}  // namespace

std::vector<Unresolved> find_hand_offs(const ShellScript& script, const std::vector<Launch>& launches) {
  std::vector<Unresolved> out;
  for (const ShellCommand& command : script.commands) {
    if (is_launch(command, launches)) continue;
    if (auto found = hand_off(command)) out.push_back(std::move(*found));
  }
  return out;
}

}  // namespace mblint
