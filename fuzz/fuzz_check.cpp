// The whole `check` pipeline on one file, through the CLI as a user runs it:
// reading, loading, launch detection, job building, derivation, every rule,
// and a renderer. The first byte picks the file kind and the options; the
// rest is the file. Exit code 3 (an internal error) counts as a crash.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fuzz/fuzz_support.h"
#include "lint/cli/cli.h"
#include "rules/registry.h"

using namespace mblint;

namespace {

// Per-process scratch directory (libFuzzer's -fork/-jobs workers each get
// one), removed when the process exits normally.
struct ScratchDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("mblint-fuzz-" + std::to_string(getpid()));
  ScratchDir() { std::filesystem::create_directories(path); }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

const std::filesystem::path& scratch() {
  static const ScratchDir dir;
  return dir.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Selected input = fuzz::select(data, size);
  static const char* const kNames[] = {"job.yaml", "launch.sh", "job.sbatch", "config.yml"};
  static const std::vector<std::vector<std::string>> kOptions = {
      {},
      {"--recipe", "llama3_8b_pretrain_config"},
      {"--dialect", "megatron-lm"},
      {"--dialect", "nemo"},
      {"--format", "json"},
      {"--format", "sarif", "--nodes", "2"},
      {"--format", "github", "--set", "model.tensor_model_parallel_size=3"},
      {"--recipe", "deepseek_v3_pretrain_config", "--format", "json"},
  };
  const std::string name = kNames[input.selector & 3];
  std::ofstream(scratch() / name, std::ios::binary | std::ios::trunc) << input.text;
  std::vector<std::string> args = {"check", name};
  const auto& options = kOptions[(input.selector >> 2) % kOptions.size()];
  args.insert(args.end(), options.begin(), options.end());
  std::ostringstream out, err;
  CliEnvironment env{out, err, false, [](const std::string&) { return std::optional<std::string>(); }, scratch()};
  if (run_cli(args, all_rules(), env) == kExitInternal) __builtin_trap();
  return 0;
}
