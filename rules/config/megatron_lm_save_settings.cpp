// Megatron-LM checks how often it saves before it trains: with --save it
// asserts a positive --save-interval, a retain interval that is a multiple of
// it, and no parameter-only saves under --overlap-param-gather.
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMegatronLmSaveSettings;

namespace {

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!megatron_lm_validates_flags(job)) return;
  const ConfigValue* save = config_node(job, "checkpoint.save");
  if (!save || save->is_null()) return;
  Span save_span = first_span(job, {primary_span(save->where), save->where.key});
  SettingValue interval_setting = read_setting(job, "checkpoint.save_interval");
  const ConfigValue* interval_node = interval_setting.node();
  if (interval_setting.source == SettingSource::ArgparseDefault && interval_node && interval_node->is_null()) {
    report(out,
           make_diagnostic(kMegatronLmSaveSettings,
                           fmt::format("--save is given without --save-interval: {} asserts `args.save_interval is "
                                       "not None` in validate_args (a bare AssertionError at start-up)",
                                       job.megatron_lm_script),
                           save_span),
           "pass --save-interval N (iterations between checkpoints)");
    return;
  }
  Quantity interval = config_int(job, "checkpoint.save_interval");
  if (!interval.known()) return;
  if (*interval <= 0) {
    report(out,
           finding(kMegatronLmSaveSettings,
                   fmt::format("--save-interval {} with --save: validate_args asserts `args.save_interval > 0`",
                               *interval),
                   {&interval}),
           "pass a positive --save-interval");
    return;
  }
  Quantity retain = config_int(job, "megatron_lm.save_retain_interval");
  if (retain.known() && (*retain <= 0 || *retain % *interval != 0)) {
    report(out,
           finding_at(kMegatronLmSaveSettings,
                      fmt::format("--save-retain-interval {} is not a positive multiple of --save-interval {}: "
                                  "validate_args asserts it",
                                  *retain, *interval),
                      retain, {&retain, &interval}),
           fmt::format("use a multiple of {} for --save-retain-interval", *interval));
  }
  Quantity params = config_int(job, "megatron_lm.save_params_interval");
  Setting overlap = read_flag(job, "ddp.overlap_param_gather");
  if (params.known() && overlap.value.value_or(false)) {
    Diagnostic diag = finding_at(kMegatronLmSaveSettings,
                                 "--save-params-interval with --overlap-param-gather: validate_args asserts "
                                 "`not args.overlap_param_gather` when it saves the parameters alone",
                                 params, {&params});
    diag.notes.push_back(note_for(overlap));
    report(out, std::move(diag), "drop --save-params-interval or --overlap-param-gather");
  }
}

}  // namespace

extern const RuleInfo kMegatronLmSaveSettings = {
    .code = "MB024",
    .name = "megatron-lm-save-settings",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "Megatron-LM with --save needs a positive --save-interval, a retain interval that is a multiple of "
               "it, and no --save-params-interval under --overlap-param-gather",
    .doc = R"md(With `--save DIR`, Megatron-LM's `validate_args` asserts before training
(`megatron/training/arguments.py`, core_v0.6 to 2a75ac12c54b):

* `args.save_interval is not None`: `--save-interval` (alias `--persistent-save-interval`) has no
  default, so a launch that names a save directory and no interval stops with a bare
  `AssertionError`;
* `args.save_interval > 0`;
* `--save-retain-interval`, when given, is positive and a multiple of `--save-interval`;
* `--save-params-interval` (saving the parameters alone) is not combined with
  `--overlap-param-gather`.

Only Megatron-LM's own scripts and functional-test configs are checked (ms-swift, for one, has
its own default interval); a `--save-interval` that a word mblint cannot read may hold is not
reported missing.)md",
    .bad = {"train.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
            "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 \\\n"
            "  --micro-batch-size 1 --global-batch-size 256 --save /checkpoints/run1\n",
            "train.sh"},
    .good = {.content = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
                        "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 \\\n"
                        "  --micro-batch-size 1 --global-batch-size 256 --save /checkpoints/run1 --save-interval 1000\n"},
    .check = check,
    .checks = "MC K12",
};

}  // namespace mblint
