// The step-time model's pieces against hand derivations.
#include <catch2/catch.hpp>

#include <cmath>

#include "lint/facts/speed_model.h"
#include "tests/dense_model.h"

using namespace mblint;

namespace {

using test::dense_gpt;

// Constants with no fixed costs and ideal links, so that times are the
// FLOPs and bytes over the peaks.
SpeedConstants ideal() {
  SpeedConstants c = default_speed_constants();
  c.gemm_efficiency_bf16 = 1;
  c.gemm_latency_s = 0;
  c.attention_efficiency = 1;
  c.link_efficiency = 1;
  c.collective_latency_s = 0;
  c.cpu_layer_s = 0;
  c.cpu_moe_layer_s = 0;
  c.moe_sync_s = 0;
  c.step_fixed_s = 0;
  c.pp_exposed = 1;
  c.pp_chunk_s = 0;
  c.attention_call_tokens = 0;
  c.overlap_slowdown = 0;
  return c;
}

}  // namespace

TEST_CASE("speed: a dense layer's forward FLOPs per token are 24h^2 + 2sh (causal)", "[speed]") {
  // Narayanan et al. 2021 eq. 3: 24h^2 + 4sh per token and layer without the
  // causal mask; the mask halves the 4sh of the scores and weighted values.
  MemoryModel m = dense_gpt(24, 2048, 16, 2048, 51200);
  LayerFlops f = layer_flops(m, false);
  CHECK(f.linear == Approx(24.0 * 2048 * 2048));
  CHECK(f.attention == Approx(2.0 * 2048 * 2048));
  CHECK(f.experts == 0);
  // The model: 3 x (L x layer + 2hV of the logits).
  double expected = 3 * (24 * (24.0 * 2048 * 2048 + 2.0 * 2048 * 2048) + 2.0 * 2048 * 51200);
  CHECK(model_flops_per_token(m) == Approx(expected));
}

TEST_CASE("speed: GQA shrinks K and V, SwiGLU adds the gate; MoE counts top-k experts", "[speed]") {
  // Llama-3-8B-like: h 4096, 32 heads of 128, 8 groups, SwiGLU ffn 14336.
  MemoryModel m = dense_gpt(32, 4096, 32, 8192, 128256);
  m.query_groups = 8;
  m.swiglu = true;
  m.ffn = 14336;
  LayerFlops f = layer_flops(m, false);
  double qkv = 4096.0 * (32 + 2 * 8) * 128, proj = 4096.0 * 4096, mlp = 3.0 * 4096 * 14336;
  CHECK(f.linear == Approx(2 * (qkv + proj + mlp)));
  // A MoE layer: router h x E, 8 of 128 experts of ffn 768 (Qwen3-30B-A3B-like).
  m.experts = 128;
  m.topk = 8;
  m.moe_ffn = 768;
  LayerFlops moe = layer_flops(m, true);
  CHECK(moe.experts == Approx(2.0 * 8 * 3 * 4096 * 768));
  CHECK(moe.linear == Approx(2 * (qkv + proj + 4096.0 * 128)));
}

TEST_CASE("speed: a GEMM is bound by its arithmetic or by its bytes, plus a fixed latency", "[speed]") {
  // 8192^3 at 1000 TFLOP/s x 0.5: 2 x 8192^3 / 5e14 s.
  CHECK(gemm_seconds(8192, 8192, 8192, 2, 1000, 0.5, 3350, 0) == Approx(2.0 * 8192 * 8192 * 8192 / 5e14));
  // A matrix-vector product moves the 8192 x 8192 bf16 weight: 2 x 8192 x (8192 + 2) bytes at 1000 GB/s.
  CHECK(gemm_seconds(1, 8192, 8192, 2, 1000, 0.5, 1000, 0) == Approx(2.0 * (8192.0 * 8192 + 2 * 8192) / 1e12));
  CHECK(gemm_seconds(1, 8192, 8192, 2, 1000, 0.5, 1000, 5e-6) ==
        Approx(2.0 * (8192.0 * 8192 + 2 * 8192) / 1e12 + 5e-6));
  CHECK(gemm_seconds(0, 8192, 8192, 2, 1000, 0.5, 1000, 5e-6) == 0);
  CHECK(collective_seconds(1e9, 100, 0.5, 1e-5) == Approx(0.02 + 1e-5));
}

