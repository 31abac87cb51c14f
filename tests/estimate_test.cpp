// The memory estimate's physics on the configurations of Korthikanti et al.
// 2022 (Table 2 and 3; values derived in megatron-core-checks.md section 5),
// and its parameter and optimizer accounting on hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>

#include "lint/facts/estimate.h"
#include "tests/dense_model.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::kGiB;

namespace {

// The paper's model: GELU MLP of 4h, multi-head attention, dropout, unfused
// attention (the paper stores the as²b score tensors), 16-bit activations.
MemoryModel paper_model(int64_t heads, int64_t hidden, int64_t layers, int64_t tp, int64_t pp, int64_t micro_batch) {
  MemoryModel m = test::dense_gpt(layers, hidden, heads, 2048, 51200);
  m.tp = tp;
  m.pp = pp;
  m.micro_batch = micro_batch;
  m.microbatches = 64;
  m.unfused_attention = true;
  m.hidden_dropout = 0.1;
  m.attention_dropout = 0.1;
  m.stage_layers.assign(static_cast<size_t>(pp), static_cast<double>(layers) / static_cast<double>(pp));
  m.stage_mtp.assign(static_cast<size_t>(pp), 0);
  return m;
}

double sbh(const MemoryModel& m) { return static_cast<double>(m.seq) * m.micro_batch * m.hidden; }
double score_term(const MemoryModel& m) {  // 5as/(ht)
  return 5.0 * m.heads * m.seq / (static_cast<double>(m.hidden) * m.tp);
}

void selective(MemoryModel& m) {
  m.recompute = "selective";
  m.recompute_modules = {"core_attn"};
}

// A one-stage hybrid stack of 4 layers of `kinds` whose MoE layers have 8
// experts of f_e 1024 (not gated), top-2.
void with_moe_stack(MemoryModel& m, LayerKinds kinds) {
  m.experts = 8;
  m.topk = 2;
  m.moe_ffn = 1024;
  m.moe_pattern.assign(4, true);
  m.hybrid_stages = {kinds};
  m.stage_layers = {4};
}

// A MoE layer's model: hidden 2048, 8 experts of f_e 1024 (not gated),
// top-2, all-to-all dispatch over EP 4, TP 2 with SP, s 2048, b 1.
MemoryModel moe_model() {
  MemoryModel m = paper_model(16, 2048, 8, 2, 1, 1);
  m.unfused_attention = false;
  m.sp = true;
  m.experts = 8;
  m.moe_ffn = 1024;
  m.ep = 4;
  m.dispatcher = "alltoall";
  m.topk = 2;
  return m;
}

}  // namespace

TEST_CASE("estimate: per-layer activations are Korthikanti's Table 2 exactly", "[estimate]") {
  for (auto [a, h, t] : {std::tuple{64, 6144, 8}, {96, 12288, 8}, {128, 20480, 8}, {160, 25600, 8}, {32, 4096, 1}}) {
    MemoryModel m = paper_model(a, h, 48, t, 1, 1);
    double base = sbh(m);
    INFO("a=" << a << " h=" << h << " t=" << t);
    // eq. (2): TP baseline.
    CHECK(layer_activation_bytes(m, false) == Approx(base * (10 + 24.0 / t + score_term(m))).epsilon(1e-12));
    // eq. (1) with t = 1 is sbh(34 + 5as/h).
    // eq. (4): TP + SP.
    m.sp = t > 1;
    double sp_expected = t > 1 ? base * (34.0 / t + score_term(m)) : base * (34 + score_term(m));
    CHECK(layer_activation_bytes(m, false) == Approx(sp_expected).epsilon(1e-12));
    // eq. (6): TP + SP + selective.
    selective(m);
    CHECK(layer_activation_bytes(m, false) == Approx(base * 34.0 / (t > 1 ? t : 1)).epsilon(1e-12));
    // TP + selective without SP.
    m.sp = false;
    CHECK(layer_activation_bytes(m, false) == Approx(base * (10 + 24.0 / t)).epsilon(1e-12));
  }
}

