// NeMo 1.x and NeMo-Framework-Launcher configs: a top-level `trainer:`
// (num_nodes, devices, precision) beside a `model:` whose parallel, shape
// and batch keys are Megatron's under NeMo's names. They are mapped onto
// Megatron Bridge's key space so the same rules apply.
//
// Launcher files refer to themselves through the config group they are
// mounted at (`${training.model.tensor_model_parallel_size}`, also
// `fine_tuning.`, `peft.`, `evaluation.`, ...); those references are
// resolved against the file itself. Files that take their model from a
// `.nemo` checkpoint (`restore_from_path`, PEFT and Aligner overlays) leave
// whatever they do not set unknown.
#pragma once

#include "lint/base/config_value.h"
#include "lint/model/job.h"

namespace mblint {

struct NemoConfig {
  ConfigValue config;  // a Map in Bridge's key space
  Cluster cluster;     // trainer.num_nodes x trainer.devices
  // An inference or serving config (a top-level `inference:` section): its
  // batch keys size the parallel set-up, not a training step, and are not
  // mapped.
  bool inference = false;
};

// Top-level `trainer` and `model` mappings, and nothing that marks another
// framework (NeMo-RL's `policy`, verl's `actor_rollout_ref`, Megatron-LM's
// MODEL_ARGS, a Bridge dump's `_target_`).
bool is_nemo_config(const ConfigValue& root);

// `root` is the file as loaded (OmegaConf typing); interpolations are
// resolved on a copy.
NemoConfig read_nemo_config(const ConfigValue& root);

// NeMo's values for what a training config leaves unset (TP, PP, CP and EP
// 1, no sequence parallelism, no virtual pipeline, a dense model, ETP = TP).
// A config restored from a checkpoint gets none: its missing values are the
// checkpoint's.
void apply_nemo_defaults(Job& job);

}  // namespace mblint
