// Megatron-LM's command-line vision-language models in the memory estimate
// (lint/facts/estimate_llava.cpp): pretrain_vlm.py's LLaVA (a CLIP ViT that
// copies the language model's layers, its MLP projector, the decoder
// sequence of text + image embeddings), TE's unfused attention and its fp32
// softmax, MIMO's llava_vlm, and the memory the estimate names without
// counting it. Every figure is derived by hand from Megatron-LM d98e8a64 and
// TransformerEngine v2.8 (sources in estimate_llava.cpp and estimate.cpp).
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_llava.h"
#include "lint/facts/estimate_t5.h"
#include "tests/cli_run.h"
#include "tests/dense_model.h"
#include "tests/test_support.h"

using namespace mblint;

namespace {

// `mblint estimate model_config.yaml --format json` on a functional-test
// config with these MODEL_ARGS lines.
nlohmann::json estimate_args(const std::string& model_args) {
  auto cwd = test::make_temp_dir("mblint-estimate-llava");
  std::ofstream(cwd / "model_config.yaml") << "MODEL_ARGS:\n" << model_args;
  auto run = test::run_mblint({"estimate", "model_config.yaml", "--nodes", "1", "--gpus-per-node", "8", "--gpu",
                               "h100", "--format", "json"},
                              cwd);
  std::filesystem::remove_all(cwd);
  return nlohmann::json::parse(run.out);
}

// multimodal_llava_mcore_te_tp1_pp1's shape (Megatron-LM's functional test).
const char* kLlavaArgs =
    "  --num-layers: 12\n  --hidden-size: 624\n  --num-attention-heads: 12\n  --attention-dropout: 0.0\n"
    "  --hidden-dropout: 0.0\n  --micro-batch-size: 4\n  --global-batch-size: 32\n  --seq-length: 1024\n"
    "  --max-position-embeddings: 1024\n  --tokenizer-type: NullTokenizer\n  --vocab-size: 8193\n"
    "  --no-gradient-accumulation-fusion: true\n  --bf16: true\n  --img-h: 336\n  --img-w: 336\n  --patch-dim: 14\n";

}  // namespace

TEST_CASE("llava: image embeddings and the decoder sequence's padding", "[estimate]") {
  // get_num_image_embeddings ("clip"): (336/14)² = 576 patches + 1 class token.
  CHECK(llava_image_embeddings(336, 336, 14, false) == 577);
  CHECK(llava_image_embeddings(336, 336, 14, true) == 576);
  CHECK(llava_image_embeddings(224, 224, 16, false) == 14 * 14 + 1);
  // get_padding: SP + CP pads to a multiple of TP x CP x 2, CP alone to
  // CP x 2, SP alone to TP.
  CHECK(llava_padding(1232 + 576, 2, 4, true) == 0);  // 1808 = 16 x 113
  CHECK(llava_padding(1601, 2, 4, true) == 1616 - 1601);
  CHECK(llava_padding(1601, 2, 1, false) == 1604 - 1601);
  CHECK(llava_padding(1601, 1, 4, true) == 1604 - 1601);
  CHECK(llava_padding(1601, 1, 1, false) == 0);
}