TEST_CASE("estimate: the paper's first-stage totals (GiB) for 22B", "[estimate]") {
  // 22B: a 64, h 6144, L 48, t 8, p 1, s 2048, b 4 (Table 3).
  MemoryModel m = paper_model(64, 6144, 48, 8, 1, 4);
  auto total = [&] { return layers_in_flight(m, 0) * layer_activation_bytes(m, false) / kGiB; };
  CHECK(total() == Approx(59.3).margin(0.05));  // eq. (2)
  m.sp = true;
  CHECK(total() == Approx(39.6).margin(0.05));  // eq. (5)
  selective(m);
  CHECK(total() == Approx(9.6).margin(0.05));  // eq. (6)
  m.sp = false;
  CHECK(total() == Approx(29.2).margin(0.05));  // TP + selective
}

TEST_CASE("estimate: the interleaved schedule holds L(1 + (p-1)/(pm)) layers on the first stage", "[estimate]") {
  // 175B: p 8, m 3 interleaved stages -> x1.292; 530B: p 35, m 3 -> x1.324.
  MemoryModel gpt3 = paper_model(96, 12288, 96, 8, 8, 1);
  gpt3.vpp = 3;
  CHECK(layers_in_flight(gpt3, 0) == Approx(96 * (1 + 7.0 / 24)).epsilon(1e-12));
  gpt3.sp = true;
  selective(gpt3);
  CHECK(layers_in_flight(gpt3, 0) * layer_activation_bytes(gpt3, false) / kGiB == Approx(12.4).margin(0.05));
  MemoryModel mtnlg = paper_model(128, 20480, 105, 8, 35, 1);
  mtnlg.vpp = 3;
  mtnlg.microbatches = 280;
  mtnlg.sp = true;
  selective(mtnlg);
  CHECK(layers_in_flight(mtnlg, 0) / 105 == Approx(1 + 34.0 / 105).epsilon(1e-12));
  CHECK(layers_in_flight(mtnlg, 0) * layer_activation_bytes(mtnlg, false) / kGiB == Approx(23.1).margin(0.05));
  // 1T: p 64, no interleaving: L/p layers x p micro-batches = L.
  MemoryModel one_t = paper_model(160, 25600, 128, 8, 64, 1);
  one_t.microbatches = 512;
  CHECK(layers_in_flight(one_t, 0) == Approx(128));
  CHECK(layers_in_flight(one_t, 63) == Approx(2));  // the last stage: one micro-batch
}

TEST_CASE("estimate: 1F1B stages hold min(PP - stage, m) micro-batches", "[estimate]") {
  MemoryModel m = paper_model(32, 4096, 32, 1, 4, 1);
  m.microbatches = 2;
  CHECK(layers_in_flight(m, 0) == Approx(8 * 2));  // capped by m
  CHECK(layers_in_flight(m, 2) == Approx(8 * 2));
  CHECK(layers_in_flight(m, 3) == Approx(8 * 1));
}

TEST_CASE("estimate: flash attention drops the score tensors; SwiGLU and GQA change the MLP and K/V", "[estimate]") {
  MemoryModel m = paper_model(32, 4096, 32, 1, 1, 1);
  m.unfused_attention = false;
  double base = sbh(m);
  double lse = 4.0 * m.seq * m.micro_batch * m.heads;  // fp32 log-sum-exp per row and head
  CHECK(layer_activation_bytes(m, false) == Approx(base * 34 + lse).epsilon(1e-12));
  m.swiglu = true;  // fc1 output twice as wide: +2·sbf = +8sbh at f = 4h
  CHECK(layer_activation_bytes(m, false) == Approx(base * 42 + lse).epsilon(1e-12));
  m.swiglu = false;
  m.query_groups = 8;  // K and V: 4sbh -> 4sbh·g/a = 1sbh
  CHECK(layer_activation_bytes(m, false) == Approx(base * 31 + lse).epsilon(1e-12));
  m.hidden_dropout = 0;  // no dropout masks (2 x sbh)
  CHECK(layer_activation_bytes(m, false) == Approx(base * 29 + lse).epsilon(1e-12));
}

TEST_CASE("estimate: full recompute keeps 2sbh per layer plus one layer's working set", "[estimate]") {
  MemoryModel m = paper_model(64, 6144, 48, 8, 1, 4);
  m.recompute = "full";
  m.recompute_method = "uniform";
  m.recompute_layers = 1;
  MemoryEstimate e = estimate_model(m);
  MemoryModel no_recompute = m;
  no_recompute.recompute.clear();
  MemoryEstimate full = estimate_model(no_recompute);
  double layer = layer_activation_bytes(no_recompute, false);
  double saved = (48 * layer - (48 * 2 * sbh(m) + layer)) / kGiB;
  CHECK(full.activations - e.activations == Approx(saved).epsilon(1e-9));
  // 48 x 2sbh = 4.50 GiB (the paper's "full recompute" column for 22B).
  CHECK(48 * 2 * sbh(m) / kGiB == Approx(4.50).margin(0.005));
}

