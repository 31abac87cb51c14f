// NeMo-RL's trainers (examples/run_dpo.py, run_grpo*.py, run_sft.py, ...):
// `--config FILE` plus Hydra-style `key=value` overrides. The file inherits
// from the files its `defaults:` names (a path or a list of paths, relative
// to the file; NeMo-RL's load_config_with_inheritance merges them first, in
// order). When the policy trains with Megatron (policy.megatron_cfg.enabled),
// its sizes are Megatron's and are handed on as Megatron-LM flags, located
// at the YAML value or the override that set them.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/mapped_string.h"
#include "lint/model/job.h"

namespace mblint {

// One file of the chain read as YAML; nullopt with `why` when it cannot be.
using ReadNemoRlYaml =
    std::function<std::optional<ConfigValue>(const std::filesystem::path& path, Span named_at, std::string& why)>;

struct NemoRlConfig {
  ConfigValue root;  // the merged chain with the overrides applied and interpolations resolved
  std::vector<Unresolved> unresolved;  // a file of the chain not read, an override not understood
};

// The file at `path` (named at `named_at`), the files it inherits from (at
// most 8 levels; a file that inherits from itself is reported), then
// `overrides` in order.
NemoRlConfig read_nemo_rl_config(const std::filesystem::path& path, Span named_at,
                                 const std::vector<MappedString>& overrides, const ReadNemoRlYaml& read);

// `key=value`, `+key=value`, `~key` applied in order, as NeMo-RL and
// Hydra do (OmegaConf's dotted update; values typed as YAML scalars). With
// a `prefix` ("training."), only the keys under it, without it.
void apply_dotted_overrides(ConfigValue& root, const std::vector<MappedString>& overrides,
                            std::string_view prefix = {});

struct NemoRlPolicy {
  // policy.megatron_cfg.enabled; nullopt when not known (then every size is
  // unknown). False: the policy trains with DTensor, not Megatron.
  std::optional<bool> megatron;
  std::vector<MappedString> arguments;  // Megatron-LM flags standing for the policy's settings
  std::optional<MappedString> model;    // policy.model_name
  Span model_statement;
  Cluster cluster;                      // cluster.num_nodes x cluster.gpus_per_node
  // On/off flags whose value the config does not make known: their settings
  // are unknown, not Megatron-LM's defaults.
  std::vector<std::string_view> unknown_flags;
};

// `command`: where a value no file sets is reported.
NemoRlPolicy nemo_rl_policy(const ConfigValue& root, Span command);

}  // namespace mblint
