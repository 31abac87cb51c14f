// DeepSeek V4 in the memory estimate: the weights, derived by hand from
// Megatron-Core at NVIDIA/Megatron-LM dev d48bd6be0a85 (the branch Megatron
// Bridge 067f987df03b's DeepSeek-V4-Flash verification card names),
// megatron/core/transformer/: experimental_attention_variant/
// deepseek_v4_hybrid_attention.py (the MLA-style projections and the grouped
// output projection), experimental_attention_variant/csa.py (Compressor,
// CSAIndexer, attn_sink), hyper_connection.py (HyperConnectionModule),
// transformer_block.py and multi_token_prediction.py (the hyper-connection
// heads, e_proj/h_proj); and the dims of data/model_dims.csv (sources there
// and in docs/memory.md). The activations a layer's attention and
// hyper-connections save per token are derived by hand from the same files
// (csa.py's unfused and fused paths, csa_utils/fused_sparse_attention.py,
// dsa.py's FusedDSAIndexerLoss). The stage estimate built from them is
// tested in estimate_dsv4_stage_test.cpp.
#include <catch2/catch.hpp>

#include "lint/facts/estimate_dsv4.h"
#include "lint/model/catalog.h"

using namespace mblint;

namespace {

Dsv4Shape catalogued(const char* key) {
  std::optional<Dsv4Shape> s = dsv4_shape(find_model(key));
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("dsv4: the catalog's DeepSeek V4 rows", "[estimate][dsv4]") {
  Dsv4Shape flash = catalogued("deepseek_v4_flash");
  CHECK(flash.hidden == 4096);
  CHECK(flash.head_dim == 512);
  CHECK(flash.hc_mult == 4);
  CHECK(flash.hash_layers == 3);
  REQUIRE(flash.ratios.size() == 44);  // 43 decoder layers + the MTP layer
  CHECK(flash.ratios[0] == 0);         // two sliding-window layers first
  CHECK(flash.ratios[2] == 4);         // then CSA and HCA alternate
  CHECK(flash.ratios[3] == 128);
  CHECK(flash.ratios[42] == 4);
  CHECK(flash.ratios[43] == 0);  // the MTP layer: sliding window only
  CHECK(catalogued("deepseek_v4_flash_no_mtp").ratios.size() == 43);
  Dsv4Shape pro = catalogued("deepseek_v4_pro");
  REQUIRE(pro.ratios.size() == 62);
  CHECK(pro.ratios[0] == 128);
  CHECK(pro.index_topk == 1024);
  CHECK_FALSE(dsv4_shape(find_model("deepseek_v3")));
}

TEST_CASE("dsv4: one DeepSeek-V4-Flash layer's weights by hand", "[estimate][dsv4]") {
  Dsv4Shape s = catalogued("deepseek_v4_flash");
  // Sliding-window attention (ratio 0): wq_a 4096 x 1024 = 4,194,304 and its
  // norm 1024; wq_b 1024 x 64 x 512 = 33,554,432; wkv 4096 x 512 = 2,097,152
  // and its norm 512; wo_a (8 x 1024) x (64 x 512 / 8) = 33,554,432; wo_b
  // 8192 x 4096 = 33,554,432; attn_sink 64.
  double window = 4194304.0 + 1024 + 33554432 + 2097152 + 512 + 33554432 + 33554432 + 64;
  CHECK(dsv4_attention_params(s, 0) == window);  // 106,956,352
  // HCA (ratio 128): a compressor over 512-wide entries, coff 1: wkv and wgate
  // 2 x 4096 x 512 = 4,194,304, ape 128 x 512 = 65,536, norm 512.
  CHECK(dsv4_attention_params(s, 128) == window + 4194304 + 65536 + 512);
  // CSA (ratio 4): the compressor with overlap (coff 2): 2 x 4096 x 1024 =
  // 8,388,608, ape 4 x 1024, norm 512; the indexer: wq_b 1024 x 64 x 128 =
  // 8,388,608, weights_proj 4096 x 64 = 262,144, its compressor over 128-wide
  // entries: 2 x 4096 x 256 = 2,097,152, ape 4 x 256, norm 128.
  double csa = window + (8388608.0 + 4096 + 512) + (8388608.0 + 262144 + 2097152 + 1024 + 128);
  CHECK(dsv4_attention_params(s, 4) == csa);  // 126,098,624
  // A hyper-connection module: mapping_proj (4 x 4096) -> 24 = 393,216, three
  // alphas and a 24-wide bias.
  CHECK(dsv4_hyper_connection_params(s) == 393216.0 + 3 + 24);
  // MoE: router 256 x 4096 = 1,048,576; 256 SwiGLU experts 3 x 4096 x 2048 =
  // 25,165,824 each; the shared expert the same.
  CHECK(dsv4_moe_params(s) == 1048576.0 + 256 * 25165824.0 + 25165824.0);
  // The layer: attention + two hyper-connection modules + two RMSNorms + MoE.
  CHECK(dsv4_layer_params(s, 4) == csa + 2 * 393243.0 + 2 * 4096 + 6468665344.0);  // 6,595,558,646
  // MTP extras: enorm, hnorm, e_proj and h_proj 4096², final norm, the
  // hyper-connection head 4 x 16384 + 4 + 1.
  CHECK(dsv4_mtp_extra_params(s) == 2 * 4096.0 + 2 * 16777216.0 + 4096 + 65536 + 5);
}

TEST_CASE("dsv4: the whole model against the published parameter counts", "[estimate][dsv4]") {
  // Embedding and output layer 2 x 129,280 x 4096, the final norm and the
  // hyper-connection head, 2 window + 21 CSA + 20 HCA layers.
  Dsv4Shape flash = catalogued("deepseek_v4_flash");
  double flash_params = dsv4_model_params(flash, false);
  CHECK(flash_params == 284332230231.0);
  // Megatron Bridge 067f987df03b examples/model_verification_cards/deepseek-v4-flash/
  // card.yaml: "the combined 285 B parameter model", "approximately 570 GB merely
  // for the full BF16 weight" (284.3 B x 2 B = 568.7 GB); DeepSeek's model card: 284B.
  CHECK(flash_params / 1e9 == Approx(285).epsilon(0.005));
  CHECK(flash_params * 2 / 1e9 == Approx(570).epsilon(0.005));
  // The MTP layer (a window-attention layer + its extras): 6,610,048,635 more.
  CHECK(dsv4_model_params(flash, true) - flash_params == 6576416374.0 + 33632261.0);
  // DeepSeek-V4-Pro: DeepSeek's model card gives 1.6T parameters.
  Dsv4Shape pro = catalogued("deepseek_v4_pro");
  double pro_params = dsv4_model_params(pro, false);
  CHECK(pro_params == 1572997179491.0);
  CHECK(pro_params / 1e12 == Approx(1.6).epsilon(0.02));
}

TEST_CASE("dsv4: attended keys per query", "[estimate][dsv4]") {
  Dsv4Shape flash = catalogued("deepseek_v4_flash");
  // csa.py: the 128-key window; CSA adds min(index_topk 512, 4096 / 4); HCA
  // every one of 4096 / 128 compressed entries.
  CHECK(dsv4_attended_keys(flash, 0, 4096) == 128);
  CHECK(dsv4_attended_keys(flash, 4, 4096) == 640);
  CHECK(dsv4_attended_keys(flash, 128, 4096) == 160);
  CHECK(dsv4_attended_keys(flash, 4, 1024) == 128 + 256);  // fewer compressed entries than top-k
  Dsv4Shape pro = catalogued("deepseek_v4_pro");
  CHECK(dsv4_attended_keys(pro, 4, 4096) == 128 + 1024);
}

TEST_CASE("dsv4: one DeepSeek-V4-Flash layer's saved bytes per token by hand", "[estimate][dsv4]") {
  Dsv4Shape s = catalogued("deepseek_v4_flash");
  // The H100 recipes: seq 4096, TP 1, the unfused CSA path, selective
  // recompute of moe_act and mhc (no mla_up_proj).
  Dsv4Run run;
  run.seq = 4096;
  run.recompute_mhc = true;
  // A CSA layer (ratio 4, 640 keys per query), bytes per token:
  //   q_layernorm input 2 x 1024 + rstd 4                       2,052
  //   q latent 2 x 1024                                          2,048
  //   q up output + normed query 2 x 2 x 64 x 512 + rstd 4 x 64  131,328
  //   kv output + normed key 2 x 2 x 512 + 4                     2,052
  //   fp32 query 4 x 64 x 512                                    131,072
  //   gathered keys in fp32 4 x 640 x 512                        1,310,720
  //   exp(scores) + weights 2 x 4 x 64 x 640                     327,680
  //   indices 640 x (8 + 4 + 1)                                  8,320
  //   grouped projection input 2 x 64 x 512                      65,536
  //   linear_proj input 2 x 8 x 1024                             16,384
  //   compressor (2 x 512 wide) 8 x 1024 + 2 x 2 x 512 / 4       8,704
  //   indexer q 2 x 64 x 128 + weights (2 + 4) x 64              16,768
  //   indexer compressor (2 x 128 wide) 8 x 256 + 2 x 2 x 128 / 4 2,176
  //   indexer loss: top-k 8 x 512 + mask 4 x 1024 + lse 4 x 64   8,448
  // (the attention input is freed by the mhc recompute's norm checkpoint).
  double csa = 2052 + 2048 + 131328 + 2052 + 131072 + 1310720 + 327680 + 8320 + 65536 + 16384 + 8704 + 16768 +
               2176 + 8448;
  double attention = 0;
  for (const Dsv4Term& t : dsv4_attention_terms(s, 4, run)) attention += t.bytes;
  CHECK(attention == csa);  // 2,033,288
  // Hyper-connections, two modules: the fp32 stream copy 2 x 4 x 4 x 4096 =
  // 131,072; mixing 2 x (4 x (24 + 1 + 16) + 2 x 24) = 424; the attention and
  // MoE outputs 2 x 2 x 4096 = 16,384.
  double hc = 131072 + 424 + 16384;
  double hyper = 0;
  for (const Dsv4Term& t : dsv4_hyper_connection_terms(s, run)) hyper += t.bytes;
  CHECK(hyper == hc);  // 147,880
  CHECK(dsv4_layer_token_bytes(s, 4, run) == csa + hc);  // 2.18 MB a token: 8.9 GB a layer at 4096 tokens
  // A window layer: 128 keys, no compressor or indexer:
  // 4 x 128 x 512 + 8 x 64 x 128 + 13 x 128 replace the CSA's key terms.
  double window = csa - (1310720 + 327680 + 8320) + (262144 + 65536 + 1664) - (8704 + 16768 + 2176 + 8448);
  CHECK(dsv4_layer_token_bytes(s, 0, run) == window + hc);  // 827,696
  // An HCA layer: 160 keys and a 512-wide compressor (8 x 512 + 2 x 2 x 512 / 128).
  double hca = window - (262144 + 65536 + 1664) + (4 * 160 * 512 + 8 * 64 * 160 + 13 * 160) + (4096 + 16);
  CHECK(dsv4_layer_token_bytes(s, 128, run) == hca + hc);  // 914,144
  // Without mhc recompute the streams (2 x 2 x 4 x 4096), the aggregated
  // attention input (2 x 4096 + 4) and the attention input (2 x 4096) stay.
  Dsv4Run kept = run;
  kept.recompute_mhc = false;
  CHECK(dsv4_layer_token_bytes(s, 4, kept) == csa + hc + 65536 + 8196 + 8192);
}

TEST_CASE("dsv4: the fused CSA path and mla_up_proj recompute by hand", "[estimate][dsv4]") {
  Dsv4Shape s = catalogued("deepseek_v4_flash");
  // The GB200 library recipe's options: cuDNN/FlashMLA kernels, mhc and
  // mla_up_proj recomputed. A CSA layer keeps the q norm input and latent
  // (4,100), kv_full 2 x 512 x (1 + 1/4) = 1,280, the output and lse
  // 2 x 64 x 512 + 4 x 64 = 65,792, int32 indices 4 x 640 = 2,560, the
  // projection inputs 65,536 + 16,384, the compressor 8,704, the indexer's
  // q/weights (or their gradients) 16,768 and compressor 2,176.
  Dsv4Run run;
  run.seq = 4096;
  run.fused_csa = true;
  run.recompute_mhc = true;
  run.recompute_up_proj = true;
  double csa = 4100 + 1280 + 65792 + 2560 + 65536 + 16384 + 8704 + 16768 + 2176;
  double attention = 0;
  for (const Dsv4Term& t : dsv4_attention_terms(s, 4, run)) attention += t.bytes;
  CHECK(attention == csa);  // 183,300: about 11x less than the unfused path
  // A window layer pads its 128 keys to 128 and keeps no kv_full of its own
  // (the key is the recomputed up-projection's output).
  double window = 4100 + 65792 + 512 + 65536 + 16384;
  double w = 0;
  for (const Dsv4Term& t : dsv4_attention_terms(s, 0, run)) w += t.bytes;
  CHECK(w == window);
  // The fused hyper-connection kernel keeps the bf16 streams it is given
  // (fused_mhc_kernels.py CutileProjRmsComputeH), freed under mhc
  // recompute: no fp32 copy, 424 + 16,384 bytes a layer remain.
  run.fused_mhc = true;
  double hyper = 0;
  for (const Dsv4Term& t : dsv4_hyper_connection_terms(s, run)) hyper += t.bytes;
  CHECK(hyper == 424 + 16384);
}

TEST_CASE("dsv4: DeepSeek-V4-Pro's CSA layer where it differs", "[estimate][dsv4]") {
  Dsv4Shape pro = catalogued("deepseek_v4_pro");
  CHECK(pro.heads == 128);
  CHECK(pro.q_lora == 1536);
  CHECK(pro.o_groups == 16);
  // The GB300 library recipes: unfused CSA, mhc recompute, seq 4096; 1152
  // keys per query (128 + top-k 1024):
  //   q norm input + latent 2 x 1536 + 4 + 2 x 1536             6,148
  //   q up output + query 4 x 128 x 512 + 4 x 128                262,656
  //   kv 2,052; fp32 query 4 x 128 x 512                         264,196
  //   gathered keys 4 x 1152 x 512                               2,359,296
  //   exp + weights 8 x 128 x 1152                               1,179,648
  //   indices 13 x 1152                                          14,976
  //   grouped input 2 x 128 x 512 + linear_proj input 2 x 16 x 1024  163,840
  //   compressor 8,704; indexer 16,768 + 2,176
  //   indexer loss 8 x 1024 + 4 x 1024 + 4 x 128                 12,800
  Dsv4Run run;
  run.seq = 4096;
  run.recompute_mhc = true;
  double csa = 6148 + 262656 + 264196 + 2359296 + 1179648 + 14976 + 163840 + 8704 + 16768 + 2176 + 12800;
  double attention = 0;
  for (const Dsv4Term& t : dsv4_attention_terms(pro, 4, run)) attention += t.bytes;
  CHECK(attention == csa);  // 4,291,208
  // Hyper-connections over 7168: 2 x 4 x 4 x 7168 + 424 + 2 x 2 x 7168.
  double hyper = 0;
  for (const Dsv4Term& t : dsv4_hyper_connection_terms(pro, run)) hyper += t.bytes;
  CHECK(hyper == 229376 + 424 + 28672);
}

TEST_CASE("dsv4: Bridge's even pipeline split and a stage's attention activations", "[estimate][dsv4]") {
  // deepseek_v4_bridge.py set_deepseek_v4_pipeline_model_parallel_layout:
  // 43 layers on 4 stages: 11, 11, 11, 10; on 8 stages 6, 6, 6, 5 x 5.
  CHECK(dsv4_bridge_stage_layers(43, 4) == std::vector<int64_t>{11, 11, 11, 10});
  CHECK(dsv4_bridge_stage_layers(43, 8) == std::vector<int64_t>{6, 6, 6, 5, 5, 5, 5, 5});
  CHECK(dsv4_bridge_stage_layers(61, 1) == std::vector<int64_t>{61});
  // The H100 recipes' first stage: layers 0-10 = 2 window, 5 CSA, 4 HCA
  // layers: 2 x 827,696 + 5 x 2,181,168 + 4 x 914,144 = 16,217,808 bytes a
  // token; at 4096 tokens and 4 micro-batches in flight (1F1B, PP 4) 265.7 GB
  // before the MoE blocks, the weights and the optimizer state.
  Dsv4Shape flash = catalogued("deepseek_v4_flash");
  Dsv4Run run;
  run.seq = 4096;
  run.recompute_mhc = true;
  double stage0 = 0;
  for (int64_t l = 0; l < 11; ++l) stage0 += dsv4_layer_token_bytes(flash, flash.ratios[static_cast<size_t>(l)], run);
  CHECK(stage0 == 2 * 827696.0 + 5 * 2181168.0 + 4 * 914144.0);
  CHECK(stage0 * 4096 * 4 / 1e9 == Approx(265.7).epsilon(0.001));
}