TEST_CASE("estimate: 18 bytes per parameter, 6 + 12/d with the distributed optimizer", "[estimate]") {
  MemoryModel m = paper_model(8, 512, 12, 1, 1, 4);
  m.seq = 1024;
  m.vocab = 50304;
  m.positions = 1024;
  m.dp = 8;
  MemoryEstimate plain = estimate_model(m);
  // 12 layers x (12h² + 13h) + V·h + positions·h + final norm 2h.
  double h = 512;
  double params = 12 * (12 * h * h + 13 * h) + 50304 * h + 1024 * h + 2 * h;
  CHECK(plain.weights == Approx(params * 2 / kGiB).epsilon(1e-9));
  CHECK(plain.gradients == Approx(params * 4 / kGiB).epsilon(1e-9));
  CHECK(plain.optimizer == Approx(params * 12 / kGiB).epsilon(1e-9));
  m.distributed_optimizer = true;
  MemoryEstimate sharded = estimate_model(m);
  CHECK(sharded.optimizer == Approx(params * 12 / 8 / kGiB).epsilon(1e-9));
  m.cp = 2;  // the distributed optimizer shards over DP x CP
  CHECK(estimate_model(m).optimizer == Approx(params * 12 / 16 / kGiB).epsilon(1e-9));
}

TEST_CASE("estimate: the last stage holds the output layer and the fp32 logits", "[estimate]") {
  MemoryModel m = paper_model(8, 512, 12, 1, 2, 4);
  m.seq = 1024;
  m.vocab = 50304;
  m.microbatches = 1;  // one micro-batch in flight on both stages
  MemoryEstimate e = estimate_model(m);
  REQUIRE(e.stages.size() == 2);
  // Tied embeddings with PP > 1: both ends hold V·h; the last adds 6 B per
  // logit (bf16 logits + fp32 softmax + bf16 gradient).
  double logits = 1024.0 * 4 * 50304 * 6 / kGiB;
  CHECK(e.stages[1].peak_allocated > logits);
  CHECK(e.stage == 1);
  CHECK(e.rank.find("last pipeline stage") != std::string::npos);
}

TEST_CASE("estimate: FP8 keeps the quantized GEMM inputs (1 byte) for the backward pass", "[estimate]") {
  MemoryModel m = paper_model(32, 4096, 32, 1, 1, 1);
  m.unfused_attention = false;
  m.hidden_dropout = 0;
  double bf16 = layer_activation_bytes(m, false);
  m.fp8 = true;
  // QKV input 2sbh, projection input 2sbh, fc1 input 2sbh and fc2 input 8sbh halve: -7sbh.
  CHECK(bf16 - layer_activation_bytes(m, false) == Approx(7 * sbh(m)).epsilon(1e-12));
}

// TE's _Linear.forward keeps only the column-wise quantized input for the
// weight-gradient GEMM ("Discard row-wise data"): with NVFP4 that is 4-bit
// values plus an E4M3 scale per 16, 0.5625 B per element.
TEST_CASE("estimate: NVFP4 keeps 4-bit GEMM inputs with a scale per 16 for the backward pass", "[estimate]") {
  MemoryModel m = paper_model(32, 4096, 32, 1, 1, 1);
  m.unfused_attention = false;
  m.hidden_dropout = 0;
  double bf16 = layer_activation_bytes(m, false);
  m.fp4 = true;
  // The same four GEMM inputs, 7sbh elements at 2 B, now at 0.5625 B.
  CHECK(bf16 - layer_activation_bytes(m, false) == Approx(7 * sbh(m) * (2 - 0.5625)).epsilon(1e-12));
  // first_last_layers_bf16 keeps 4 of the 32 layers in BF16: their inputs stay 2 B (spread over the layers).
  m.bf16_edge_layers = 4;
  double mixed = 7 * sbh(m) * (2 - (0.5625 * 28 + 2 * 4) / 32);
  CHECK(bf16 - layer_activation_bytes(m, false) == Approx(mixed).epsilon(1e-12));
}

