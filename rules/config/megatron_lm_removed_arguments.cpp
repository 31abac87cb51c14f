// Megatron-LM still parses the flags it replaced long ago, so that
// validate_args can stop the job and name the replacement: an older script
// passes argparse and then fails (or, for --checkpoint-activations, exits 0
// without training).
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMegatronLmRemovedArguments;

namespace {

// mblint's Megatron-LM releases before core_v0.12.0 form one group
// (v2.0 to core_v0.11.0), which holds releases on both sides of v2.6.
constexpr Version kFirstSplitRelease{0, 12, 0};

struct RemovedArgument {
  const char* path;         // where the reader keeps it
  const char* flag;         // as written
  const char* replacement;  // the flag(s) that replace it
  const char* new_path;     // the setting the replacement sets ("" when it is no one flag's)
  const char* upstream;     // what validate_args does
};

constexpr RemovedArgument kRemoved[] = {
    {"megatron_lm.batch_size", "--batch-size", "--micro-batch-size", "train.micro_batch_size",
     "asserts \"--batch-size argument is no longer valid, use --micro-batch-size instead\""},
    {"megatron_lm.warmup", "--warmup", "--lr-warmup-fraction", "",
     "asserts \"--warmup argument is no longer valid, use --lr-warmup-fraction instead\""},
    {"megatron_lm.model_parallel_size", "--model-parallel-size", "--tensor-model-parallel-size",
     "model.tensor_model_parallel_size",
     "asserts \"--model-parallel-size is no longer valid, use --tensor-model-parallel-size instead\""},
    // Full recompute of every layer, what the flag did: `exit()` ends every
    // rank with status 0 before the model is built.
    {"megatron_lm.checkpoint_activations", "--checkpoint-activations",
     "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1", "",
     "prints \"--checkpoint-activations is no longer valid, use --recompute-activations, or, for more control, "
     "--recompute-granularity and --recompute-method.\" and exits with status 0: the job ends without training and "
     "reports success"},
};

Fix rename_fix(const Job& job, const RemovedArgument& removed, const ConfigValue& value) {
  Fix fix = advice_fix(fmt::format("replace {} with {}", removed.flag, removed.replacement));
  const Provenance& where = value.where;
  bool activations = std::string_view(removed.flag) == "--checkpoint-activations";
  // --warmup took iterations, its replacement a fraction: no edit says the same.
  if (!*removed.new_path && !activations) return fix;
  bool replaced_elsewhere = *removed.new_path && config_node(job, removed.new_path) &&
                            config_node(job, removed.new_path)->where.layer != Layer::SchemaDefault;
  if (replaced_elsewhere || !where.key.valid() || !where.via.empty()) return fix;
  fix.edits.push_back(TextEdit{where.key, removed.replacement});
  if (activations) {
    fix.changes = {{removed.path, "false"}, {"model.recompute_granularity", "full"},
                   {"model.recompute_method", "uniform"}, {"model.recompute_num_layers", "1"}};
  } else {
    fix.changes.push_back(SettingChange{removed.new_path, "", removed.path});  // the value moves
  }
  return fix;
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!megatron_lm_validates_flags(job)) return;
  for (const RemovedArgument& removed : kRemoved) {
    const ConfigValue* value = config_node(job, removed.path);
    if (!value) continue;
    if (value->kind == ValueKind::Bool && !value->boolean) continue;
    Diagnostic diag = make_diagnostic(
        kMegatronLmRemovedArguments,
        fmt::format("{} is no longer accepted: {} {}", removed.flag, job.megatron_lm_script, removed.upstream),
        first_span(job, {primary_span(value->where), value->where.key}));
    std::string help = fmt::format("write {} instead", removed.replacement);
    if (std::string_view(removed.flag) == "--checkpoint-activations") {
      help += " (what the flag did), or --recompute-activations for selective recompute";
      // Megatron-LM v2.0 and v2.5 still ran it (the exit came in v2.6), and
      // so do forks of that age (Megatron-DeepSpeed): judged as an error only
      // for a release known to be newer than mblint's group of old releases.
      if (!job.versions.megatron_core_given || job.versions.megatron_core < kFirstSplitRelease) {
        diag.severity = Severity::Warning;
        diag.message += fmt::format(
            " (Megatron-LM from v2.6; v2.0, v2.5 and forks of them such as Megatron-DeepSpeed still take the flag{})",
            job.versions.megatron_core_given ? "" : ": pass --megatron-core-version to have it judged");
      }
    }
    report(out, std::move(diag), std::move(help), {rename_fix(job, removed, *value)});
  }
}

}  // namespace

extern const RuleInfo kMegatronLmRemovedArguments = {
    .code = "MB023",
    .name = "megatron-lm-removed-arguments",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "Megatron-LM flags replaced long ago: --batch-size, --warmup, --model-parallel-size, "
               "--checkpoint-activations",
    .doc = R"md(Megatron-LM's parser still accepts four flags of its early releases, so that `validate_args`
can name their replacement (`megatron/training/arguments.py`, "Deprecated arguments", every
Megatron-Core release to 2a75ac12c54b):

| flag | what happens | write instead |
|---|---|---|
| `--batch-size` | assert: "--batch-size argument is no longer valid, use --micro-batch-size instead" | `--micro-batch-size` |
| `--warmup` | assert: "use --lr-warmup-fraction instead" | `--lr-warmup-fraction` (or `--lr-warmup-iters` / `--lr-warmup-samples`) |
| `--model-parallel-size` | assert: "use --tensor-model-parallel-size instead" | `--tensor-model-parallel-size` |
| `--checkpoint-activations` | since v2.6: prints a message and calls `exit()`: every rank ends with status 0 before training, so the launcher reports success (an error with `--megatron-core-version` 0.12 or newer; a warning otherwise, as v2.0, v2.5 and forks of them such as Megatron-DeepSpeed take the flag) | `--recompute-granularity full --recompute-method uniform --recompute-num-layers 1` (what it did, one layer per checkpoint), or `--recompute-activations` |

`unknown-flag` cannot report them (the parser knows them); scripts copied from older examples
still carry them. Only Megatron-LM's own scripts and functional-test configs are checked.)md",
    .bad = {"train.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
            "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 \\\n"
            "  --batch-size 1 --global-batch-size 256\n",
            "train.sh"},
    .good = {.content = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
                        "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 \\\n"
                        "  --micro-batch-size 1 --global-batch-size 256\n"},
    .check = check,
    .checks = "MC L5, MC I1",
};

}  // namespace mblint
