// DeepSeek V4 in the stage estimate (lint/facts/estimate_dsv4_stage.cpp),
// derived by hand from Megatron-LM dev d48bd6be0a85 (megatron/core/transformer/
// transformer_block.py: the n-stream expansion :476-480, the head :513-530,
// the mhc recompute plan :801-839; transformer_layer.py: the fp32 MLP
// aggregate :2297-2304 and the checkpointed pre-MLP norm :2307-2318;
// multi_token_prediction.py: _concat_embeddings :2149-2190 and _postprocess
// :2290-2312; hyper_connection.py learned_output_contract :194-207) and
// Megatron Bridge 067f987df03b (deepseek_v4_bridge.py: the layout :125-163,
// the SwiGLU clamp :503-504; recipes/deepseek/h100/deepseek_v4.py: the
// DeepSeek-V4-Flash H100 recipe). The per-layer attention and
// hyper-connection figures are the hand-derived ones of estimate_dsv4_test.cpp.
#include <catch2/catch.hpp>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_dsv4_stage.h"
#include "lint/model/catalog.h"
#include "tests/estimate_json.h"
#include "tests/lint_run.h"
#include "tests/memory_model_run.h"
#include "tests/memory_units.h"
#include "tests/test_support.h"

using namespace mblint;
using test::kGiB;