TEST_CASE("estimate: NVFP4 without NVFP4 parameters caches both 4-bit layouts of each linear weight", "[estimate]") {
  MemoryModel m = paper_model(8, 1024, 8, 1, 1, 1);
  m.add_bias = false;
  MemoryEstimate bf16 = estimate_model(m);
  m.fp4 = true;
  m.fp8_weight_cache = true;
  MemoryEstimate cached = estimate_model(m);
  // 12h² linear parameters per layer (QKV 3h², projection h², MLP 8h²) and,
  // as for FP8's cache, the TP-sharded embedding (V·h): 2 x 0.5625 B each.
  double linear = 8 * 12.0 * 1024 * 1024 + 51200.0 * 1024;
  CHECK((cached.weights - bf16.weights) * kGiB == Approx(linear * 1.125).epsilon(1e-9));
  m.fp4_param = true;  // NVFP4 parameters: no bf16 copy to cache from (counted at the bf16 2 B)
  CHECK(estimate_model(m).weights == Approx(bf16.weights).epsilon(1e-12));
}

TEST_CASE("estimate: MoE activations grow with top-k and the padded capacity", "[estimate]") {
  MemoryModel m = moe_model();
  double k2 = layer_activation_bytes(m, true);
  m.topk = 4;
  double k4 = layer_activation_bytes(m, true);
  // Per extra routed copy of a local token (s·b/t tokens): fc1 input 2h, fc1
  // output 2f_e, activation output 2f_e (ETP 1), un-permutation input 2h.
  double local = 2048.0 * 1 / 2;
  CHECK(k4 - k2 == Approx(2 * local * (2 * 2 * 2048 + 4 * 1024)).epsilon(1e-12));
  m.capacity_factor = 1.5;
  m.pad_to_capacity = true;
  CHECK(layer_activation_bytes(m, true) > k4);
}

// A Mamba layer of a hybrid stack, derived by hand from Megatron-Core's
// megatron/core/ssm/mamba_mixer.py at core_v0.16.0 (MambaMixer.__init__ and
// _ssm_training) and mamba_ssm's mamba_split_conv1d_scan_combined: hidden
// 1024, default mixer dims (heads 2·1024/64 = 32, head dim 64, d_inner 2048,
// 8 groups, state 128), s 1024, b 4, TP 1, bf16, hidden dropout 0.1.
TEST_CASE("estimate: a Mamba layer's activations and parameters, by hand", "[estimate]") {
  MemoryModel m = paper_model(16, 1024, 2, 1, 1, 4);
  m.seq = 1024;
  const double tokens = 4096;  // s·b
  // in_proj output width: z and x (2·2048) + B and C (2·8·128) + dt (32) = 6176.
  const double projected = 6176;
  double expected = 2 * tokens * 1024          // in_proj's fused norm input
                    + 2 * tokens * 1024        // in_proj GEMM input (norm output)
                    + 2 * tokens * projected   // zxBCdt, saved by the fused conv + scan
                    + 2 * tokens * 2048        // out_x, the scan output before the z gate
                    + 2 * tokens * 2048 + 4 * tokens * 8  // gated RMSNorm input + fp32 rstd per group
                    + 2 * tokens * 2048        // out_proj input
                    + tokens * 1024;           // dropout mask of the bias-dropout-add
  CHECK(expected == 122028032.0);
  CHECK(mamba_layer_bytes(m) == Approx(expected).epsilon(1e-12));
  // TP 2 splits the mixer's heads and groups; without SP the norm and in_proj
  // inputs and the dropout mask stay whole.
  MemoryModel tp2 = m;
  tp2.tp = 2;
  double split = 2 * tokens * projected + 2 * tokens * 2048 * 3 + 4 * tokens * 8;
  CHECK(mamba_layer_bytes(tp2) == Approx(expected - split / 2).epsilon(1e-12));

  // Parameters: in_proj 1024 x 6176, conv1d (2048 + 2·8·128) channels x (4 taps
  // + bias), dt_bias, A_log, D per head (3·32), gated norm 2048, out_proj
  // 2048 x 1024, and in_proj's fused LayerNorm (weight and bias, 2·1024).
  const double per_layer = 1024 * projected + 4096 * 5 + 3 * 32 + 2048 + 2048 * 1024 + 2 * 1024;
  CHECK(per_layer == 8446048.0);
  auto weights = [&](double mamba_layers) {
    MemoryModel h = m;
    h.hybrid_stages = {LayerKinds{mamba_layers, 0, 0, 0}};
    h.stage_layers = {mamba_layers};
    return estimate_model(h).weights * kGiB;
  };
  CHECK(weights(2) - weights(1) == Approx(2 * per_layer).epsilon(1e-9));  // 2 bytes each
}

