// Found by the suppression step (lint/engine/suppression.cpp): an error means the
// job fails at start-up, so hiding one must say why.
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kSuppressionWithoutReason = {
    .code = "MB091",
    .name = "suppression-without-reason",
    .group = RuleGroup::Config,
    .severity = Severity::Warning,
    .summary = "an error (the job would fail) is suppressed without a `-- reason`: the suppression is not honoured",
    .doc = R"md(Error-level findings are the ones that make Megatron fail at start-up (an assertion in
`validate()` or `validate_args`, a shape that does not divide). Hiding one is sometimes right
(mblint's view of the job is incomplete, the value is patched at run time), but the next reader
must know why. A suppression of an error-level finding therefore needs a reason after `--`:

    dataset.seq_length=8190  # mblint: disable=cp-seq-length-divisibility -- padded to 8192 by our collator

Without a reason the suppression is not honoured: the error stays, and this warning points at
the rule name in the comment. Warnings and notes may be suppressed without a reason (one is
still recommended).)md",
    .bad = {"launch.sh",
     "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 4 --nproc-per-node 8 "
     "scripts/training/run_recipe.py \\\n    --recipe llama3_70b_pretrain_config \\\n"
     "    dataset.seq_length=8190  # mblint: disable=cp-seq-length-divisibility\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\ntorchrun --nnodes 4 --nproc-per-node 8 "
     "scripts/training/run_recipe.py \\\n    --recipe llama3_70b_pretrain_config \\\n"
     "    dataset.seq_length=8190  # mblint: disable=cp-seq-length-divisibility,cp-sequence-parallel-divisibility"
     " -- padded to 8192 by our collator\n"},
    .check = nullptr,
    .checks = "",
};

}  // namespace mblint
