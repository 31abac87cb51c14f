// The resolved job: everything mblint learned about one training launch,
// in Megatron Bridge's key space, with provenance for every value.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/mapped_string.h"
#include "lint/base/source.h"
#include "lint/base/version.h"
#include "lint/model/catalog.h"
#include "lint/model/rule_selection.h"
#include "lint/model/thresholds.h"

namespace mblint {

// What a file given to mblint turned out to be (detected from content).
enum class InputKind {
  LaunchScript,        // bash / sbatch
  BridgeOverrideYaml,  // partial ConfigContainer (--config-file)
  BridgeDump,          // full ConfigContainer with _target_ keys
  MegatronLmTestConfig,  // Megatron-LM functional test model_config.yaml (MODEL_ARGS)
  NemoYaml,            // NeMo 1.x / NeMo-Framework-Launcher trainer + model YAML
  NotAConfig,          // YAML that is none of the above: skipped
};

// Whose semantics apply. The config is always held in Megatron Bridge's key
// space; the dialect says which program validates it (Megatron-LM's
// validate_args asserts where Bridge silently rewrites, and the reverse).
enum class Dialect {
  Bridge,      // Megatron Bridge ConfigContainer (recipes, run_recipe.py, --config-file)
  MegatronLM,  // Megatron-LM command-line arguments (pretrain_gpt.py --tensor-model-parallel-size ...)
  NeMo,        // NeMo 1.x Hydra configs (trainer.num_nodes, model.*)
};

std::string_view dialect_name(Dialect dialect);

// The program the launch runs.
enum class EntryPoint {
  None,              // no launch: a YAML file linted on its own
  RunRecipe,         // scripts/training/run_recipe.py
  TrainSh,           // scripts/training/train.sh (-> setup_experiment.py)
  ConfigFileScript,  // an example/tutorial/in-house script: --config-file + overrides
  MegatronLM,        // Megatron-LM's pretrain_*.py with --flag arguments
  Unknown,           // a launch mblint does not understand
};

std::string_view entry_point_name(EntryPoint entry);

// An integer learned from a launcher or the command line.
struct LocatedInt {
  std::optional<int64_t> value;
  Provenance where;
  std::string unknown_because;  // "$SLURM_NNODES is not known", when not known
};

// What each launcher layer asked for, before they are combined into one
// allocation (for rules that compare them, e.g. torchrun vs Slurm).
struct LauncherRequests {
  bool torchrun = false;
  LocatedInt torchrun_nnodes;
  LocatedInt torchrun_nproc_per_node;
  bool srun = false;
  LocatedInt slurm_nodes;            // #SBATCH / srun -N
  LocatedInt slurm_ntasks;           // #SBATCH / srun -n
  LocatedInt slurm_ntasks_per_node;  // #SBATCH / srun --ntasks-per-node
  LocatedInt slurm_gpus_per_node;    // --gpus-per-node or the count of --gres=gpu:[type:]N
};

struct Cluster {
  LocatedInt nodes;
  LocatedInt gpus_per_node;  // ranks per node
  LocatedInt world_size;     // a total given directly (srun -n, --ntasks)
  std::string gpu;           // catalog GPU name, "" when unknown
  Provenance gpu_where;
  LauncherRequests requests;
};

// An environment variable the training processes will see.
struct EnvSetting {
  std::string name;
  std::optional<std::string> value;  // nullopt: set, but to something unknown
  Provenance where;
};

// Something the job builder could not resolve: a recipe named by `$1`, a
// `--config-file` path held in an unknown variable, a command it did not
// follow (`source x.sh`, `eval`). The coverage note (lint/facts/coverage.h) says
// what it left unknown and how to supply it.
struct Unresolved {
  std::string what;    // "recipe", "config file", "command"
  std::string why;     // "the name comes from $1, which is not known here"
  std::string supply;  // "pass --recipe NAME"
  Span where;          // where it was written (invalid: nowhere)
};

struct Versions {
  Version bridge = kNewestBridge;
  Version megatron_core = kNewestMegatronCore;
  bool bridge_given = false;  // from --bridge-version rather than the default
  bool megatron_core_given = false;
};

struct Job {
  FileId primary = kNoFile;  // the file that defines the job
  InputKind kind = InputKind::NotAConfig;
  Dialect dialect = Dialect::Bridge;
  EntryPoint entry = EntryPoint::None;
  Span launch_span;          // the launcher command as written
  std::vector<FileId> files;  // every file the job read
  // The Megatron-LM script whose own argparse and validate_args take the
  // flags as written ("pretrain_gpt.py", "the test's script (gpt family)");
  // empty under a wrapper (slime, deepspeed), a program mblint does not know,
  // or flags no Megatron-LM release has (a fork's).
  std::string megatron_lm_script;