TEST_CASE("estimate: a hybrid stack sums its layer kinds", "[estimate]") {
  // "M*-E" on one stage: one layer of each kind. Its activations are a Mamba
  // layer, an attention block alone, an MLP block alone and a MoE block alone.
  MemoryModel t = paper_model(16, 1024, 4, 1, 1, 1);
  t.unfused_attention = false;
  t.experts = 8;
  t.topk = 2;
  t.moe_ffn = 1024;
  MemoryModel hybrid = t;
  hybrid.hybrid_stages = {LayerKinds{1, 1, 1, 1}};
  hybrid.stage_layers = {4};
  // A transformer layer = attention + MLP: dense + MoE transformer layers
  // hold two attention blocks, so the hybrid holds one attention block less.
  MemoryModel attention_only = t;
  attention_only.hybrid_stages = {LayerKinds{0, 1, 0, 0}};
  attention_only.stage_layers = {1};
  double dense = layer_activation_bytes(t, false), moe = layer_activation_bytes(t, true);
  double attention = estimate_model(attention_only).activations - estimate_model([&] {
                       MemoryModel none = attention_only;
                       none.hybrid_stages = {LayerKinds{}};
                       none.stage_layers = {0};
                       return none;
                     }()).activations;
  double expected = mamba_layer_bytes(t) + dense + moe - attention * kGiB;
  MemoryModel empty = hybrid;
  empty.hybrid_stages = {LayerKinds{}};
  empty.stage_layers = {0};
  CHECK((estimate_model(hybrid).activations - estimate_model(empty).activations) * kGiB == Approx(expected).epsilon(1e-9));
}

// LatentMoE, derived by hand from Megatron-Core's moe_layer.py (core, read at
// NVIDIA/Megatron-LM d98e8a64: fc1_latent_proj hidden -> moe_latent_size and
// fc2_latent_proj back, TELinear parallel_mode "duplicated"; the router and
// the shared experts keep the hidden width) and token_dispatcher.py (the
// dispatcher moves latent-width tokens): hidden 2048, latent 512, 8 experts
// of f_e 1024 (not gated), top-2, EP 4, TP 2 with SP, s 2048, b 1.
TEST_CASE("estimate: LatentMoE dispatches latent-width tokens and adds two duplicated projections", "[estimate]") {
  MemoryModel m = moe_model();
  double plain = layer_activation_bytes(m, true);
  m.moe_latent = 512;
  double latent = layer_activation_bytes(m, true);
  // Per local token (s·b/t = 1024 tokens): the k routed copies at the expert
  // fc1 input and at the un-permutation shrink from 2h to 2L bytes each; the
  // up-projection keeps its latent input, 2L.
  const double local = 2048.0 * 1 / 2;
  CHECK(plain - latent == Approx(local * (2 * 2 * 2 * (2048 - 512) - 2 * 512)).epsilon(1e-12));

  // Parameters of one MoE layer on one rank: the experts shrink from h to L
  // on both GEMMs (8 experts / EP 4 = 2 here), the two projections h x L are
  // added whole (not split over TP).
  auto weights = [](MemoryModel x) {
    x.moe_pattern.assign(8, true);
    return test::bf16_parameters(x);
  };
  MemoryModel dense_width = m;
  dense_width.moe_latent = 0;
  double per_layer = 2.0 * (2048 * 1024 + 1024 * 2048) - 2.0 * (512 * 1024 + 1024 * 512) - 2 * 2048 * 512;
  CHECK(weights(dense_width) - weights(m) == Approx(8 * per_layer).epsilon(1e-9));
}

