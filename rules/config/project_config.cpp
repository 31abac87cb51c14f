// Rule metadata for problems in a `.mblint.yaml` project config; the check
// lives with its loader (lint/resolve/project_config.cpp), the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kProjectConfig = {
    .code = "MB020",
    .name = input_rule::kProjectConfig.name,
    .group = RuleGroup::Config,
    .severity = input_rule::kProjectConfig.severity,
    .summary = "the project config (.mblint.yaml) has an unknown key or a value of the wrong type",
    .doc = R"md(mblint reads `.mblint.yaml` from the nearest directory above each checked file (or the
file given with `--config`). A key mblint does not know, a rule name that is no rule, a GPU
type it does not know, a count that is not a positive integer or a threshold outside (0, 1]
is reported at its line and ignored, so a typo never silently changes what mblint checks:
`rules: {disable: [pipline-bubble]}` would otherwise leave the rule on without a word.
Command-line flags (`--gpu`, `--gpus-per-node`, `--recipe`, `--set`, versions) win over the
config; `--no-config` ignores it.)md",
    .bad = {".mblint.yaml",
     "cluster:\n  gpu: h100\n  gpus_per_nodes: 8\nrules:\n  disable: [pipline-bubble]\n",
     ".mblint.yaml"},
    .good = {.content = "cluster:\n  gpu: h100\n  gpus_per_node: 8\nrules:\n  disable: [pipeline-bubble]\n"},
    .check = nullptr,
};

}  // namespace mblint
