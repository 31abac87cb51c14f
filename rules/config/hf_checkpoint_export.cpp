// checkpoint.also_save_hf_checkpoint exports Hugging Face weights next to
// each checkpoint; it needs an HF source for config and tokenizer files and
// a checkpoint layout it can convert.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kHfCheckpointExport;

namespace {

bool known_null(const Resolved& r) { return r.known() && r.value->is_null(); }

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job)) return;
  Resolved export_hf = resolve(job, "checkpoint.also_save_hf_checkpoint");
  if (!is_on(export_hf)) return;
  Resolved format = resolve(job, "checkpoint.ckpt_format");
  if (format.known() && format.value->kind == ValueKind::String && format.value->text == "fsdp_dtensor") {
    report(out,
           finding(kHfCheckpointExport,
                   "also_save_hf_checkpoint with ckpt_format fsdp_dtensor: CheckpointConfig.finalize() raises "
                   "\"also_save_hf_checkpoint=True is not supported together with ckpt_format='fsdp_dtensor'\"",
                   {&format, &export_hf}),
           "use ckpt_format torch_dist when exporting HF weights during training");
  }
  Resolved local = resolve(job, "checkpoint.non_persistent_ckpt_type");
  if (local.known() && local.value->kind == ValueKind::String && local.value->text == "local") {
    report(out,
           finding(kHfCheckpointExport,
                   "also_save_hf_checkpoint with local non-persistent checkpoints: CheckpointConfig.finalize() raises "
                   "\"also_save_hf_checkpoint=True is not compatible with local non-persistent checkpoints\"",
                   {&local, &export_hf}),
           "use non_persistent_ckpt_type global, or disable non-persistent saving");
  }
  Resolved source = resolve(job, "checkpoint.hf_source_path");
  Resolved model_id = resolve(job, "model.hf_model_id");
  Resolved tokenizer = resolve(job, "tokenizer.tokenizer_model");
  // A builder-backed model has no hf_model_id attribute (Bridge's getattr gives None).
  bool no_model_id = known_null(model_id) || (builder_backed_model(job) && !find_path(job.config, "model.hf_model_id"));
  if (known_null(source) && no_model_id && known_null(tokenizer)) {
    report(
        out,
        finding(kHfCheckpointExport,
                "also_save_hf_checkpoint without an HF source: Megatron Bridge raises \"also_save_hf_checkpoint=True "
                "requires an HF source to template config/tokenizer files\"",
                {&export_hf, &source, &model_id, &tokenizer}),
        "set checkpoint.hf_source_path to the HF model id or directory the model came from");
  }
}

}  // namespace

extern const RuleInfo kHfCheckpointExport = {
    .code = "MB970",
    .name = "hf-checkpoint-export",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "also_save_hf_checkpoint without an HF source, with fsdp_dtensor, or with local non-persistent checkpoints",
    .doc = R"md(`checkpoint.also_save_hf_checkpoint` writes Hugging Face safetensors next to every checkpoint.
Megatron Bridge refuses it at start-up when:

* there is nothing to copy the HF config and tokenizer files from: no `checkpoint.hf_source_path`, no
  `model.hf_model_id` (recipes built with AutoBridge set it; builder-backed Llama configs keep it in
  `extra_checkpoint_metadata`, where Bridge's check does not look) and no
  `tokenizer.tokenizer_model` — `ConfigContainer.validate()`: "also_save_hf_checkpoint=True
  requires an HF source to template config/tokenizer files.";
* `ckpt_format` is `fsdp_dtensor` or `non_persistent_ckpt_type` is `local` —
  `CheckpointConfig.finalize()`: "also_save_hf_checkpoint=True is not supported together with
  ckpt_format='fsdp_dtensor'" / "... is not compatible with local non-persistent checkpoints".

The source check needs all three to be known null (set so in a file, or a dump).)md",
    .bad = {"override.yaml", "checkpoint:\n  also_save_hf_checkpoint: true\n  ckpt_format: fsdp_dtensor\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "checkpoint:\n  also_save_hf_checkpoint: true\n  ckpt_format: torch_dist\n"},
    .check = check,
    .checks = "BR V26, BR ckpt",
};

}  // namespace mblint