// Multi-token prediction of a hybrid stack, derived by hand from Megatron-
// Core's multi_token_prediction.py (MultiTokenPredictionBlock with
// mtp_use_repeated_layer: one MultiTokenPredictionLayer built and run once per
// depth; the layer's enorm, hnorm, eh_proj 2h -> h and final_layernorm around
// a HybridStack of the MTP pattern) and hybrid_layer_allocation.py (the
// unified pattern "main/*E/*E": two depths of one attention and one MoE
// layer), as Nemotron 3.5 Lightning trains it: hidden 1024, 8 experts.
TEST_CASE("estimate: a hybrid's repeated MTP layer is built once and run per depth", "[estimate]") {
  MemoryModel m = paper_model(16, 1024, 4, 1, 1, 1);
  m.unfused_attention = false;
  m.hidden_dropout = 0;
  m.attention_dropout = 0;
  m.rmsnorm = true;
  m.add_bias = false;
  with_moe_stack(m, LayerKinds{2, 1, 0, 1});
  MemoryModel none = m;
  m.mtp_kinds = LayerKinds{0, 1, 0, 1};
  m.mtp_layers = 2;
  m.stage_mtp = {2};
  m.mtp_repeated = true;
  MemoryEstimate with = estimate_model(m), without = estimate_model(none);

  // Activations: per depth, an attention block and a MoE block of the stack,
  // the concatenated [embedding, hidden] input (2h wide, 2 bytes) and the
  // depth's own fp32 softmax over the logits (4 bytes x s·b x V).
  MemoryModel attention_only = none, moe_only = none;
  attention_only.hybrid_stages = {LayerKinds{0, 1, 0, 0}};
  moe_only.hybrid_stages = {LayerKinds{0, 0, 0, 1}};
  MemoryModel empty = none;
  empty.hybrid_stages = {LayerKinds{}};
  double base = estimate_model(empty).activations;
  double attention = (estimate_model(attention_only).activations - base) * kGiB;
  double moe = (estimate_model(moe_only).activations - base) * kGiB;
  const double tokens = 2048;
  double per_depth = attention + moe + 2 * 2 * tokens * 1024 + 4 * tokens * 51200;
  CHECK((with.activations - without.activations) * kGiB == Approx(2 * per_depth).epsilon(1e-9));

  // Weights: one layer for both depths: attention (QKV 1024 x 3·1024, proj
  // 1024 x 1024, its norm 1024), MoE (router 1024 x 8, 8 experts of
  // 2 x 1024 x 1024, its norm 1024), eh_proj 2·1024 x 1024 and three norms.
  double layer = 1024.0 * 3 * 1024 + 1024 * 1024 + 1024   // attention
                 + 1024 * 8 + 8 * 2 * 1024 * 1024 + 1024  // MoE
                 + 2 * 1024 * 1024 + 3 * 1024;            // eh_proj, enorm, hnorm, final_layernorm
  CHECK((with.weights - without.weights) * kGiB == Approx(2 * layer).epsilon(1e-9));
  // Without the repeated layer each depth builds its own.
  m.mtp_repeated = false;
  CHECK((estimate_model(m).weights - without.weights) * kGiB == Approx(2 * 2 * layer).epsilon(1e-9));
}

// LoRA on a hybrid stack, derived by hand from Megatron Bridge's
// peft/lora.py (ParallelLinearAdapter: A in x r, B r x out per targeted
// linear; grouped experts share one adapter per EP rank by default) with the
// Nemotron PEFT recipes' targets (linear_qkv, linear_proj, linear_fc1,
// linear_fc2, in_proj, out_proj; MB src/megatron/bridge/recipes/nemotronh/
// h100/nemotron_3_nano.py:564): one layer of each kind, hidden 1024, rank 32.
TEST_CASE("estimate: LoRA on a hybrid stack trains adapters on every layer kind's projections", "[estimate]") {
  MemoryModel m = paper_model(16, 1024, 4, 1, 1, 1);
  with_moe_stack(m, LayerKinds{1, 1, 1, 1});
  m.lora_rank = 32;
  // attention: qkv 1024 -> 3·1024, proj 1024 -> 1024; MLP: fc1 1024 -> 4096,
  // fc2 4096 -> 1024; Mamba: in_proj 1024 -> 6176 (z, x, B, C, dt of the
  // default mixer), out_proj 2048 -> 1024; MoE: one shared adapter on the
  // experts' fc1 1024 -> 1024 and fc2 1024 -> 1024.
  double adapters = 32.0 * ((1024 + 3072) + (1024 + 1024)    // attention
                            + (1024 + 4096) + (4096 + 1024)  // MLP
                            + (1024 + 6176) + (2048 + 1024)  // Mamba
                            + (1024 + 1024) + (1024 + 1024));  // MoE
  CHECK(adapters == 984064.0);
  MemoryEstimate e = estimate_model(m);
  // Only the adapters get fp32 gradients and Adam state (fp32 master + two moments).
  CHECK(e.gradients * kGiB == Approx(4 * adapters).epsilon(1e-12));
  CHECK(e.optimizer * kGiB == Approx(12 * adapters).epsilon(1e-12));

  // At TP 2 both weights of every adapter are split over the TP group
  // (ParallelLinearAdapter, MB 067f987df03b peft/utils.py:1033-1080:
  // linear_in row-parallel behind a row-parallel base, column-parallel over
  // the rank otherwise; linear_out column-parallel), and the routed experts'
  // over the expert TP group, here 1.
  m.tp = 2;
  double moe = 32.0 * ((1024 + 1024) + (1024 + 1024));
  double split = (adapters - moe) / 2 + moe;
  CHECK(split == 557568.0);
  CHECK(estimate_model(m).gradients * kGiB == Approx(4 * split).epsilon(1e-12));
}

