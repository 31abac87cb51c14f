// A model vocabulary smaller than the tokenizer's: Megatron Bridge refuses it
// when it sizes the embedding at setup, after the allocation waited.
#include "rules/support/config_support.h"

namespace mblint {

extern const RuleInfo kVocabSizeBelowTokenizer;

namespace {

// training/setup.py _validate_and_set_vocab_size, since v0.2.0 (be75aa4a7).
constexpr Version kBridgeValidatesVocab{0, 2, 0};

bool is_null_tokenizer(const Job& job) {
  Resolved type = resolve(job, "tokenizer.tokenizer_type");
  return type.known() && type.value->kind == ValueKind::String && type.value->text == "NullTokenizer";
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  const Job& job = context.job;
  if (!is_bridge_job(job) || job.versions.bridge < kBridgeValidatesVocab || !is_null_tokenizer(job)) return;
  // With use_tokenizer_vocab_size on, Bridge takes the tokenizer's vocabulary
  // whatever the model's is.
  Resolved use_tokenizer = resolve(job, "tokenizer.use_tokenizer_vocab_size");
  if (use_tokenizer.known() && truthy(use_tokenizer) != false) return;
  Quantity tokenizer = config_int(job, "tokenizer.vocab_size");
  // As written, or as the recipe layer writes it: the recipe's, else the
  // vocab_size of the Hugging Face config its model is built from.
  Quantity model = config_int(job, "model.vocab_size");
  tokenizer.name = "tokenizer.vocab_size";  // two vocab_size settings: say which
  model.name = "model.vocab_size";
  if (!tokenizer.known() || !model.known() || *model <= 0 || *model >= *tokenizer) return;
  Diagnostic diag = finding(kVocabSizeBelowTokenizer,
                            fmt::format("model vocab_size {} is smaller than the NullTokenizer's vocab_size {}: "
                                        "Megatron Bridge raises ValueError \"Model vocab_size ({}) cannot be smaller "
                                        "than tokenizer's vocab_size ({})\" when it sets up the model",
                                        *model, *tokenizer, *model, *tokenizer),
                            {&model, &tokenizer});
  std::vector<Fix> fixes;
  if (written_by_user(model.where)) fixes.push_back(set_value_fix(model, *tokenizer));
  report(out, std::move(diag),
         fmt::format("set model.vocab_size to at least {} (the tokenizer's), or tokenizer.use_tokenizer_vocab_size "
                     "to true to size the model to the tokenizer",
                     *tokenizer),
         std::move(fixes));
}

}  // namespace

extern const RuleInfo kVocabSizeBelowTokenizer = {
    .code = "MB979",
    .name = "vocab-size-below-tokenizer",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "the model's vocab_size is smaller than the NullTokenizer's",
    .doc = R"md(Megatron Bridge sizes the embedding and output layer when it sets up training
(`training/setup.py` `_validate_and_set_vocab_size`, since v0.2.0; 067f987df03b): with
`tokenizer.use_tokenizer_vocab_size` on, or no model vocabulary, it takes the tokenizer's and pads
it; otherwise it keeps the model's `vocab_size`, and raises `ValueError` ("Model vocab_size (N)
cannot be smaller than tokenizer's vocab_size (M)") when that is smaller than the tokenizer's: token
ids past the embedding would index out of range. The check runs after the allocation was granted.

mblint knows the tokenizer's size for a `NullTokenizer` (its `vocab_size`; Megatron-Core's
`NullTokenizer` counts exactly that many ids); another tokenizer's is read from its files at run
time. The model's vocabulary is `model.vocab_size` as written or as the recipe writes it, else the
`vocab_size` of the Hugging Face config a recipe's model is built from. The performance recipes turn
`use_tokenizer_vocab_size` off (`perf_recipes/_common.py`), so a larger `tokenizer.vocab_size` on
one of them meets this check.

The fix raises `model.vocab_size` to the tokenizer's where it is written (unsafe: it changes the
model's shape).)md",
    .bad = {"override.yaml",
            "tokenizer:\n  tokenizer_type: NullTokenizer\n  vocab_size: 50000\n  use_tokenizer_vocab_size: false\n"
            "model:\n  vocab_size: 32000\n",
            "override.yaml --recipe llama3_8b_pretrain_8gpu_h100_bf16_config --nodes 1 --gpus-per-node 8"},
    .good = {.content = "tokenizer:\n  tokenizer_type: NullTokenizer\n  vocab_size: 32000\n"
                        "  use_tokenizer_vocab_size: false\nmodel:\n  vocab_size: 32000\n"},
    .check = check,
    .checks = "BR setup vocab",
};

}  // namespace mblint
