// How long to train is given exactly one way: train_iters, train_samples or
// num_epochs (Megatron Bridge); iterations or samples (Megatron-LM).
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kTrainingLengthInvalid;

namespace {

struct Modes {
  Field iters = {};
  Field samples = {};
  Field epochs = {};
};

std::vector<const Field*> set_modes(const Modes& modes, bool megatron_lm) {
  std::vector<const Field*> set;
  // Megatron-LM tests `if args.train_iters`: 0 counts as not given.
  bool iters = modes.iters.set() && !(megatron_lm && modes.iters.number == 0.0);
  if (iters) set.push_back(&modes.iters);
  if (modes.samples.set()) set.push_back(&modes.samples);
  if (!megatron_lm && modes.epochs.set()) set.push_back(&modes.epochs);
  return set;
}

Diagnostic conflict(const std::vector<const Field*>& set, bool megatron_lm) {
  const Quantity* primary = &set.front()->quantity;
  for (const Field* f : set) {
    if (&most_specific({primary, &f->quantity}) == &f->quantity) primary = &f->quantity;
  }
  std::string names;
  for (size_t i = 0; i < set.size(); ++i) names += (i ? " and " : "") + set[i]->quantity.name;
  Diagnostic diag = make_diagnostic(
      kTrainingLengthInvalid,
      fmt::format("{} are both set: {} needs exactly one way of giving the training length", names,
                  megatron_lm ? "Megatron-LM" : "Megatron Bridge"),
      span_for(*primary));
  for (const Field* f : set) {
    if (&f->quantity != primary) diag.notes.push_back(note_for(f->quantity));
  }
  add_notes(diag, {}, primary);
  for (const Field* f : set) {
    if (&f->quantity == primary) continue;
    diag.fixes.push_back(set_null_fix(f->quantity));
  }
  std::string drop = primary == &set.front()->quantity ? set.back()->quantity.name : set.front()->quantity.name;
  bool to_samples = primary->name == "train_samples";
  if (megatron_lm) {
    diag.help = "give only one of --train-iters and --train-samples (with the learning-rate schedule in the same "
                "unit)";
  } else {
    diag.help = fmt::format("keep {} and set {} to null{}", primary->name, drop,
                            to_samples ? "; sample-based training also needs the scheduler in samples "
                                         "(lr_warmup_samples, lr_decay_samples, lr_warmup_iters: 0)"
                                       : "");
  }
  return diag;
}

void check_positive(const Field& field, std::vector<Diagnostic>& out) {
  if (!field.set() || !field.number || *field.number > 0) return;
  Diagnostic diag = make_diagnostic(kTrainingLengthInvalid,
                                    fmt::format("{} is {}; it must be positive", field.quantity.name,
                                                format_number(*field.number)),
                                    span_for(field.quantity));
  add_notes(diag, {}, &field.quantity);
  report(out, std::move(diag),
         fmt::format("set {} to the number of {} to train", field.quantity.name,
                     field.quantity.name == "train_samples" ? "samples" : "passes over the data"));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  bool megatron_lm = job.dialect == Dialect::MegatronLM;
  if (job.dialect == Dialect::NeMo) return;  // NeMo counts max_steps in its trainer
  Modes modes{read_field(job, "train.train_iters"), read_field(job, "train.train_samples"),
              read_field(job, "train.num_epochs")};
  std::vector<const Field*> set = set_modes(modes, megatron_lm);
  if (set.size() > 1) {
    out.push_back(conflict(set, megatron_lm));
    return;
  }
  // "None set" only when the files say so: all unset, at least one written
  // as null (a trimmed dump that leaves them all out says nothing).
  bool all_unset = modes.iters.unset() && modes.samples.unset() && modes.epochs.unset();
  bool written = config_node(job, "train.train_iters") || config_node(job, "train.train_samples") ||
                 config_node(job, "train.num_epochs");
  if (set.empty() && all_unset && written && !megatron_lm) {
    Diagnostic diag = make_diagnostic(kTrainingLengthInvalid,
                                      "none of train_iters, train_samples and num_epochs is set: Megatron Bridge "
                                      "needs one of them",
                                      span_for(modes.iters.quantity));
    for (const Field* f : {&modes.samples, &modes.epochs}) {
      if (span_for(f->quantity).valid()) diag.notes.push_back(note_for(f->quantity));
    }
    report(out, std::move(diag), "set train.train_iters (or train_samples, or num_epochs for a finite SFT dataset)");
    return;
  }
  check_positive(modes.samples, out);
  if (!megatron_lm) check_positive(modes.epochs, out);
}

}  // namespace

extern const RuleInfo kTrainingLengthInvalid = {
    .code = "MB608",
    .name = "training-length-invalid",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "exactly one of train_iters, train_samples and num_epochs must give the training length",
    .doc = R"md(Megatron Bridge's `TrainingConfig.finalize()` asserts at start-up that exactly one of
`train.train_iters`, `train.train_samples` and `train.num_epochs` is set ("One of train_iters,
train_samples, or num_epochs must be provided", "Cannot specify more than one of train_iters,
train_samples, or num_epochs"), and that `train_samples` and `num_epochs` are positive.

Every NVIDIA recipe sets `train_iters`, so an override file that adds `train_samples` (or
`num_epochs`) to a recipe sets two of them: write `train_iters: null` next to it. (mblint reads
the recipes' sources at its catalog's commit for this: they all set `train_iters` and none sets
the sample- or epoch-based fields.)

Megatron-LM asserts "expected iteration-based training" / "expected sample-based training"
when both `--train-iters` and `--train-samples` are given.)md",
    .bad = {"override.yaml", "train:\n  train_samples: 1000000\n",
     "override.yaml --recipe llama3_8b_pretrain_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2"},
    .good = {.content = "train:\n  train_iters: 1000\n"},
    .check = check,
    .checks = "BR sched train length",
};

}  // namespace mblint
