// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kEntryPointArgument = {
    .code = "MB006",
    .name = input_rule::kEntryPointArgument.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kEntryPointArgument.severity,
    .summary = "an argument the training entry point rejects",
    .doc = R"md(`scripts/training/run_recipe.py` parses its own options with argparse (`allow_abbrev=False`)
and takes everything else as `KEY=VALUE` overrides: any other dash option ("Unknown option",
for example `--config-file`, which it does not have) and any word without `=` ("Expected
override in KEY=VALUE form") stop it, and so does a convenience flag whose value is not of
its type (`-tp four`).)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --config-file conf/extra.yaml\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config train.train_iters=100\n"},
    .check = nullptr,
};

}  // namespace mblint