TEST_CASE("speed: 1F1B takes (m + p - 1) stage times, interleaving divides the fill by v", "[speed]") {
  // Narayanan et al. 2021 sec. 2.2: bubble (p - 1) of m + p - 1 slots; interleaved (p - 1) / v.
  CHECK(pipeline_seconds({1, 1, 1, 1}, 8, 1) == Approx(11));
  CHECK(pipeline_seconds({1, 1, 1, 1}, 8, 2) == Approx(9.5));
  // An uneven stage sets the pace: 4 x 2 in steady state + the other stages' fill and drain.
  CHECK(pipeline_seconds({1, 2, 1, 1}, 4, 1) == Approx(11));
  CHECK(pipeline_seconds({3}, 5, 1) == Approx(15));
}

TEST_CASE("speed: TP communication is 8 collectives of T x h per layer, over NVLink or the network", "[speed]") {
  // One stage, one micro-batch, TP 8 with SP, no overlap: per layer 4 collectives
  // forward and 4 backward [Korthikanti et al. 2022], each moving T h 2 B x 7/8.
  MemoryModel m = dense_gpt(4, 4096, 32, 4096, 51200);
  m.tp = 8;
  m.sp = true;
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  SpeedSettings s;
  s.nvlink_domain = 8;
  auto e = estimate_step(m, s, h100, ideal());
  REQUIRE(e);
  double bytes = 4096.0 * 4096 * 2 * 7 / 8;
  CHECK(e->breakdown.tp == Approx(4 * 8 * bytes / (450e9)));
  // TP 16 leaves the 8-GPU NVLink domain: NCCL runs a ring per NIC, so the
  // 8 members in a node share 8 x 50 GB/s of network (400 GB/s).
  m.tp = 16;
  auto wide = estimate_step(m, s, h100, ideal());
  REQUIRE(wide);
  CHECK(wide->breakdown.tp == Approx(4 * 8 * (4096.0 * 4096 * 2 * 15 / 16) / 400e9));
  // TP 2 x DP 4 on two nodes: the DP ring's members are 2 apart, 4 per node:
  // 4 x 50 GB/s; its 8 ranks span 16 > 8.
  m.tp = 2;
  m.dp = 8;
  m.distributed_optimizer = true;
  auto dp = estimate_step(m, s, h100, ideal());
  REQUIRE(dp);
  CHECK(dp->breakdown.dp > 0);
}

TEST_CASE("speed: the breakdown adds up to the step; tokens/s/GPU and MFU follow from it", "[speed]") {
  MemoryModel m = dense_gpt(8, 4096, 32, 4096, 51200);
  m.tp = 2;
  m.sp = true;
  m.pp = 2;
  m.dp = 2;
  m.micro_batch = 1;
  m.microbatches = 8;
  m.stage_layers = {4, 4};
  m.stage_mtp = {0, 0};
  m.distributed_optimizer = true;
  SpeedSettings s;
  auto e = estimate_step(m, s, *find_gpu_speed("h100"), default_speed_constants());
  REQUIRE(e);
  const StepBreakdown& b = e->breakdown;
  CHECK(b.compute + b.tp + b.cp + b.ep + b.pp + b.dp + b.bubble + b.optimizer + b.other == Approx(e->step_time_s));
  CHECK(b.bubble > 0);
  double world = 2 * 2 * 2;
  CHECK(e->tokens_per_sec_per_gpu == Approx(8 * 2 * 4096 / e->step_time_s / world));
  CHECK(e->mfu == Approx(e->tokens_per_sec_per_gpu * model_flops_per_token(m) / 989.5e12));
}

