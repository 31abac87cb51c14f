// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kYamlSyntax = {
    .code = "MB001",
    .name = input_rule::kYamlSyntax.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kYamlSyntax.severity,
    .summary = "the YAML file cannot be parsed",
    .doc = R"md(A YAML file that does not parse stops Megatron Bridge before anything else: `OmegaConf.load`
(for `--config-file` overrides) and PyYAML's `safe_load` (for full ConfigContainer dumps)
raise, and so does a file that is not UTF-8 or holds a second document. mblint reports the
position the parser stopped at and keeps checking the parts it could read.)md",
    .bad = {"override.yaml",
     "model:\n  tensor_model_parallel_size: [2, 4\n",
     "override.yaml"},
    .good = {.content = "model:\n  tensor_model_parallel_size: 2\n"},
    .check = nullptr,
};

}  // namespace mblint