// LoRA on a dense transformer (linear_qkv, linear_proj, linear_fc1,
// linear_fc2, Bridge's default targets) at TP 4: 2 layers, h 1024, 16
// heads (MHA), ffn 4096 (not gated), rank 16.
TEST_CASE("estimate: LoRA adapters of a dense transformer are split over TP on both sides", "[estimate]") {
  MemoryModel m = paper_model(16, 1024, 2, 4, 1, 1);
  m.ffn = 4096;
  m.lora_rank = 16;
  // qkv 1024 -> 3072, proj 1024 -> 1024, fc1 1024 -> 4096, fc2 4096 -> 1024,
  // each r x (in + out) / TP.
  double per_layer = 16.0 * ((1024 + 3072) + (1024 + 1024) + (1024 + 4096) + (4096 + 1024)) / 4;
  CHECK(per_layer == 65536.0);
  MemoryEstimate e = estimate_model(m);
  CHECK(e.gradients * kGiB == Approx(4 * 2 * per_layer).epsilon(1e-12));
  CHECK(e.optimizer * kGiB == Approx(12 * 2 * per_layer).epsilon(1e-12));
}

TEST_CASE("estimate: TE's fused cross entropy keeps only the bf16 logits, per loss", "[estimate]") {
  // One stage, s 1024, b 4, V 50304: s·b·V logits. Megatron-Core's "te"
  // impl hands the bf16 logits to TE's parallel_cross_entropy, which writes
  // the gradient into them in place (TE v2.9 pytorch/triton/cross_entropy.py):
  // 2 B per logit instead of the unfused path's 6 B (bf16 logits + fp32
  // softmax + bf16 gradient).
  MemoryModel m = paper_model(8, 512, 12, 1, 1, 4);
  m.seq = 1024;
  m.vocab = 50304;
  double logits = 1024.0 * 4 * 50304;
  MemoryEstimate unfused = estimate_model(m);
  m.cross_entropy = "te";
  MemoryEstimate te = estimate_model(m);
  CHECK(unfused.activations - te.activations == Approx(logits * 4 / kGiB).epsilon(1e-9));
  // Two MTP depths: each loss has its own logits (2 B each) instead of its
  // own fp32 softmax (4 B each).
  m.mtp_layers = 2;
  m.stage_mtp = {2};
  MemoryEstimate te_mtp = estimate_model(m);
  m.cross_entropy = "unfused";
  MemoryEstimate unfused_mtp = estimate_model(m);
  CHECK(unfused_mtp.activations - te_mtp.activations == Approx(logits * (2 + 4 * 3 - 2 * 3) / kGiB).epsilon(1e-9));
}

TEST_CASE("estimate: hybrid FSDP shards the optimizer over every instance, parameters within one", "[estimate]") {
  // 12 layers of h 512 on DP 16 with Megatron-FSDP optim_grads_params and 4
  // distributed-optimizer instances: parameters and gradients sharded 16 / 4
  // = 4 ways; with outer_dp_sharding_strategy "optim" (megatron_fsdp
  // fully_shard.py, core_v0.17.0) the Adam state 16 ways, else 4.
  MemoryModel m = paper_model(8, 512, 12, 1, 1, 4);
  m.seq = 1024;
  m.vocab = 50304;
  m.positions = 1024;
  m.dp = 16;
  m.distributed_optimizer = true;
  m.fsdp_sharding = "optim_grads_params";
  m.optimizer_instances = 4;
  double h = 512;
  double params = 12 * (12 * h * h + 13 * h) + 50304 * h + 1024 * h + 2 * h;
  MemoryEstimate hsdp = estimate_model(m);
  CHECK(hsdp.gradients == Approx(params / 4 * 4 / kGiB).epsilon(1e-9));
  CHECK(hsdp.optimizer == Approx(params / 4 * 12 / kGiB).epsilon(1e-9));
  m.fsdp_outer_optim = true;
  MemoryEstimate hfsdp = estimate_model(m);
  CHECK(hfsdp.gradients == Approx(hsdp.gradients).epsilon(1e-12));
  CHECK(hfsdp.weights == Approx(hsdp.weights).epsilon(1e-12));
  CHECK(hfsdp.optimizer == Approx(params / 16 * 12 / kGiB).epsilon(1e-9));
}