TEST_CASE("dsv4 stage: DeepSeek-V4-Flash on 32 H100 (BF16), first and last stage by hand", "[estimate][dsv4]") {
  std::optional<MemoryModel> m = test::recipe_memory_model("deepseek_v4_flash_pretrain_32gpu_h100_bf16_config");
  REQUIRE(m);
  REQUIRE(m->dsv4);
  // The recipe: TP 1, PP 4, EP 8, DP 8 (so expert DP 1), seq 4096, micro-batch
  // 1, 16 micro-batches, distributed Adam with fp32 main grads, selective
  // recompute of moe_act and mhc, apply_dsa_kernel_fusion False (the unfused
  // CSA path), use_fused_mhc False on Hopper; Bridge's layout 11/11/11/10 with
  // the MTP layer on the last stage.
  CHECK(m->stage_layers == std::vector<double>{11, 11, 11, 10});
  CHECK(m->stage_mtp == std::vector<int64_t>{0, 0, 0, 1});
  CHECK_FALSE(m->dsv4_run.fused_csa);
  CHECK_FALSE(m->dsv4_run.fused_mhc);
  CHECK(m->dsv4_run.recompute_mhc);
  CHECK(m->clamped_glu);
  MemoryEstimate e = estimate_model(*m);
  REQUIRE(e.stages.size() == 4);
  // Weights (estimate_dsv4.cpp's per-layer counts, tested by hand in
  // estimate_dsv4_test.cpp): a layer's routed experts 256 x 3 x 4096 x 2048 =
  // 6,442,450,944, 805,306,368 on each of the 8 EP ranks; the rest of a layer
  // (attention, two hyper-connection modules of 393,243, two norms 8,192,
  // router 1,048,576, shared expert 25,165,824): window 133,965,430, CSA
  // 153,107,702, HCA 138,225,782.
  // Stage 0: layers 0-10 = 2 window + 5 CSA + 4 HCA: 1,586,372,498, + the
  // embedding 129,280 x 4096 = 529,530,880: 2,115,903,378 dense; experts
  // 11 x 805,306,368 = 8,858,370,048. Weights 2 B x 10,974,273,426 = 20.44 GiB,
  // fp32 main grads 4 B = 40.88 GiB, Adam 12 B over DP 8 for the dense
  // (3,173,855,067) and over expert DP 1 for the experts (106,300,440,576):
  // 101.96 GiB.
  // Activations a micro-batch, T = 4096 tokens:
  //   attention + hyper-connections T x (2 x 827,696 + 5 x 2,181,168 +
  //     4 x 914,144) = T x 16,217,808 = 66,428,141,568
  //   MoE block (the mhc recompute frees the pre-MLP norm's input and output):
  //     router 9 x T x 256 = 9,437,184; 24,576 top-6 routed tokens: expert fc1
  //     input 2 x 24,576 x 4096, fc1 output 2 x 24,576 x 4096 and the
  //     un-permutation input 2 x 6 x T x 4096, 3 x 201,326,592 (moe_act
  //     recompute: no activation output); shared expert fc1 output 2 x T x 4096
  //     = 33,554,432, the unfused clamped GLU's activation output, linear half
  //     and clamped gate 3 x 2 x T x 2048 = 50,331,648, its fc2 input
  //     16,777,216: 714,080,256 a layer, x 11 = 7,854,882,816
  //   the mhc recompute block's n-stream input and output 2 x 2 x T x 4 x 4096
  //     = 268,435,456
  //   74,551,459,840 a micro-batch; 4 in flight (1F1B, PP 4) = 298,205,839,360,
  //   + token and position ids 4 x 16 x T: 298,206,101,504 (277.73 GiB).
  // Other: GEMM workspaces 67,108,864 + pipeline buffers (n streams)
  // 2 x 2 x T x 4 x 4096 = 268,435,456.
  double w0 = 2115903378.0 + 8858370048.0;
  double stage0 = w0 * 2 + w0 * 4 + (2115903378.0 / 8 + 8858370048.0) * 12 + 298206101504.0 + 335544320.0;
  CHECK(e.stages[0].peak_allocated * kGiB == Approx(stage0).epsilon(1e-9));  // 441.32 GiB
  CHECK(e.stage == 0);
  CHECK(e.weights == Approx(20.44).margin(0.005));
  CHECK(e.optimizer == Approx(101.96).margin(0.005));
  // Last stage: layers 33-42 = 5 CSA + 5 HCA: 1,456,667,420; the output layer
  // 529,530,880, final norm 4,096 and the head 4 x 16,384 + 5 = 65,541; the MTP
  // layer (window) 133,965,430 and its e_proj, h_proj, three norms and head
  // 33,632,261; the MTP stage's own embedding 529,530,880: 2,683,396,508
  // dense; experts 11 x 805,306,368 (10 layers and the MTP layer).
  // Activations, one micro-batch in flight:
  //   layers T x (5 x 2,181,168 + 5 x 914,144) + 10 x 714,080,256 + the
  //     block 268,435,456 = 70,801,227,776
  //   final norm and output-layer inputs 2 x 2 x T x 4096 = 67,108,864; the
  //     head's n-stream input 2 x 4 x 4096 and its fp32 rsqrt and 4 gates,
  //     32,788 a token: 134,299,648
  //   logits: TE's cross entropy keeps the bf16 logits of the main and the MTP
  //     loss, 2 x 2 x T x 129,280 = 2,118,123,520
  //   the MTP depth (no mhc recompute manager): the window layer and its
  //     streams T x 909,620 (827,696 + 65,536 + 8,196 + 8,192), its MoE block
  //     714,080,256, the pre-MLP norm's fp32 input + rstd T x 16,388 and output
  //     T x 8,192; enorm output + rstd and hnorm output + rstd T x 40,980; its
  //     head T x 32,788, final norm input + rstd and output-layer input
  //     T x 16,388: 4,909,842,432; its embedding input 2 x T x 4096 = 33,554,432
  //   78,064,156,672 (72.70 GiB).
  double w3 = 2683396508.0 + 8858370048.0;
  double stage3 = w3 * 2 + w3 * 4 + (2683396508.0 / 8 + 8858370048.0) * 12 + 78064156672.0 + 335544320.0;
  CHECK(e.stages[3].peak_allocated * kGiB == Approx(stage3).epsilon(1e-9));  // 240.26 GiB
  // NVIDIA's own note: Megatron Bridge 067f987df03b examples/models/deepseek_v4/
  // README.md:139, "Full SFT on H100-80GB needs >=64 GPU ... At 32 GPU
  // (TP1/PP4/EP8) the fp32 master-param buffer can't shard and OOMs": weights,
  // grads and optimizer alone are 163 GiB on stage 0.
  CHECK(e.total > e.capacity);
}