  // The recipe, when one was selected. `recipe` is null when the name is not
  // in mblint's catalog.
  std::string recipe_name;
  Provenance recipe_where;
  const Recipe* recipe = nullptr;

  ConfigValue config;           // effective config (a Map)
  bool config_complete = false;  // a full dump: unset keys have dataclass defaults
  // Keys spelled `model.transformer.*` (builder-backed Llama configs) are
  // stored under `model.*`; this remembers that the file used that spelling.
  bool builder_backed_model = false;

  Cluster cluster;
  std::vector<EnvSetting> env;
  Versions versions;
  // False for a run that only does inference (a Megatron-LM functional test
  // with `MODE: inference`, an inference script): checks that only fail in
  // training (the MoE forward pass with TP and no SP) do not apply.
  bool trains = true;

  std::vector<Diagnostic> problems;  // input problems found while loading
  std::vector<Unresolved> unresolved;  // what the builder could not follow or resolve
  // Found while loading, but errors only if the file is a Megatron Bridge
  // config: the rule named in each reports it once is_bridge_job agrees
  // (interpolations OmegaConf cannot resolve, lint/resolve/interpolation_check.h).
  std::vector<Diagnostic> bridge_problems;

  // is_bridge_job's answer (rules/support/config_support.h), kept by the first rule
  // that asks: its census of the config's keys then runs once per job, not
  // once per rule. Jobs do not change once their checks run.
  mutable std::optional<bool> bridge_file_plausible;
};

// One rule-independent fact about the lint run: where mblint's own command
// line lives, so values from it can be located there.
struct CommandLineValue {
  std::string text;
  Span span;  // in the synthetic "<command-line>" source
};

struct YamlCache;  // lint/load/yaml/yaml_patch.h

struct LintOptions {
  std::vector<std::string> paths;
  std::filesystem::path base_dir;  // relative paths resolve here (the cwd)
  std::optional<CommandLineValue> recipe;
  std::optional<CommandLineValue> nodes;
  std::optional<CommandLineValue> gpus_per_node;
  std::optional<CommandLineValue> gpu;
  std::vector<CommandLineValue> sets;  // --set key=value, Hydra syntax
  std::optional<CommandLineValue> bridge_version;
  std::optional<CommandLineValue> megatron_core_version;
  std::optional<CommandLineValue> dialect;  // bridge, megatron-lm, nemo; detected when absent
  // `check script.sh -- A B` / `--script-args "A B"`: a launch script's
  // positional parameters; nullopt: unknown.
  std::optional<std::vector<CommandLineValue>> script_args;
  FileId command_line_file = kNoFile;
  Thresholds thresholds;
  // YAML parses kept between runs (the language server's); null: parse every file.
  YamlCache* yaml_cache = nullptr;
  // Threads that parse the YAML files of a run ahead of the job builder
  // (check --jobs); 1 parses each file when its job is built.
  unsigned threads = 1;
  // Project config (lint/resolve/project_config.h): --config FILE, or --no-config to
  // ignore every .mblint.yaml; otherwise the nearest one above each file.
  std::optional<CommandLineValue> project_config;
  bool no_project_config = false;
  // A launch script linted for a .mblint.yaml `context` entry runs this YAML
  // as its --config-file (the script names it through a variable).
  std::optional<std::filesystem::path> launch_config_file;
  // Text to lint instead of a file's bytes on disk, keyed by canonical path:
  // `check --fix` re-lints its edits before anything is written.
  std::map<std::filesystem::path, std::string> overlay;
  // run_lint keeps every job and its derived quantities in LintResult (the
  // language server and `estimate` read them); `check` only needs the
  // diagnostics and lets each job go once its checks ran.
  bool keep_jobs = true;
  // check --select / --ignore: the findings reported (applied after the
  // suppressions and before findings are folded by their root cause).
  RuleSelection selection;
  // Re-check each fix with every rule over the whole job; by default a rule
  // that judges sections one by one re-judges only those the fix changes
  // (lint/fix/fix_verify.h). Tests compare the two.
  bool recheck_everywhere = false;
};

}  // namespace mblint
