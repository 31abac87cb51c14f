// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kOverrideSyntax = {
    .code = "MB002",
    .name = input_rule::kOverrideSyntax.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kOverrideSyntax.severity,
    .summary = "a Hydra override that Hydra or Megatron Bridge rejects",
    .doc = R"md(Megatron Bridge applies trailing `key=value` arguments with Hydra's override parser in
OmegaConf struct mode (hydra-core 1.3.2). Hydra rejects, with an exact column: comments (`#`),
bracket keys (`a[0]=x`; write `a.0=x`), spaces around `=`, config-group syntax (`a@b=x`,
`a/b=x`), and `key=value` on a key the config does not have (`+key=value` adds one, `++` adds or
replaces). Bridge then fails on sweeps (`a=1,2`) and functions (`choice(...)`): quote a value
that contains commas (`dataset.split="99990,8,2"`, in a shell `'dataset.split="99990,8,2"'`) or
escape them (`99990\,8\,2`). An unquoted `None` is the string "None" in Hydra's grammar, not
null: write `null`.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n    dataset.split=99990,8,2\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py \\\n    --recipe llama3_8b_pretrain_2gpu_h100_bf16_config \\\n    'dataset.split=\"99990,8,2\"'\n"},
    .check = nullptr,
};

}  // namespace mblint
