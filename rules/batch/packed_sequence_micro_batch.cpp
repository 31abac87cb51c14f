// Sequence packing fixes the micro batch: offline-packed and Energon-packed
// data feed one packed sequence per micro batch, in-batch packing needs at
// least two sequences to pack.
#include "rules/support/batch_support.h"

namespace mblint {

extern const RuleInfo kPackedSequenceMicroBatch;

namespace {

bool is_on(const Job& job, std::string_view path) { return config_bool(job, path).value.value_or(false); }

bool is_energon(const Job& job) {
  TextSetting target = config_text(job, "dataset._target_");
  if (target.value && target.value->find("EnergonDatasetConfig") != std::string::npos) return true;
  return config_node(job, "dataset.packing_buffer_size") != nullptr;
}

void check_offline(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Derived& d = context.derived;
  if (!is_on(job, "dataset.enable_offline_packing")) return;
  const ConfigValue* specs = config_node(job, "dataset.offline_packing_specs");
  if (!specs || !specs->is_map()) return;  // sequence-packing-conflict
  Quantity packed = config_int(job, "dataset.offline_packing_specs.packed_sequence_size");
  if (packed.known() && *packed <= 0) {
    Diagnostic diag = finding_at(kPackedSequenceMicroBatch,
                                 fmt::format("packed_sequence_size is {}; it must be positive", *packed), packed, {});
    report(out, std::move(diag),
           "set offline_packing_specs.packed_sequence_size to the packed length (e.g. the sequence length)");
    return;
  }
  const Quantity& mbs = d.micro_batch_size;
  if (!mbs.known() || *mbs <= 1) return;
  Quantity offline = as_quantity(config_bool(job, "dataset.enable_offline_packing"));
  Diagnostic diag =
      finding_at(kPackedSequenceMicroBatch,
                 fmt::format("micro_batch_size is {} with offline sequence packing: Megatron Bridge needs 1 "
                             "(each micro batch is one packed sequence)",
                             *mbs),
                 mbs, {&mbs, &offline});
  std::string equivalent;
  if (d.global_batch_size.known() && packed.known()) {
    equivalent = fmt::format(" and global_batch_size {} with packed_sequence_size {} for the same tokens per step",
                             *d.global_batch_size / *mbs, *packed * *mbs);
    diag.notes.push_back(note_for(packed));
  }
  report(out, std::move(diag), "use micro_batch_size 1" + equivalent, {set_value_fix(mbs, 1)});
}

void check_in_batch(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Quantity& mbs = context.derived.micro_batch_size;
  Setting in_batch = config_bool(context.job, "dataset.enable_in_batch_packing");
  if (!in_batch.value.value_or(false) || !mbs.known() || *mbs != 1) return;
  Quantity flag = as_quantity(in_batch);
  report(out,
         finding(kPackedSequenceMicroBatch,
                 "micro_batch_size is 1 with enable_in_batch_packing: in-batch packing concatenates the "
                 "sequences of a micro batch, so it needs at least 2",
                 {&mbs, &flag}),
         "use micro_batch_size 2 or more, or offline packing with micro_batch_size 1", {set_value_fix(mbs, 2)});
}

void check_energon(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  const Quantity& mbs = context.derived.micro_batch_size;
  if (!is_energon(job) || !mbs.known()) return;
  Quantity dataset_mbs = config_int(job, "dataset.micro_batch_size");
  if (dataset_mbs.known() && *dataset_mbs != *mbs) {
    report(out,
           finding(kPackedSequenceMicroBatch,
                   fmt::format("dataset.micro_batch_size {} differs from train.micro_batch_size {}: Megatron "
                               "Bridge needs the Energon loader's micro batch to match",
                               *dataset_mbs, *mbs),
                   {&dataset_mbs, &mbs}),
           fmt::format("set dataset.micro_batch_size to {}", *mbs), {set_value_fix(dataset_mbs, *mbs)});
    return;
  }
  const ConfigValue* buffer = config_node(job, "dataset.packing_buffer_size");
  if (!buffer || buffer->is_null() || *mbs == 1) return;
  Quantity buffer_q = quantity_at("dataset.packing_buffer_size", as_int(buffer), buffer->where);
  report(out,
         finding_at(kPackedSequenceMicroBatch,
                    fmt::format("micro_batch_size is {} with Energon sequence packing (packing_buffer_size "
                                "set): Megatron Bridge needs 1",
                                *mbs),
                    mbs, {&mbs, &buffer_q}),
         "use micro_batch_size 1 (and dataset.micro_batch_size 1)", {set_value_fix(mbs, 1)});
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (context.job.dialect != Dialect::Bridge) return;
  check_offline(context, out);
  check_in_batch(context, out);
  check_energon(context, out);
}

}  // namespace

extern const RuleInfo kPackedSequenceMicroBatch = {
    .code = "MB615",
    .name = "packed-sequence-micro-batch",
    .group = RuleGroup::Batch,
    .severity = Severity::Error,
    .summary = "sequence packing with a micro batch size it does not accept",
    .doc = R"md(Packed sequences change what a micro batch is, and Megatron Bridge's `ConfigContainer.validate()`
checks the micro batch at start-up:

* **offline packing** (`dataset.enable_offline_packing` with `offline_packing_specs`): each micro
  batch is one packed sequence, so `micro_batch_size` must be 1. Bridge's message ("Micro batch
  size should be 1 when training with packed sequence ...") also gives the equivalent setting:
  global batch `GBS / MBS` and packed length `packed_sequence_size x MBS`. The packed length must
  be positive.
* **in-batch packing** (`dataset.enable_in_batch_packing`): the sequences of one micro batch are
  concatenated, so it needs `micro_batch_size >= 2` ("micro_batch_size should be greater than 1
  when using enable_in_batch_packing=True").
* **Energon** datasets: the loader's `dataset.micro_batch_size` must equal
  `train.micro_batch_size`, and Energon's own packing (`packing_buffer_size`) needs
  `micro_batch_size` 1 ("Energon native sequence packing requires train.micro_batch_size=1").)md",
    .bad = {"override.yaml",
     "dataset:\n  enable_offline_packing: true\n  offline_packing_specs:\n    packed_sequence_size: 4096\n"
     "train:\n  global_batch_size: 128\n  micro_batch_size: 2\n",
     "override.yaml --recipe llama3_8b_sft_2gpu_h100_bf16_config --nodes 1 --gpus-per-node 2 --set model.sequence_parallel=true"},
    .good = {.content =
     "dataset:\n  enable_offline_packing: true\n  offline_packing_specs:\n    packed_sequence_size: 8192\n"
     "train:\n  global_batch_size: 64\n  micro_batch_size: 1\n"},
    .check = check,
    .checks = "BR V10, BR V11, BR V13, PS 81",
};

}  // namespace mblint