TEST_CASE("dsv4 stage: the fused kernels, a written interleaved layout, what is declined", "[estimate][dsv4]") {
  // The GB200 library recipe sets apply_dsa_kernel_fusion True and, on
  // Blackwell, use_fused_mhc (deepseek_v4_bridge.py:105-111).
  std::optional<MemoryModel> gb200 = test::recipe_memory_model("deepseek_v4_flash_pretrain_64gpu_gb200_bf16_config");
  REQUIRE(gb200);
  CHECK(gb200->dsv4_run.fused_csa);
  CHECK(gb200->dsv4_run.fused_mhc);
  CHECK(gb200->stage_layers == std::vector<double>{6, 6, 6, 5, 5, 5, 5, 5});
  // The Pro perf recipe writes "Et*4|(tttt|)*14tmL" at PP 4 x VPP 4: chunk v on
  // stage v % 4, the last chunk one decoder layer and the MTP layer.
  std::optional<MemoryModel> pro = test::recipe_memory_model("deepseek_v4_pro_pretrain_256gpu_gb300_fp8mx_config");
  REQUIRE(pro);
  CHECK(pro->vpp == 4);
  CHECK(pro->stage_layers == std::vector<double>{16, 16, 16, 13});
  CHECK(pro->stage_mtp == std::vector<int64_t>{0, 0, 0, 1});
  // deepseek_v4_hybrid_attention.py:90-92 asserts TP 1.
  std::string why;
  CHECK_FALSE(test::recipe_memory_model("deepseek_v4_flash_pretrain_32gpu_h100_bf16_config",
                           "model:\n  tensor_model_parallel_size: 2\n", &why));
  CHECK(why.find("supports TP 1 only (experimental_attention_variant/deepseek_v4_hybrid_attention.py:90-92") !=
        std::string::npos);
  why.clear();
  CHECK_FALSE(test::recipe_memory_model("deepseek_v4_flash_pretrain_32gpu_h100_bf16_config",
                           "model:\n  context_parallel_size: 2\n", &why));
  CHECK(why.find("DeepSeek V4 at context parallel size 2") != std::string::npos);
  // The CLI estimates the recipes.
  auto doc = test::estimate_json({"--recipe", "deepseek_v4_flash_pretrain_32gpu_h100_bf16_config"});
  CHECK(doc["estimate"].is_object());
}

TEST_CASE("dsv4 stage: fine-grained offloading of core_attn and attn_proj by hand", "[estimate][dsv4]") {
  // deepseek_v4_hybrid_attention.py:311-331: "core_attn" offloads what the
  // sparse attention module saves inside its context (the attention, the
  // compressor and the indexer: csa.py runs them all); :474-477 "attn_proj"
  // linear_proj's input. The GB200 recipe's fused CSA layer (estimate_dsv4_test.cpp:
  // 183,300 B a token) keeps the q norm input and latent 4,100 and the grouped
  // projection's input 65,536 with both offloaded, and linear_proj's input
  // 16,384 more with core_attn only.
  std::optional<Dsv4Shape> flash = dsv4_shape(find_model("deepseek_v4_flash"));
  REQUIRE(flash);
  Dsv4Run run;
  run.seq = 4096;
  run.fused_csa = true;
  run.recompute_mhc = true;
  run.recompute_up_proj = true;
  run.offload_core_attn = true;
  auto attention = [&](const Dsv4Run& r) {
    double sum = 0;
    for (const Dsv4Term& t : dsv4_attention_terms(*flash, 4, r)) sum += t.bytes;
    return sum;
  };
  CHECK(attention(run) == 4100 + 65536 + 16384);
  run.offload_attn_proj = true;
  CHECK(attention(run) == 4100 + 65536);
}
