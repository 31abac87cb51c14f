// Rule metadata for an input problem that the loaders find; the check lives
// with the loader, the documentation here.
#include "lint/base/input_rules.h"
#include "lint/rule/rule.h"

namespace mblint {

extern const RuleInfo kDuplicateKey = {
    .code = "MB003",
    .name = input_rule::kDuplicateKey.name,
    .group = RuleGroup::Input,
    .severity = input_rule::kDuplicateKey.severity,
    .summary = "a YAML mapping sets the same key twice",
    .doc = R"md(OmegaConf, which loads Megatron Bridge's `--config-file` overrides, refuses a file with a
repeated key ("found duplicate key"): an error. PyYAML (full dumps) and yq (Megatron-LM test
configs) silently keep the last value instead, which hides the first one: a warning there.)md",
    .bad = {"override.yaml",
     "train:\n  global_batch_size: 256\n  micro_batch_size: 1\n  global_batch_size: 512\n",
     "override.yaml"},
    .good = {.content = "train:\n  global_batch_size: 512\n  micro_batch_size: 1\n"},
    .check = nullptr,
};

}  // namespace mblint