TEST_CASE("llava: the CLIP ViT and projector copy the language model's layers, counted by hand", "[estimate]") {
  // The tp1 functional test: h 624, 12 heads of 52, FFN 4h = 2496,
  // LayerNorm, linear biases, no gating.
  MemoryModel m = test::dense_gpt(12, 624, 12, 1601, 8320);
  m.micro_batch = 4;
  m.hidden_dropout = m.attention_dropout = 0;
  m.unfused_attention = true;  // head dim 52 (see the next test)
  EncoderLoad e = llava_load(m, 12, 577, 577, false, false);
  // A layer: qkv 624 x 3·624 + bias, proj 624² (its bias whole), fc1
  // 624 x 2496 + bias, fc2 2496 x 624 (its bias whole), two fused norms of
  // 2 x 624.
  double split = 624.0 * 1872 + 1872 + 624.0 * 624 + 624.0 * 2496 + 2496 + 2496.0 * 624;
  double whole = 2 * 1248 + 2 * 624;
  CHECK(split + whole == 4'680'624);
  // The projector: the language model's MLP over the tower's width, fc1 with
  // its fused norm.
  double projector = 624.0 * 2496 + 2496 + 2496.0 * 624 + 1248 + 624;
  CHECK(e.trainable_params == Approx(12 * (split + whole) + projector));
  CHECK(e.frozen_params == 0);
  // Activations: the 12 layers over 577 tokens x 4 samples (no CP, no SP),
  // ln_pre's input, and the projector's norm input, fc1 input, fc1 output and
  // activation output over the 577 embeddings.
  MemoryModel v = m;
  v.seq = 577;
  double tokens = 577.0 * 4;
  double a = 12, s = 577, b = 4, h = 624, f = 2496;
  double layer = 2 * tokens * h * 2       // input norm input, QKV input
                 + 2 * tokens * 52 * 36    // Q, K, V
                 + 4 * a * s * s * b       // TE's torch softmax in fp32 (577 is not a multiple of 8)
                 + 2 * a * s * s * b       // the bf16 probabilities the second GEMM keeps
                 + 2 * tokens * h          // attention output
                 + 2 * tokens * h * 2      // MLP input, pre-MLP norm input
                 + 2 * tokens * f * 2;     // fc1 output, activation output
  CHECK(layer_activation_bytes(v, false) == Approx(layer));
  double expected = 12 * layer + 2 * tokens * h + 2 * tokens * (2 * h + f + f);
  CHECK(e.activation_bytes == Approx(expected));
  // Frozen (--freeze-ViT): the tower's weights only, no saved activations;
  // the projector still trains.
  EncoderLoad frozen = llava_load(m, 12, 577, 577, true, false);
  CHECK(frozen.frozen_params == Approx(12 * (split + whole)));
  CHECK(frozen.trainable_params == Approx(projector));
  CHECK(frozen.activation_bytes == Approx(2 * tokens * (2 * h + f + f)));
}

TEST_CASE("llava: TE's fused softmax kernel keeps 2as²b; its torch path adds the fp32 output", "[estimate]") {
  // is_kernel_available: sk a multiple of 8, sq a multiple of 4 and of the
  // kernel's batches per block (4 for sk 2048), b x heads a multiple of 4.
  // Megatron's own unfused attention (transformer_impl local) is the
  // reference without the TE term.
  MemoryModel te = test::dense_gpt(1, 1024, 16, 2048, 50304);
  te.unfused_attention = true;
  te.hidden_dropout = te.attention_dropout = 0;
  MemoryModel local = te;
  local.local_attention = true;
  CHECK(layer_activation_bytes(te, false) == Approx(layer_activation_bytes(local, false)));
  te.seq = local.seq = 2044;  // a multiple of 4, not of 8: torch's softmax
  double a = 16, s = 2044, b = 1;
  CHECK(layer_activation_bytes(te, false) - layer_activation_bytes(local, false) == Approx(4 * a * s * s * b));
  // Flash attention (a head dim that is a multiple of 8) keeps no scores.
  te.unfused_attention = false;
  CHECK(layer_activation_bytes(te, false) < layer_activation_bytes(local, false));
}

TEST_CASE("llava: the functional test's command line estimates tower, projector and the longer sequence",
          "[estimate]") {
  nlohmann::json doc = estimate_args(kLlavaArgs);
  REQUIRE(doc["estimate"].is_object());
  const auto& e = doc["estimate"];
  // The language model: 12 layers of 4,680,624 (above), the 8320 x 624 tied
  // embedding (the NullTokenizer's 8193, padded to 128; 8194 with core 0.16's
  // legacy tokenizer, padded the same) and a 1601-row
  // position table, 62.4 M; the tower and projector 60.0 M (12 layers, the
  // projector's 3,119,376, conv1 3 x 14² x 624, 577 position rows, the class
  // token and ln_pre); 18 B each (bf16 weights, fp32 main_grad, unsharded
  // Adam).
  double lm = 12 * 4'680'624.0 + 8320.0 * 624 + 1601.0 * 624;
  double tower = 12 * 4'680'624.0 + 3'119'376 + 3.0 * 14 * 14 * 624 + 577.0 * 624 + 624 + 1248;
  CHECK(e["weights"].get<double>() + e["gradients"].get<double>() + e["optimizer"].get<double>() ==
        Approx(18.0 * (lm + tower) / (1024.0 * 1024 * 1024)).margin(0.015));  // three parts rounded to 0.01
  // The language model runs over 1024 text + 577 image tokens.
  bool said = false;
  for (const auto& a : e["assumptions"]) {
    said = said || a.get<std::string>().find("1024 text + 577 image tokens = 1601") != std::string::npos;
  }
  CHECK(said);
  // Measured: 14.66-14.69 GiB peak (megatron_golden_memory.csv); before the
  // tower was modelled the estimate was 2.2 GiB.
  CHECK(e["peak_allocated"].get<double>() > 12.0);
}

