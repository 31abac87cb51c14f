// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kScriptSyntax = {
    .code = "MB005",
    .name = input_rule::kScriptSyntax.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kScriptSyntax.severity,
    .summary = "the launch script has a shell syntax error",
    .doc = R"md(mblint reads launch scripts as bash does, without running them. An unterminated quote,
`$(`, `${` or heredoc makes bash itself fail (or swallow the rest of the script), so it is
an error; mblint reports where the construct starts and reads on where it can. Broken line
continuations are warnings: a `\` followed by spaces escapes the space, not the newline, and a
continuation into an empty line ends the command there, so the options on the next lines run
as a command of their own; a `\` at the very end of the file is accepted by bash but usually
means the last line was lost.)md",
    .bad = {"launch.sh",
     "#!/bin/bash\nexport NCCL_DEBUG=\"INFO\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config\n",
     "launch.sh"},
    .good = {.content =
     "#!/bin/bash\nexport NCCL_DEBUG=\"INFO\"\ntorchrun --nproc-per-node 2 scripts/training/run_recipe.py --recipe llama3_8b_pretrain_2gpu_h100_bf16_config\n"},
    .check = nullptr,
};

}  // namespace mblint