// Resuming from a checkpoint (distrib_optimizer.py sharded_state_dict with
// is_loading, Megatron-LM 2a75ac12c54b; TE fused_adam.py load_state_dict):
// the inner optimizer's state exists twice for a moment, before any
// activation is allocated. The toy: 12 layers of h 512, V 50304, seq 128,
// b 1, one data-parallel rank, so the optimizer state dominates.
TEST_CASE("estimate: loading a checkpoint holds the inner optimizer's state twice", "[estimate]") {
  MemoryModel m = paper_model(8, 512, 12, 1, 1, 1);
  m.seq = 128;
  m.vocab = 50304;
  m.positions = 1024;
  m.distributed_optimizer = true;
  double h = 512;
  double params = 12 * (12 * h * h + 13 * h) + 50304 * h + 1024 * h + 2 * h;
  MemoryEstimate fresh = estimate_model(m);
  CHECK(fresh.resume == 0);
  m.resumes_optimizer = true;
  // Without the precision-aware optimizer the fp32 master shards are
  // Megatron's own: only exp_avg and exp_avg_sq (8 B) are doubled.
  // 2 (bf16 weight) + 4 (fp32 main_grad) + 12 (master + moments) + 8.
  MemoryEstimate resumed = estimate_model(m);
  CHECK(resumed.peak_allocated * kGiB == Approx(params * (2 + 4 + 12 + 8)).epsilon(1e-9));
  CHECK(resumed.resume * kGiB ==
        Approx(params * 8 - (fresh.activations + fresh.other) * kGiB).epsilon(1e-9));
  // Precision-aware with store_param_remainders: TE keeps an int16 master
  // (2 B) in its state, so all 10 B are doubled: 2 + 4 + 10 + 10.
  m.precision_aware = true;
  m.master_bytes = 2;
  MemoryEstimate aware = estimate_model(m);
  CHECK(aware.optimizer * kGiB == Approx(params * 10).epsilon(1e-9));
  CHECK(aware.peak_allocated * kGiB == Approx(params * (2 + 4 + 10 + 10)).epsilon(1e-9));
  // The training step still peaks higher with a large batch: no resume part.
  m.micro_batch = 64;
  m.seq = 1024;
  CHECK(estimate_model(m).resume == 0);
}

// gpt_model.py (Megatron-LM 2a75ac12c54b) builds word embeddings on every
// stage with pre_process or mtp_process: the MTP stage of an untied model
// holds them besides its output layer (V x h each); with tied weights its
// output-weight copy is that embedding.
TEST_CASE("estimate: an untied model's MTP stage holds its own word embeddings", "[estimate]") {
  MemoryModel m = paper_model(8, 512, 12, 1, 2, 1);
  m.vocab = 50304;
  m.stage_layers = {1, 11};  // the last stage is the most loaded
  m.mtp_layers = 1;
  m.stage_mtp = {0, 1};
  m.tied = false;
  MemoryEstimate untied = estimate_model(m);
  m.tied = true;
  MemoryEstimate tied = estimate_model(m);
  REQUIRE(untied.stage == 1);
  REQUIRE(tied.stage == 1);
  CHECK((untied.weights - tied.weights) * kGiB == Approx(50304.0 * 512 * 2).epsilon(1e-9));
  // Without MTP the last stage holds one V x h matrix either way (PP > 1).
  m.stage_mtp = {0, 0};
  m.mtp_layers = 0;
  MemoryEstimate plain_tied = estimate_model(m);
  m.tied = false;
  CHECK(estimate_model(m).weights == Approx(plain_tied.weights).epsilon(1e-12));
}