TEST_CASE("llava: examples/multimodal's towers are declined with the reason", "[estimate]") {
  nlohmann::json doc = estimate_args(std::string(kLlavaArgs) + "  --vision-model-type: siglip\n");
  CHECK(doc["estimate"].is_null());
  CHECK(doc["estimate_unavailable"][0].get<std::string>().find("--vision-model-type siglip") != std::string::npos);
}

TEST_CASE("t5: the encoder, the decoder's cross-attention and the shared encoder output, by hand", "[estimate]") {
  // t5_mcore_te_tp2_pp1_vp1: 12 + 12 layers, h 768, 12 heads of 64, FFN
  // 3072, LayerNorm, biases, TP 2, micro-batch 4, encoder 512 and decoder
  // 128 tokens, unfused attention, dropout 0.1; the vocabulary 50,257
  // padded to 50,432 (256 = 128 x TP).
  MemoryModel m = test::dense_gpt(12, 768, 12, 128, 50432);
  m.tp = 2;
  m.micro_batch = 4;
  m.unfused_attention = true;
  EncoderLoad e = t5_load(m, 12, 512);
  // An encoder layer: (qkv 768 x 2304 + bias, proj 768², fc1 768 x 3072 +
  // bias, fc2 3072 x 768) / 2 + two norms (2 x 1536) + the row biases (2 x
  // 768). A cross-attention: (linear_q 768² + bias, linear_kv 768 x 1536 +
  // bias, linear_proj 768²) / 2 + its norm (1536) + linear_proj's bias.
  double encoder_layer = (768.0 * 2304 + 2304 + 768.0 * 768 + 768.0 * 3072 + 3072 + 3072.0 * 768) / 2 + 2 * 1536 + 2 * 768;
  double cross = (768.0 * 768 + 768 + 768.0 * 1536 + 1536 + 768.0 * 768) / 2 + 1536 + 768;
  CHECK(encoder_layer == 3'546'240);
  CHECK(cross == 1'183'104);
  // + the encoder's final norm, + the LM head's bias (50,432 / 2).
  CHECK(e.trainable_params == Approx(12 * encoder_layer + 1536 + 12 * cross + 25'216));
  // A cross-attention's saved bytes: norm and linear_q inputs (2 x 2 s_d b h),
  // Q (2 s_d b 384), K and V (2 x 2 s_e b 384), softmax output, dropout mask
  // and output over 6 heads x 128 x 512 x 4 (TE's kernel takes 128 x 512:
  // no fp32 copy), the projection's input and the dropout mask after it.
  double sd = 128, se = 512, b = 4, h = 768, inner = 384, scores = 6 * sd * se * b;
  double cross_bytes = 2 * sd * b * h * 2 + 2 * sd * b * inner + 2 * se * b * inner * 2 + (2 + 1 + 2) * scores +
                       2 * sd * b * inner + sd * b * h;
  CHECK(cross_bytes == 13'762'560);
  MemoryModel enc = m;
  enc.seq = 512;
  double tokens = se * b;
  double expected = 12 * layer_activation_bytes(enc, false) + 2 * tokens * h  // layers, final norm input
                    + tokens * h                                            // embedding dropout mask
                    + 2 * tokens * h                                        // the encoder output, once
                    + 12 * cross_bytes;
  CHECK(e.activation_bytes == Approx(expected));
}

TEST_CASE("t5: the command line is estimated; a pipeline split is declined", "[estimate]") {
  std::string t5 =
      "  --encoder-num-layers: 12\n  --decoder-num-layers: 12\n  --hidden-size: 768\n  --num-attention-heads: 12\n"
      "  --encoder-seq-length: 512\n  --decoder-seq-length: 128\n  --micro-batch-size: 4\n  --bf16: true\n";
  nlohmann::json doc = estimate_args(t5);
  REQUIRE(doc["estimate"].is_object());
  bool said = false;
  for (const auto& a : doc["estimate"]["assumptions"]) {
    said = said || a.get<std::string>().find("T5: the decoder (12 layers over 128 tokens") != std::string::npos;
  }
  CHECK(said);
  nlohmann::json piped = estimate_args(t5 + "  --pipeline-model-parallel-size: 2\n");
  CHECK(piped["estimate"].is_null());
  CHECK(piped["estimate_unavailable"][0].get<std::string>().find("T5 (examples/t5/pretrain_t5.py): the encoder and "
                                                                  "decoder split over pipeline stages") !=
        std::string::npos);
}

TEST_CASE("mimo: llava_vlm trains the projector only; the checkpoint load is named, not counted", "[estimate]") {
  nlohmann::json doc = estimate_args(
      "  --num-layers: 32\n  --hidden-size: 4096\n  --num-attention-heads: 32\n  --micro-batch-size: 1\n"
      "  --global-batch-size: 8\n  --seq-length: 4096\n  --total-seq-length: 2048\n  --bf16: true\n"
      "  --model-provider: llava_vlm\n  --language-model-checkpoint: /ckpt/vicuna\n"
      "  --accumulate-allreduce-grads-in-fp32: true\n");
  REQUIRE(doc["estimate"].is_object());
  const auto& e = doc["estimate"];
  // Vicuna-7B: 32 x (4 x 4096² + 3 x 4096 x 11008 + 2 x 4096) + 4096 and two
  // 32256 x 4096 tables; CLIP ViT-L/14-336 303,507,456 (24 x 12,596,224 +
  // 602,112 + 1,024 + 590,848 + 2 x 2,048); the projector 1024 x 4096 +
  // 4096 + 4096² + 4096 = 20,979,712. All bf16 (2 B).
  double vicuna = 32.0 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096) + 4096 + 2.0 * 32256 * 4096;
  double clip = 303'507'456, projector = 20'979'712;
  constexpr double kRounded = 0.005;  // the JSON rounds to 0.01 GiB
  CHECK(e["weights"].get<double>() == Approx(2 * (vicuna + clip + projector) / (1024.0 * 1024 * 1024)).margin(kRounded));
  // Only the projector has fp32 gradients and Adam's 12 B.
  CHECK(e["gradients"].get<double>() == Approx(4 * projector / (1024.0 * 1024 * 1024)).margin(kRounded));
  CHECK(e["optimizer"].get<double>() == Approx(12 * projector / (1024.0 * 1024 * 1024)).margin(kRounded));
  REQUIRE(e["not_counted"].size() == 1);
  CHECK(e["not_counted"][0].get<std::string>().find("model_config.yaml:11:3: loading --language-model-checkpoint") !=
        std::string::npos);
}

TEST_CASE("not counted: the RL inference engine, CUDA graphs and a distillation teacher, at their flags",
          "[estimate]") {
  nlohmann::json doc = estimate_args(
      "  --num-layers: 4\n  --hidden-size: 1024\n  --num-attention-heads: 16\n  --seq-length: 1024\n"
      "  --micro-batch-size: 1\n  --bf16: true\n  --perform-rl-step: true\n"
      "  --inference-dynamic-batching-buffer-size-gb: 20\n  --cuda-graph-impl: local\n"
      "  --export-kd-teacher-load: /ckpt/teacher\n");
  REQUIRE(doc["estimate"].is_object());
  const auto& lines = doc["estimate"]["not_counted"];
  REQUIRE(lines.size() == 3);
  // The RL engine at its buffer's flag (line 9), the graphs at line 10, the
  // teacher at line 11.
  CHECK(lines[0].get<std::string>().find("model_config.yaml:9:3: the RL step's inference engine") != std::string::npos);
  CHECK(lines[1].get<std::string>().find("model_config.yaml:10:3: CUDA graphs (--cuda-graph-impl local)") !=
        std::string::npos);
  CHECK(lines[2].get<std::string>().find("model_config.yaml:11:3: knowledge distillation") != std::string::npos);
}
