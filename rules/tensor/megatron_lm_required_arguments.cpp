// Megatron-LM's argparse leaves the model's shape and its position range
// None; validate_args then stops the job before anything is built.
#include <algorithm>

#include "lint/load/dialects/megatron_lm_args.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMegatronLmRequiredArguments;

namespace {

// Argparse's None: no flag, no opaque word that may hold it, no checkpoint
// that fills it (--use-checkpoint-args).
bool left_none(const Job& job, std::string_view path) {
  SettingValue setting = read_setting(job, path);
  const ConfigValue* node = setting.node();
  return setting.source == SettingSource::ArgparseDefault && node && node->is_null();
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!megatron_lm_validates_flags(job)) return;
  // validate_args's required_args, in its order (T5's --encoder-num-layers
  // already stands for --num-layers in the resolved job).
  std::vector<std::string> missing;
  for (std::string_view path : megatron_lm_required_paths()) {
    if (left_none(job, path)) missing.push_back(setting_name(job, path));
  }
  if (missing.empty()) return;
  std::string names = join_names(missing);
  std::string first = missing.front().substr(2);  // argparse's attribute name
  std::replace(first.begin(), first.end(), '-', '_');
  Diagnostic diag = make_diagnostic(
      kMegatronLmRequiredArguments,
      fmt::format("{} {} not given: {} stops in validate_args (\"{} argument is None\") before the model is built",
                  names, missing.size() == 1 ? "is" : "are", job.megatron_lm_script, first),
      first_span(job, {job.launch_span, make_span(job.primary, 0, 0)}));
  std::vector<Fix> fixes;
  Quantity seq = config_int(job, "model.seq_length");
  bool only_positions = missing.size() == 1 && missing.front() == "--max-position-embeddings";
  std::string help = fmt::format("pass {}", names);
  if (std::find(missing.begin(), missing.end(), "--max-position-embeddings") != missing.end() && seq.known()) {
    help += fmt::format(" (--max-position-embeddings at least the sequence length, {})", *seq);
    diag.notes.push_back(note_for(seq));
    if (only_positions) fixes.push_back(int_fix(job, config_int(job, "model.max_position_embeddings"), *seq));
  }
  report(out, std::move(diag), help, std::move(fixes));
}

}  // namespace

extern const RuleInfo kMegatronLmRequiredArguments = {
    .code = "MB212",
    .name = "megatron-lm-required-arguments",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "Megatron-LM needs --num-layers, --hidden-size, --num-attention-heads and --max-position-embeddings",
    .doc = R"md(Megatron-LM's argument parser has no default for the model's shape: `--num-layers`,
`--hidden-size`, `--num-attention-heads` and `--max-position-embeddings` are None unless given, and
`validate_args` asserts each is set (`_check_arg_is_not_none`, "max_position_embeddings argument
is None"; `megatron/training/arguments.py`, the same list in every Megatron-Core release from
core_v0.6 to 2a75ac12c54b). The job stops at start-up, after its allocation waited in the queue.
`--max-position-embeddings` is the one most often left out: with rotary embeddings it is not
used for a position table, but it is still required, and it must be at least `--seq-length`
(`max-position-embeddings-below-seq-length`).

Not reported where the value may come from elsewhere: `--encoder-num-layers` (T5) stands in for
`--num-layers`; a hybrid layer pattern gives the layer count; `--use-checkpoint-args` fills them
from the checkpoint; a word mblint cannot read among the arguments may hold them; `--yaml-cfg`
replaces the command line. Only Megatron-LM's own scripts and functional-test configs are
checked (a wrapper such as slime or Megatron-DeepSpeed parses the arguments itself).)md",
    .bad = {"train.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
            "  --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 256\n",
            "train.sh"},
    .good = {.content = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
                        "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 \\\n"
                        "  --micro-batch-size 1 --global-batch-size 256\n"},
    .check = check,
    .checks = "MC B9",
};

}  // namespace mblint
