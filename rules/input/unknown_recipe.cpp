// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kUnknownRecipe = {
    .code = "MB007",
    .name = input_rule::kUnknownRecipe.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kUnknownRecipe.severity,
    .summary = "the recipe name is not in mblint's catalog",
    .doc = R"md(mblint knows the default parallelism, batch, sequence and model of Megatron Bridge's library and
performance recipes (and their legacy short names). A name it does not know is either a typo -
`run_recipe.py` would stop with an unknown recipe - or a recipe newer than mblint's catalog; in
both cases the values the recipe sets are unknown to mblint, and checks that need them stay
silent. The message suggests the closest known names.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\ntorchrun --nproc-per-node 8 scripts/training/run_recipe.py --recipe llama3_70b_pretrain_confg\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config\n"},
    .check = nullptr,
};

}  // namespace mblint
