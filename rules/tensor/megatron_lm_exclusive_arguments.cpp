// Megatron-LM arguments its scripts assert against each other: a layer count
// given twice, an activation that excludes SwiGLU, the local attention
// backend without the local module spec.
#include "rules/support/config_support.h"
#include "rules/support/runtime_support.h"

namespace mblint {

extern const RuleInfo kMegatronLmExclusiveArguments;

namespace {

// validate_args: `if args.num_layers is not None: assert args.encoder_num_layers
// is None` (without --num-layers it takes the encoder's count, a rewrite).
void check_layer_counts(const Job& job, std::vector<Diagnostic>& out) {
  Quantity layers = config_int(job, "model.num_layers");
  Quantity encoder = config_int(job, "model.encoder_num_layers");
  if (!layers.known() || !encoder.known() || layers.defaulted || layers.where.layer == Layer::Rewrite) return;
  report(out,
         finding(kMegatronLmExclusiveArguments,
                 "--num-layers and --encoder-num-layers are both given: Megatron-LM's validate_args asserts "
                 "\"cannot have both num-layers and encoder-num-layers specified\"",
                 {&layers, &encoder}),
         "keep one: --encoder-num-layers (with --decoder-num-layers) for T5's encoder or pretrain_vlm.py's tower, "
         "--num-layers otherwise");
}

// core_transformer_config_from_args: `if args.squared_relu: assert not
// args.swiglu` `elif args.quick_geglu: assert not args.swiglu`.
constexpr BothOn kSquaredRelu = {
    "model.squared_relu", "model.gated_linear_unit",
    "--squared-relu is given with --swiglu: Megatron-LM asserts `not args.swiglu` when it builds the transformer "
    "config (core_transformer_config_from_args), before the model exists",
    "drop one of --squared-relu and --swiglu"};
constexpr BothOn kQuickGeglu = {
    "model.quick_geglu", "model.gated_linear_unit",
    "--quick-geglu is given with --swiglu: Megatron-LM asserts `not args.swiglu` when it builds the transformer "
    "config (core_transformer_config_from_args), before the model exists",
    "drop one of --quick-geglu and --swiglu"};

// validate_args: `assert args.spec[0] == 'local'` under --attention-backend
// local (no --spec at all fails on the same line, indexing None).
void check_local_backend(const Job& job, std::vector<Diagnostic>& out) {
  Choice backend = read_choice(job, "model.attention_backend");
  if (!backend.is("local")) return;
  SettingValue spec = read_setting(job, "model.spec");
  const ConfigValue* node = spec.node();
  std::string given;
  if (node) {
    if (node->kind == ValueKind::Unknown) return;
    if (!node->items.empty()) {
      const ConfigValue& first = node->items.front();
      if (first.kind == ValueKind::Unknown) return;
      if (first.kind == ValueKind::String && first.text == "local") return;
      given = first.text;
    }
  }
  std::string message =
      given.empty()
          ? "--attention-backend local is given without --spec local: Megatron-LM's validate_args asserts "
            "\"--attention-backend local is only supported with --spec local\" (with no --spec it fails on that "
            "line indexing None)"
          : fmt::format("--attention-backend local is given with --spec {}: Megatron-LM's validate_args asserts "
                        "\"--attention-backend local is only supported with --spec local\"",
                        given);
  Diagnostic diag = make_diagnostic(kMegatronLmExclusiveArguments, std::move(message), span_for(backend));
  if (node) diag.notes.push_back(note_at("spec", given, node->where));
  report(out, std::move(diag),
         "pass --spec local to build the model from Megatron-Core's local modules, or choose another "
         "--attention-backend (flash, fused, unfused or auto)");
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!megatron_lm_validates_flags(job)) return;
  check_layer_counts(job, out);
  size_t before = out.size();
  check_both_on(job, kMegatronLmExclusiveArguments, kSquaredRelu, out);
  if (out.size() == before) check_both_on(job, kMegatronLmExclusiveArguments, kQuickGeglu, out);  // the elif
  check_local_backend(job, out);
}

}  // namespace

extern const RuleInfo kMegatronLmExclusiveArguments = {
    .code = "MB214",
    .name = "megatron-lm-exclusive-arguments",
    .group = RuleGroup::Tensor,
    .severity = Severity::Error,
    .summary = "Megatron-LM arguments that exclude each other: two layer counts, SwiGLU with another activation, "
               "the local attention backend without --spec local",
    .doc = R"md(Megatron-LM asserts, before it builds the model (`megatron/training/arguments.py` and
`argument_utils.py`, core_v0.10 to 2a75ac12c54b):

* `--num-layers` and `--encoder-num-layers` are not both given ("cannot have both num-layers and
  encoder-num-layers specified"): T5 takes the encoder count, every other model `--num-layers`;
* `--squared-relu` or `--quick-geglu` is not combined with `--swiglu`
  (`core_transformer_config_from_args` picks the activation and asserts `not args.swiglu`);
* `--attention-backend local` comes with `--spec local` (`assert args.spec[0] == 'local'`; without
  `--spec` the same line fails indexing None).

Only Megatron-LM's own scripts and functional-test configs are checked, and not under `--yaml-cfg`
(which replaces the command line). Settings taken from the checkpoint (`--use-checkpoint-args`
forces `--swiglu`, `--squared-relu` and `--spec` from it) are not known and not judged.)md",
    .bad = {"train.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
            "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --swiglu --squared-relu \\\n"
            "  --micro-batch-size 1 --global-batch-size 256\n",
            "train.sh"},
    .good = {.content = "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n"
                        "  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --swiglu \\\n"
                        "  --micro-batch-size 1 --global-batch-size 256\n"},
    .check = check,
    .checks = "MC B11, MC B16, MC B17",
};

}  // namespace mblint
