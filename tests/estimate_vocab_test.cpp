// The vocabulary the estimate sizes the embedding and output layer with: the
// one the framework the job runs computes at setup.
#include <catch2/catch.hpp>

#include "tests/memory_model_run.h"

using namespace mblint;

TEST_CASE("vocabulary: a Bridge library recipe trains its NullTokenizer's 32,000 tokens, padded", "[estimate]") {
  // recipes/common.py turns use_tokenizer_vocab_size on and the recipe writes
  // NullTokenizer with DEFAULT_NULL_TOKENIZER_VOCAB_SIZE (32000); Bridge pads
  // it to a multiple of 128 x TP (training/setup.py should_pad_vocab): TP 4,
  // 512: 63 x 512 = 32256. Not the checkpoint's 128,256.
  MemoryModel m = test::estimated_recipe_model("llama31_70b_pretrain_32gpu_h100_bf16_config");
  CHECK(m.tp == 4);
  CHECK(m.vocab == 32256);
}

TEST_CASE("vocabulary: a Bridge performance recipe keeps the model's, unpadded", "[estimate]") {
  // perf_recipes/_common.py turns use_tokenizer_vocab_size off: the model's
  // 128,256 (its Hugging Face config) stays as it is, even at TP 4, where
  // padding would give 128,512.
  MemoryModel m = test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config",
                                               "model:\n  tensor_model_parallel_size: 4\n"
                                               "  sequence_parallel: true\n");
  CHECK(m.tp == 4);
  CHECK(m.vocab == 128256);
  // Turned on, the tokenizer's: 50,000 padded to 512 = 50,176.
  MemoryModel sized = test::estimated_recipe_model("llama3_8b_pretrain_8gpu_h100_bf16_config",
                                                   "model:\n  tensor_model_parallel_size: 4\n"
                                                   "  sequence_parallel: true\ntokenizer:\n  vocab_size: 50000\n"
                                                   "  use_tokenizer_vocab_size: true\n");
  CHECK(sized.vocab == 50176);
}

TEST_CASE("vocabulary: a recipe whose tokenizer copies the model's keeps the model's, padded", "[estimate]") {
  // gemma4.py writes tokenizer.vocab_size = cfg.model.vocab_size (a value of
  // the Hugging Face config at run time): the model's 262,144 stands in.
  MemoryModel m = test::estimated_recipe_model("gemma4_e4b_pretrain_2gpu_h100_bf16_config");
  CHECK(m.vocab == 262144);
}

namespace {

int64_t megatron_lm_vocab(const char* core_version) {
  test::LintRun run("mblint-estimate-vocab");
  run.write("launch.sh",
            "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
            "--num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 "
            "--global-batch-size 16 --bf16 --tokenizer-type NullTokenizer --vocab-size 32000\n");
  run.options.paths = {"launch.sh"};
  if (core_version) run.options.megatron_core_version = run.value(core_version);
  return test::estimated_model_of(run).vocab;
}

}  // namespace

TEST_CASE("vocabulary: Megatron-LM's NullTokenizer adds the end-of-document token up to core 0.16", "[estimate]") {
  // Up to core 0.16 the global tokenizer is the legacy _NullTokenizer
  // (vocab_size + 1 = 32001, padded to 128: 32128); from 0.17 Megatron-Core's
  // NullTokenizer counts vocab_size ids (32000, a multiple of 128).
  CHECK(megatron_lm_vocab("0.16.0") == 32128);
  CHECK(megatron_lm_vocab("0.17.0") == 32000);
  CHECK(megatron_lm_vocab(nullptr) == 32000);  // the newest known core
}