TEST_CASE("speed: an ideal GPU runs a GEMM-bound step at its peak", "[speed]") {
  // With every overhead at zero and efficiency 1, the compute part of one
  // layer is 3 x its linear FLOPs / peak + 3.5 x attention FLOPs / peak
  // (FlashAttention-2: the backward runs 5 products to the forward's 2) + the
  // elementwise passes over HBM.
  MemoryModel m = dense_gpt(1, 8192, 64, 2048, 0);
  m.micro_batch = 4;
  SpeedSettings s;
  SpeedConstants c = ideal();
  c.elementwise_scale = 0;
  auto e = estimate_step(m, s, *find_gpu_speed("h100"), c);
  REQUIRE(e);
  LayerFlops f = layer_flops(m, false);
  double tokens = 4 * 2048;
  CHECK(e->breakdown.compute == Approx(tokens * (3 * f.linear + 3.5 * f.attention) / 989.5e12).epsilon(0.01));
}

TEST_CASE("speed: precisions the GPU lacks and GPUs without figures are declined", "[speed]") {
  MemoryModel m = dense_gpt(2, 1024, 8, 1024, 1024);
  SpeedSettings s;
  s.precision = GemmPrecision::NVFP4;
  std::string why;
  CHECK_FALSE(estimate_step(m, s, *find_gpu_speed("h100"), default_speed_constants(), &why));
  CHECK(why == "NVFP4 GEMMs are not supported on h100");
  s.precision = GemmPrecision::MXFP8;
  CHECK_FALSE(estimate_step(m, s, *find_gpu_speed("h100"), default_speed_constants(), &why));
  CHECK(estimate_step(m, s, *find_gpu_speed("b200"), default_speed_constants()));
  CHECK(find_gpu_speed("vr200") == nullptr);
  CHECK(find_gpu_speed("h100") != nullptr);
}

namespace {

// No embedding, logits or elementwise work, so every stage costs the same.
SpeedConstants layers_only() {
  SpeedConstants c = ideal();
  c.elementwise_scale = 0;
  c.pp_exposed = 0;
  return c;
}

MemoryModel moe_model(int64_t ep) {
  MemoryModel m = dense_gpt(2, 4096, 32, 4096, 0);
  m.experts = 64;
  m.topk = 8;
  m.moe_ffn = 1024;
  m.swiglu = true;
  m.ep = ep;
  return m;
}

}  // namespace

TEST_CASE("speed: the bubble of equal stages is (p - 1) / (v m) of the steady state", "[speed]") {
  MemoryModel m = dense_gpt(16, 4096, 32, 4096, 0);
  m.pp = 4;
  m.microbatches = 8;
  m.stage_layers = {4, 4, 4, 4};
  m.stage_mtp = {0, 0, 0, 0};
  SpeedSettings s;
  auto e = estimate_step(m, s, *find_gpu_speed("h100"), layers_only());
  REQUIRE(e);
  CHECK(e->breakdown.bubble == Approx(e->breakdown.compute * 3 / 8));
  m.vpp = 2;
  auto interleaved = estimate_step(m, s, *find_gpu_speed("h100"), layers_only());
  REQUIRE(interleaved);
  CHECK(interleaved->breakdown.bubble == Approx(interleaved->breakdown.compute * 3 / 16));
}

TEST_CASE("speed: full recompute adds one forward, selective core_attn the attention's", "[speed]") {
  MemoryModel m = dense_gpt(2, 8192, 64, 4096, 0);
  SpeedSettings s;
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  auto none = estimate_step(m, s, h100, layers_only());
  m.recompute = "full";
  auto full = estimate_step(m, s, h100, layers_only());
  m.recompute = "selective";
  m.recompute_modules = {"core_attn"};
  auto selective = estimate_step(m, s, h100, layers_only());
  REQUIRE((none && full && selective));
  LayerFlops f = layer_flops(m, false);
  // Times are FLOPs over the BF16 peak: backward 2x (linear), 2.5x (attention).
  CHECK(full->breakdown.compute / none->breakdown.compute ==
        Approx((4 * f.linear + 4.5 * f.attention) / (3 * f.linear + 3.5 * f.attention)));
  CHECK(selective->breakdown.compute / none->breakdown.compute ==
        Approx((3 * f.linear + 4.5 * f.attention) / (3 * f.linear + 3.5 * f.attention)));
}

