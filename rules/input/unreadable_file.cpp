// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kUnreadableFile = {
    .code = "MB004",
    .name = input_rule::kUnreadableFile.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kUnreadableFile.severity,
    .summary = "a file mblint was asked to check, or that a script references, cannot be read",
    .doc = R"md(A path that does not exist, a binary file or a file over 8 MiB is reported where it
was named: on mblint's command line, or at the `--config-file` argument of the launch script
that references it (looked up next to the script, then in the current directory, as the
entry points do); so is a directory given as `--config-file` (a directory on mblint's command
line is walked for the files it lints).)md",
    .bad = {"override.yaml",
     "train:\n  train_iters: 100\n",
     "override.yaml conf/missing.yaml"},
    .good = {"override.yaml",
     "train:\n  train_iters: 100\n",
     "override.yaml"},
    .check = nullptr,
};

}  // namespace mblint
