// The Mamba mixer's unfused path (use_mamba_mem_eff_path off: NemotronH 4B;
// Megatron-LM's --disable-mamba-mem-eff-path)
// in the memory estimate, derived by hand from Megatron-LM 2a75ac12c54b (the
// submodule Megatron Bridge 067f987df03b pins),
// megatron/core/ssm/mamba_mixer.py MambaMixer.forward -> _static_prefill:
// zxBCdt is split and each part copied contiguous; the conv input xBC is
// saved by causal-conv1d's CausalConv1dFn (Dao-AILab/causal-conv1d
// causal_conv1d_interface.py: save_for_backward(x, weight, bias, ...));
// mamba_ssm v2.3.2's MambaChunkScanCombinedFn (ssd_combined.py) saves
// out (z is None with rmsnorm), x, dt, dA_cumsum (fp32, ssd_chunk_state.py
// _chunk_cumsum_fwd), A, B, C, D, dt_bias and recomputes the chunk states;
// the gated RMSNorm (mamba_ssm layernorm_gated.py LayerNormFn) saves x, z
// and an fp32 rstd per group.
#include <catch2/catch.hpp>

#include "lint/facts/estimate.h"
#include "tests/memory_model_run.h"
#include "tests/memory_units.h"

using namespace mblint;
using test::kGiB;

namespace {

// NemotronH 4B's mixer (Megatron Bridge 067f987df03b
// src/megatron/bridge/recipes/nemotronh/h100/nemotronh.py: hidden 3072,
// mamba_num_heads 112, mamba_head_dim 64, mamba_state_dim 128,
// mamba_num_groups 8, seq_length 8192, micro-batch 1), one layer on one GPU
// without dropout.
MemoryModel nemotronh_4b_mixer() {
  MemoryModel m;
  m.layers = 1;
  m.hidden = 3072;
  m.heads = 32;
  m.query_groups = 8;
  m.kv_channels = 128;
  m.seq = 8192;
  m.micro_batch = 1;
  m.mamba_heads = 112;
  m.mamba_head_dim = 64;
  m.mamba_state = 128;
  m.mamba_groups = 8;
  m.hidden_dropout = 0;
  m.attention_dropout = 0;
  m.stage_layers = {1};
  m.stage_mtp = {0};
  return m;
}

// The memory model of a Megatron-LM launch of a small hybrid stack with
// `extra` flags.
MemoryModel megatron_lm_hybrid(const std::string& extra) {
  return test::estimated_launch_model(
      "#!/bin/bash\ntorchrun --nproc-per-node 8 pretrain_hybrid.py --hybrid-layer-pattern M-M*M-M- "
      "--hidden-size 1024 --num-attention-heads 8 --mamba-num-heads 32 --seq-length 2048 "
      "--micro-batch-size 1 --global-batch-size 8 --bf16 " + extra + "\n");
}

}  // namespace

TEST_CASE("estimate: Megatron-LM's --disable-mamba-mem-eff-path takes the unfused path", "[estimate]") {
  // arguments.py builds the flag from TransformerConfig.use_mamba_mem_eff_path
  // (default True; argparse_meta arg_names ["--disable-mamba-mem-eff-path"],
  // transformer_config.py:1206-1207 at 2a75ac12c54b).
  CHECK_FALSE(megatron_lm_hybrid("").mamba_unfused);
  CHECK(megatron_lm_hybrid("--disable-mamba-mem-eff-path").mamba_unfused);
}

TEST_CASE("estimate: the unfused Mamba path's saved tensors, by hand (NemotronH 4B)", "[estimate]") {
  // d_inner = 112 x 64 = 7168; B and C: 2 x 8 x 128 = 2048; 112 heads.
  // Bytes per token at TP 1:
  //   in_proj norm input 2h 6,144 + GEMM input 2h 6,144
  //   conv1d input xBC 2 x (7168 + 2048) = 18,432
  //   chunk scan: output 2 x 7168, x 2 x 7168, B and C 2 x 2048, dt 2 x 112 = 32,992
  //   dA_cumsum (fp32) 4 x 112 = 448
  //   gated norm: input y 2 x 7168, z 2 x 7168, rstd 4 x 8 = 28,704
  //   out_proj input 2 x 7168 = 14,336
  // = 107,200 B per token.
  MemoryModel m = nemotronh_4b_mixer();
  m.mamba_unfused = true;
  const double tokens = 8192;
  CHECK(mamba_layer_bytes(m) == 107200.0 * tokens);
  // The fused path keeps zxBCdt whole (2 x (2 x 7168 + 2048 + 112) = 32,992),
  // out_x 14,336 and the norm's input + rstd 14,368 instead: 88,320 B per
  // token, so the unfused path keeps 18,880 B a token more (+21%).
  MemoryModel fused = m;
  fused.mamba_unfused = false;
  CHECK(mamba_layer_bytes(fused) == 88320.0 * tokens);
  // TP 2 without sequence parallelism splits everything but the two in_proj
  // inputs (12,288 B): (107,200 - 12,288) / 2 + 12,288.
  MemoryModel tp2 = m;
  tp2.tp = 2;
  CHECK(mamba_layer_bytes(tp2) == (94912.0 / 2 + 12288) * tokens);
}

TEST_CASE("estimate: the unfused Mamba path changes activations only", "[estimate]") {
  MemoryModel m = nemotronh_4b_mixer();
  m.hybrid_stages = {LayerKinds{1, 0, 0, 0}};
  MemoryEstimate fused = estimate_model(m);
  m.mamba_unfused = true;
  MemoryEstimate unfused = estimate_model(m);
  CHECK(unfused.weights == fused.weights);
  CHECK(unfused.optimizer == fused.optimizer);
  CHECK((unfused.activations - fused.activations) * kGiB == Approx(18880.0 * 8192).epsilon(1e-9));
}