TEST_CASE("speed: EP all-to-all over NVLink inside the domain, the NIC outside; DeepEP sends once per domain",
          "[speed]") {
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  SpeedSettings s;
  s.nvlink_domain = 8;
  double bytes = 4096.0 * 8 * 4096 * 2;  // every token's 8 routed copies of h in bf16
  // EP 8 on one node: dispatch + combine, forward + backward, 7/8 of it to peers over NVLink.
  auto inside = estimate_step(moe_model(8), s, h100, ideal());
  REQUIRE(inside);
  CHECK(inside->breakdown.ep == Approx(2 * 4 * bytes * 7 / 8 / 450e9));
  // EP 16 over two nodes: half the copies leave through the 50 GB/s NIC, which sets the pace.
  auto across = estimate_step(moe_model(16), s, h100, ideal());
  REQUIRE(across);
  CHECK(across->breakdown.ep == Approx(2 * 4 * bytes * 8 / 16 / 50e9));
  // DeepEP: a token goes to the other node once if any of its 8 experts is there,
  // probability 1 - (1/2)^8, instead of 8 x 1/2 copies.
  s.deepep = true;
  SpeedConstants c = ideal();
  c.deepep_efficiency = 1;
  auto deepep = estimate_step(moe_model(16), s, h100, c);
  REQUIRE(deepep);
  double dedup = (1 - std::pow(0.5, 8)) / 4;
  CHECK(deepep->breakdown.ep == Approx(2 * 4 * bytes * 8 / 16 * dedup / 50e9));
}

TEST_CASE("speed: Ulysses CP exchanges Q, K, V and the output, not hidden", "[speed]") {
  MemoryModel m = dense_gpt(2, 4096, 32, 8192, 0);
  m.cp = 2;
  SpeedSettings s;
  s.cp_a2a = true;
  SpeedConstants c = ideal();
  c.a2a_efficiency = 1;
  auto e = estimate_step(m, s, *find_gpu_speed("h100"), c);
  REQUIRE(e);
  double tokens = 8192.0 / 2;
  double bytes = tokens * 32 * (4 * 128) * 2 * 1 / 2;  // heads x (q, k, v, o) x bf16 x (cp - 1) / cp
  CHECK(e->breakdown.cp == Approx(2 * 2 * bytes / 450e9));
}

TEST_CASE("speed: Blackwell Ultra runs the softmax's share of attention at twice the exponential rate", "[speed]") {
  // GB200 and GB300 have the same BF16 peak; only the softmax share of the
  // attention time differs (halved on GB300).
  MemoryModel m = dense_gpt(1, 8192, 64, 8192, 0);
  SpeedSettings s;
  SpeedConstants c = ideal();
  c.elementwise_scale = 0;
  c.softmax_share = 0.6;
  auto gb200 = estimate_step(m, s, *find_gpu_speed("gb200"), c);
  auto gb300 = estimate_step(m, s, *find_gpu_speed("gb300"), c);
  REQUIRE((gb200 && gb300));
  LayerFlops f = layer_flops(m, false);
  double tokens = 8192;
  CHECK(gb200->breakdown.compute == Approx(tokens * (3 * f.linear + 3.5 * f.attention) / 2500e12).epsilon(0.01));
  CHECK(gb300->breakdown.compute ==
        Approx(tokens * (3 * f.linear + 3.5 * f.attention * (0.6 / 2 + 0.4)) / 2500e12).epsilon(0.01));
}

namespace {

// PP 2 x DP 8 of a small dense GPT on 8-GPU nodes: the stages are 8 ranks
// apart, so their sends leave the node.
MemoryModel two_stages_over_nodes(int layers) {
  MemoryModel m = dense_gpt(layers, 4096, 32, 4096, 0);
  m.pp = 2;
  m.dp = 8;
  m.stage_layers = {layers / 2.0, layers / 2.0};
  m.stage_mtp = {0, 0};
  return m;
}

// Only the layers and the pipeline's sends, fully exposed.
SpeedConstants pipeline_exposed() {
  SpeedConstants c = layers_only();
  c.pp_exposed = 1;
  return c;
}

}  // namespace

