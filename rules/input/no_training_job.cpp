// Rule metadata for an input problem that the job builder finds; the check
// lives with the loader (lint/resolve/job_builder.cpp), the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kNoTrainingJob = {
    .code = "MB031",
    .name = input_rule::kNoTrainingJob.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kNoTrainingJob.severity,
    .summary = "a file named for checking holds no training launch mblint can read: nothing was checked",
    .doc = R"md(A launch script named on the command line (or by a pre-commit hook) in which mblint finds no
training launch, or a YAML file that `--dialect` forces into a dialect whose config it does not
hold, would otherwise end in `no problems found`: a quiet run that checked nothing. This note
says so instead, like ShellCheck's SC1090 for a file it cannot follow, and lists the commands
that may hand the job on to something mblint does not read: a sourced file, `eval`, another
script, a command held in a variable whose value is not known, a launcher such as `deepspeed`,
`mpirun` or `ray job submit`, or a Python program that is not a known entry point.

mblint reads `torchrun`, `python -m torch.distributed.run`/`launch`, `srun` and plain `python`
launches of Megatron-LM's `pretrain_*.py`, Megatron Bridge's `run_recipe.py` and
`scripts/training/train.sh`, and scripts that take `--config-file`. Files found by walking a
directory are not reported: a tree holds many scripts that launch nothing.)md",
    .bad = {"prepare.sh", "#!/bin/bash\nsource ./models/llama.sh\neval \"$LAUNCH\"\n", "prepare.sh"},
    .good = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py --recipe "
     "llama3_8b_pretrain_2gpu_h100_bf16_config\n",
     "launch.sh"},
    .check = nullptr,
};

}  // namespace mblint
