// Alibaba ChatLearn's RL trainer (`python chatlearn_entrypoint.py grpo
// --config-file chatlearn_configs/grpo_megatron.yaml key=value ...`, as
// Pai-Megatron-Patch runs it): the Megatron policy trainer's settings are
// models.policy_trainer.* and the batch runtime_args.train_*_batch_size,
// handed to Megatron-LM's parser, whose defaults fill what they leave out.
#pragma once

#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/mapped_string.h"

namespace mblint {

// The policy trainer's settings in `root` (the config file with the
// overrides applied) as Megatron-LM flags, each located where it was
// written; `command` locates what is unknown.
std::vector<MappedString> chatlearn_megatron_words(const ConfigValue& root, Span command);

}  // namespace mblint