TEST_CASE("speed: a pipeline send that leaves the NVLink domain goes through one NIC", "[speed]") {
  // PP 2 x DP 8 on H100: the stages are 8 ranks apart, so every send leaves
  // the node, point to point over the sender's 50 GB/s NIC (no ring spreads
  // it over the node's NICs). Without interleaving the schedule blocks on it.
  MemoryModel m = two_stages_over_nodes(4);
  SpeedSettings s;
  s.nvlink_domain = 8;
  SpeedConstants c = pipeline_exposed();
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  auto e = estimate_step(m, s, h100, c);
  REQUIRE(e);
  double bytes = 4096.0 * 4096 * 2;
  CHECK(e->breakdown.pp == Approx(2 * bytes / 50e9));
  // DP 1: both stages in one node, over NVLink.
  m.dp = 1;
  auto inside = estimate_step(m, s, h100, c);
  REQUIRE(inside);
  CHECK(inside->breakdown.pp == Approx(2 * bytes / 450e9));
  // Each chunk hand-off, forward and backward, waits pp_chunk_s more.
  c.pp_chunk_s = 1e-3;
  auto waits = estimate_step(m, s, h100, c);
  REQUIRE(waits);
  CHECK(waits->breakdown.pp == Approx(2 * bytes / 450e9 + 2e-3));
}

TEST_CASE("speed: with interleaving a pipeline send hides behind the chunk in hand", "[speed]") {
  // overlap_p2p_comm (on with VPP): a send shorter than a chunk's forward is
  // hidden; what stays is the fixed hand-off per chunk, 2 x VPP per micro-batch.
  MemoryModel m = two_stages_over_nodes(8);
  m.vpp = 2;
  SpeedSettings s;
  s.nvlink_domain = 8;
  SpeedConstants c = pipeline_exposed();
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  auto hidden = estimate_step(m, s, h100, c);
  REQUIRE(hidden);
  CHECK(hidden->breakdown.pp == 0);
  c.pp_chunk_s = 1e-3;
  auto handoff = estimate_step(m, s, h100, c);
  REQUIRE(handoff);
  CHECK(handoff->breakdown.pp == Approx(2 * 2 * 1e-3));
  m.vpp = 4;
  m.stage_layers = {4, 4};
  auto deeper = estimate_step(m, s, h100, c);
  REQUIRE(deeper);
  CHECK(deeper->breakdown.pp == Approx(2 * 4 * 1e-3));
}

TEST_CASE("speed: the p2p CP ring calls flash attention once per step and merges the partial outputs", "[speed]") {
  // Fixed work per query and call (attention_call_tokens keys' worth): CP 1
  // calls once over the whole sequence, the CP 4 ring 4 times over its chunk.
  MemoryModel m = dense_gpt(1, 4096, 32, 16384, 0);
  SpeedSettings s;
  SpeedConstants c = ideal();
  c.elementwise_scale = 0;
  c.softmax_share = 0;
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  auto plain = estimate_step(m, s, h100, c);
  c.attention_call_tokens = 512;
  auto overhead = estimate_step(m, s, h100, c);
  m.cp = 4;
  auto ring = estimate_step(m, s, h100, c);
  c.attention_call_tokens = 0;
  auto ring_plain = estimate_step(m, s, h100, c);
  REQUIRE((plain && overhead && ring && ring_plain));
  // Attention per query: QK^T and PV over seq/2 keys, 32 heads of 128, x 3.5 (fwd + bwd).
  auto attention = [](double tokens, double keys) { return 3.5 * 2 * tokens * keys * 32 * 256 / 989.5e12; };
  CHECK(overhead->breakdown.compute - plain->breakdown.compute == Approx(attention(16384, 512)));
  CHECK(ring->breakdown.compute - ring_plain->breakdown.compute == Approx(attention(4096, 4 * 512)));
  // The merges are HBM passes: CP 4 adds 3 steps x (T x 32 heads x 256 of
  // the output and dQ + as many of K and V) elements x 10 B, beside the
  // layer's other passes (38 over T x h, 8 over T x 4h, 4 of the embedding).
  c.elementwise_scale = 1;
  auto merged = estimate_step(m, s, h100, c);
  REQUIRE(merged);
  double T = 4096, h = 4096;
  double merge = 3 * (2 * T * 32 * 256) * 10;
  double others = T * h * 2 * (38 + 4 * 8 + 4);
  CHECK(merged->breakdown.compute - ring_plain->breakdown.compute == Approx((merge + others) / 3350e9));
}

