// Megatron-LM functional-test configs
// (tests/functional_tests/test_cases/**/model_config.yaml, recognised by a
// top-level MODEL_ARGS mapping). The CI harness
// (tests/functional_tests/shell_test_utils/_run_training.sh) passes the file
// through envsubst, reads it with yq and turns each MODEL_ARGS entry into
// argv words: a `true` value is the bare flag, a value in `( )` one quoted
// word, a value in `[ ]` its contents split at spaces, a value with spaces,
// `|` or parentheses one quoted word, anything else one word. This reader
// does the same, keeping each word's place in the YAML.
#pragma once

#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/load/dialects/megatron_lm_args.h"
#include "lint/model/job.h"

namespace mblint {

struct MegatronTestConfig {
  // MODEL_ARGS as argv, for read_megatron_lm_args (flag-style tests).
  MegatronArgv argv;
  // The six gpt-nemo tests hold NeMo 2 dotted overrides
  // (`trainer.strategy.tensor_model_parallel_size: 2`) instead of flags;
  // they are mapped here, in Bridge's key space.
  bool nemo_overrides = false;
  ConfigValue nemo_config;
  Cluster cluster;  // MODEL_ENV_VARS GPUS_PER_NODE, NeMo trainer.num_nodes / devices
  std::vector<EnvSetting> env;  // ENV_VARS
  bool inference = false;       // `MODE: inference`: the test runs an inference script
  // Notes: MODEL_ARGS_2.. (runs resumed from a checkpoint) are not checked.
  std::vector<Diagnostic> problems;
};

// A top-level MODEL_ARGS mapping.
bool is_megatron_lm_test_config(const ConfigValue& root);

// `root` is the file as loaded (YAML 1.2 typing, as yq reads it); with
// `args_root` the mapping that stands for MODEL_ARGS (the root itself when
// --dialect megatron-lm is given a bare `--flag: value` file).
MegatronTestConfig read_megatron_lm_test_config(const SourceSet& sources, const ConfigValue& root,
                                                const ConfigValue& args_root);

}  // namespace mblint
