// Finds the training launch in a walked script: strips wrappers (srun, uv run,
// bash -c, env, exec, nsys, numactl), reads the launcher's resources
// (torchrun, srun, #SBATCH, train.sh) and splits the entry point's arguments
// into recipe selection, config file, convenience flags and overrides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/mapped_string.h"
#include "lint/load/shell/shell.h"
#include "lint/model/job.h"

namespace mblint {

// run_recipe.py's -tp 4 / --seq_length 8192: a flag that becomes an override.
struct ConvenienceFlag {
  std::string flag;               // as written: "-tp"
  std::vector<std::string> key;   // model.tensor_model_parallel_size
  MappedString value;
  Span statement;                 // flag and value
  bool integer = false;           // argparse type=int
};

// A launch whose settings are in a file the job builder reads.
enum class LaunchConfig : uint8_t {
  None,
  // NeMo-RL's run_*.py: config_file is its --config, overrides its KEY=VALUE
  // words.
  NemoRl,
  // NeMo-Framework-Launcher's launcher_scripts/main.py: `stages=[training]`
  // and `training=gpt3/175b` choose the stage config under conf/, the
  // `training.*` overrides change it.
  NemoLauncher,
  // ms-swift's `megatron sft config.yaml`: the file holds the command line's
  // options (`expert_model_parallel_size: 4`); `arguments` are the ones after it.
  MsSwift,
  // A NeMo 1.x Hydra application (NeMo-Aligner's train_gpt_sft.py, NeMo's
  // examples): `--config-path DIR --config-name NAME` (config_dir and
  // config_file) plus `trainer.*` / `model.*` overrides.
  NemoHydra,
  // ChatLearn's chatlearn_entrypoint.py: --config-file plus
  // models.policy_trainer.* / runtime_args.* overrides (lint/load/dialects/chatlearn.h).
  ChatLearn,
};

// Launch::wrapper names that later stages act on (each framework's own
// defaults and rewrites, lint/resolve/job_builder.cpp): one spelling each.
inline constexpr std::string_view kSlimeWrapper = "slime train.py";
inline constexpr std::string_view kVerlWrapper = "verl main_ppo (Megatron actor)";
inline constexpr std::string_view kDeepSpeedWrapper = "deepspeed";
inline constexpr std::string_view kMsSwiftWrapperPrefix = "ms-swift";  // "ms-swift megatron sft"
inline constexpr std::string_view kNemoRlWrapperPrefix = "NeMo-RL";    // "NeMo-RL run_dpo.py"

struct Launch {
  EntryPoint entry = EntryPoint::Unknown;
  Span span;           // the launching command as written
  bool certain = true;
  MappedString program;  // the entry script or module as written
  // A wrapper CLI that runs the entry point with arguments of its own
  // ("ms-swift megatron sft"); empty for a direct launch.
  std::string wrapper;

  std::optional<MappedString> recipe;  // --recipe NAME
  Span recipe_statement;               // `--recipe NAME`
  std::optional<MappedString> model;   // --model STEM (run_recipe.py)
  std::optional<MappedString> mode;    // --mode
  Span model_statement;
  std::optional<MappedString> config_file;  // --config-file PATH
  std::optional<MappedString> config_dir;   // a Hydra application's --config-path
  Span config_file_statement;

  // The model named only by a Hugging Face id or checkpoint directory
  // (--hf-checkpoint, --load, ms-swift's --model), and the option.
  std::optional<MappedString> named_model;
  Span named_model_statement;

  std::vector<ConvenienceFlag> flags;
  std::vector<MappedString> overrides;  // trailing KEY=VALUE words, in order
  LaunchConfig reads = LaunchConfig::None;
  // Megatron-LM: every word after the program, for read_megatron_lm_args.
  std::vector<MappedString> arguments;

  Cluster cluster;
  std::vector<EnvSetting> env;
  std::vector<Diagnostic> problems;

  // Found in one arm of a command walked once per value of a variable the
  // script's branches set differently (ShellCommand::fork_group; 0: none).
  uint32_t fork_group = 0;
  uint32_t fork_arm = 0;
};

// Slurm environment variables that #SBATCH directives determine
// (SLURM_NNODES from --nodes, ...), for expanding the script.
ShellEnvironment slurm_environment(const std::vector<SbatchDirective>& directives);

// ms-swift's Megatron-LM options among `words` (`--expert_model_parallel_size
// 4`, `--max_length 2048`), in Megatron-LM's spelling; its own are dropped.
std::vector<MappedString> ms_swift_megatron_words(const std::vector<MappedString>& words);

// How launches are recognized beyond the entry points mblint knows.
struct LaunchReading {
  // Any Python program is a NeMo 1.x Hydra application that composes its
  // own config (MLPerf's `python -u train.py`): only for a chain known to
  // start a NeMo trainer, the MLPerf config script's run.sub.
  bool bare_hydra_apps = false;
};

// Every training launch reached in `script`, in order. `directives` give the
// allocation the launches run in.
std::vector<Launch> find_launches(const ShellScript& script,
                                  const std::vector<SbatchDirective>& directives,
                                  const ShellLimits& limits = {}, LaunchReading reading = {});

}  // namespace mblint