TEST_CASE("speed: overlapped data-parallel communication still costs a share of its time", "[speed]") {
  // Distributed optimizer over DP 8: without the overlaps the reduce-scatter
  // and all-gather are exposed whole; with them, what the compute hides
  // still costs overlap_slowdown of its time (NCCL's kernels share the SMs).
  MemoryModel m = dense_gpt(4, 4096, 32, 4096, 51200);
  m.dp = 8;
  m.distributed_optimizer = true;
  const GpuSpeed& h100 = *find_gpu_speed("h100");
  SpeedConstants c = ideal();
  SpeedSettings plain;
  plain.nvlink_domain = 8;
  SpeedSettings overlapped = plain;
  overlapped.overlap_grad_reduce = true;
  overlapped.overlap_param_gather = true;
  auto whole = estimate_step(m, plain, h100, c);
  auto hidden = estimate_step(m, overlapped, h100, c);
  c.overlap_slowdown = 0.5;
  auto slowed = estimate_step(m, overlapped, h100, c);
  auto whole_slowed = estimate_step(m, plain, h100, c);
  REQUIRE((whole && hidden && slowed && whole_slowed));
  CHECK(whole->breakdown.dp > hidden->breakdown.dp);
  CHECK(slowed->breakdown.dp == Approx(hidden->breakdown.dp + 0.5 * (whole->breakdown.dp - hidden->breakdown.dp)));
  CHECK(whole_slowed->breakdown.dp == Approx(whole->breakdown.dp));  // nothing hidden, nothing to slow
}

TEST_CASE("speed: a Mamba-2 layer is its in/out projections plus the chunked SSD scan", "[speed]") {
  // Nemotron-H-like mixer: h 4096, 128 heads of 64 (d_inner 8192), 8 groups,
  // state 128; one 'M' layer, no vocabulary. in_proj makes z, x (d_inner
  // each), B, C (groups x state each) and dt (one per head); out_proj
  // d_inner -> h (megatron/core/ssm/mamba_mixer.py, Megatron-LM 2a75ac12c54b).
  MemoryModel m = dense_gpt(1, 4096, 32, 4096, 0);
  m.mamba_heads = 128;
  m.mamba_head_dim = 64;
  m.mamba_groups = 8;
  m.mamba_state = 128;
  m.hybrid_stages = {LayerKinds{.mamba = 1}};
  m.stage_layers = {1};
  double d_inner = 128.0 * 64, projected = 2 * d_inner + 2 * 8 * 128 + 128;
  double projections = 2 * 4096 * (projected + d_inner);
  // The scan, per token (Dao and Gu 2024 sec. 6, chunk 128): C·Bᵀ within a
  // chunk per group (2 x 128 x N x G), the chunk state in and out per head
  // (4 x N x P x H), the masked (C·Bᵀ)·x per head (2 x 128 x P x H).
  double scan = 2 * 128 * 128 * 8 + 4 * 128 * 64 * 128 + 2 * 128 * 64 * 128;
  CHECK(model_flops_per_token(m) == Approx(3 * (projections + scan)));
  // On an ideal GPU without elementwise passes, the layer's compute is the
  // projections (forward + 2 x backward) at the GEMM rate and the scan at
  // ssd_efficiency, its backward 2.5 x its forward.
  m.micro_batch = 2;
  SpeedConstants c = ideal();
  c.elementwise_scale = 0;
  c.ssd_efficiency = 0.25;
  auto e = estimate_step(m, SpeedSettings{}, *find_gpu_speed("h100"), c);
  REQUIRE(e);
  double tokens = 2 * 4096;
  CHECK(e->breakdown.compute == Approx(tokens * (3 * projections + 3.5 * scan / 0.25) / 989.5e12).epsilon(0.01));
}
