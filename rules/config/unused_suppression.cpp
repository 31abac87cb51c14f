// Found by the suppression step (lint/engine/suppression.cpp), not by a check: a
// suppression that hides nothing is stale, and a misspelt rule name hides
// nothing silently.
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kUnusedSuppression = {
    .code = "MB090",
    .name = "unused-suppression",
    .group = RuleGroup::Config,
    .severity = Severity::Warning,
    .summary = "an inline `# mblint: disable=` suppression matches no finding, or names no mblint rule",
    .doc = R"md(A `# mblint: disable=RULE -- reason` comment hides the findings of `RULE` on its own line (at
the end of a line) or on the next line that is not blank or a comment (alone on a line; in a
launch script that line and its `\` continuation lines, the whole command);
`# mblint: disable-file=RULE -- reason` hides them in the whole file. Rules are named by name
(`cp-seq-length-divisibility`) or code (`MB401`), several separated by commas.

A suppression that matches no finding is reported: the problem it was written for is gone (or
moved to another line), and a stale suppression would silently hide the next, different finding
of the same rule there. A name that is no mblint rule (a typo) is reported with the closest rule
name, and so is a `# mblint:` comment that is neither `disable=` nor `disable-file=`.

Remove the rule name from the comment, or the comment. To keep a suppression that may or may
not match (a file shared by several jobs), suppress this rule too:
`# mblint: disable-file=unused-suppression -- shared by jobs with different layouts`.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: 8  # mblint: disable=tp-crosses-nvlink-domain -- 8-GPU NVLink\n",
     "override.yaml --recipe llama3_8b_pretrain_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "model:\n  tensor_model_parallel_size: 8\n"},
    .check = nullptr,
    .checks = "",
};

}  // namespace mblint
