// Step-time model of a Megatron training step: GEMM and attention FLOPs per
// micro-batch on each pipeline stage, timed against the GPU's peak with an
// efficiency that depends on the GEMM's size, the communication of every
// parallel dimension and what of it overlaps, the pipeline bubble, the
// optimizer step. It reads the same resolved model as the memory estimate
// (MemoryModel) plus the few settings only speed depends on (SpeedSettings).
// Every constant lives in lint/facts/speed_constants.inc with its source; the
// design and the measured accuracy are in docs/speed-model.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/facts/estimate.h"

namespace mblint {

// The precision the linear layers' GEMMs run in. Attention (flash) stays in
// BF16 in all of them.
enum class GemmPrecision { BF16, FP8, MXFP8, NVFP4 };

// One GPU type's datasheet figures (dense, no sparsity).
struct GpuSpeed {
  const char* name;           // the catalog's GPU name ("h100")
  double bf16_tflops;         // dense BF16 tensor-core peak
  double fp8_tflops;          // dense FP8 peak (0: no FP8)
  double fp4_tflops;          // dense NVFP4 peak (0: no FP4)
  bool mx_scaling;            // hardware block scaling (MXFP8, NVFP4): Blackwell on
  double hbm_gbps;            // HBM bandwidth, GB/s
  double nvlink_gbps;         // NVLink bandwidth per GPU per direction, GB/s
  double network_gbps;        // scale-out (InfiniBand/Ethernet) per GPU per direction, GB/s
  double sfu_rate;            // exponential (MUFU.EX2) throughput relative to Hopper and Blackwell
  const char* source;
};

// The global constants the model is calibrated with (none per model or row).
struct SpeedConstants {
  double gemm_efficiency_bf16;   // achieved fraction of the dense peak by a large GEMM
  double gemm_efficiency_fp8;    // per-tensor (current/delayed) or blockwise scaling
  double gemm_efficiency_mxfp8;
  double gemm_efficiency_nvfp4;
  double gemm_latency_s;         // fixed cost of one GEMM (launch, tail wave)
  double attention_efficiency;   // flash attention, fraction of the BF16 peak
  double ssd_efficiency;         // Mamba-2's chunked SSD scan (Triton kernels), fraction of the BF16 peak
  double softmax_share;          // share of flash attention's time spent on the softmax's exponentials (sfu_rate 1)
  double attention_call_tokens;  // fixed work of one flash-attention call per query, in keys' worth (tile prologue/epilogue)
  double elementwise_scale;      // multiplies the counted elementwise memory passes
  double link_efficiency;        // achieved fraction of a link's bandwidth by NCCL collectives
  double collective_latency_s;   // fixed cost of one collective
  double a2a_efficiency;         // all-to-all (NCCL) relative to a ring collective
  double deepep_efficiency;      // DeepEP / HybridEP all-to-all relative to a ring collective
  double tp_overlap_exposed;     // share of TP communication left exposed by tp_comm_overlap
  double ep_overlap_exposed;     // share of EP all-to-all left exposed by overlap_moe_expert_parallel_comm
  double pp_exposed;             // share of pipeline send/recv on the critical path
  double pp_chunk_s;             // GPU idle per model chunk and micro-batch, forward and backward each (schedule hand-off)
  double overlap_slowdown;       // share of overlapped (hidden) data-parallel communication time the compute loses to it
  double cpu_layer_s;            // host time to launch one transformer layer's fwd+bwd kernels
  double cpu_moe_layer_s;        // extra host time of a MoE layer (router, permutation, host sync)
  double moe_sync_s;             // GPU idle per MoE layer while the host reads token counts (alltoall dispatcher)
  double cuda_graph_cpu_share;   // share of that host time left with CUDA graphs
  double step_fixed_s;           // per-step cost outside the layers (data, logging, grad norm launch)
};

// The settings only the step time depends on.
struct SpeedSettings {
  GemmPrecision precision = GemmPrecision::BF16;
  int64_t nvlink_domain = 8;        // GPUs in one NVLink domain
  bool tp_comm_overlap = false;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool ep_overlap = false;          // overlap_moe_expert_parallel_comm
  bool deepep = false;              // flex dispatcher with DeepEP or HybridEP
  bool cuda_graphs = false;         // transformer_engine / local / full_iteration graphs
  bool cp_a2a = false;              // cp_comm_type a2a (Ulysses) instead of the p2p ring
};

// Where one step's time goes; the parts add up to step_time_s.
struct StepBreakdown {
  double compute = 0;     // GEMMs, attention, elementwise, host-bound launch time, recompute
  double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;  // exposed communication
  double bubble = 0;      // pipeline warm-up and cool-down
  double optimizer = 0;   // the optimizer step
  double other = 0;       // fixed per-step cost
};

struct SpeedEstimate {
  double step_time_s = 0;
  double tokens_per_sec_per_gpu = 0;
  double model_tflops_per_gpu = 0;  // model FLOPs (no recompute) per GPU per second
  double mfu = 0;                   // model FLOP/s over the dense peak of the GEMM precision
  double model_flops_per_token = 0; // forward + backward, causal attention
  int slowest_stage = 0;
  StepBreakdown breakdown;
};

// Forward FLOPs of one token through one transformer layer of the full
// (unsplit) model, by part. `moe` selects a MoE layer.
struct LayerFlops {
  double linear = 0;     // QKV, output projection, dense MLP, shared experts, router
  double attention = 0;  // scores and weighted values, causal (half the square)
  double experts = 0;    // routed experts, top-k
};
LayerFlops layer_flops(const MemoryModel& m, bool moe);

// Forward + backward model FLOPs per token of the whole model: 3x the
// forward of every layer, the output layer and the MTP layers.
double model_flops_per_token(const MemoryModel& m);

// Seconds of one GEMM of m x n x k at `tflops` peak: the slower of the
// arithmetic (at `efficiency`) and the bytes it moves through HBM, plus a
// fixed latency. This is the efficiency curve over GEMM size.
double gemm_seconds(double m, double n, double k, double bytes_per_element, double tflops, double efficiency,
                    double hbm_gbps, double latency_s);

// Seconds of a collective moving `bytes_per_rank` over a link of `gbps`.
double collective_seconds(double bytes_per_rank, double gbps, double efficiency, double latency_s);

// Pipeline time of one step from each stage's time per micro-batch:
// (m - 1) x the slowest stage + the sum of all stages, the fill and drain
// shortened by the interleaved schedule's `vpp` chunks.
double pipeline_seconds(const std::vector<double>& stage_seconds, int64_t microbatches, int64_t vpp);

const GpuSpeed* find_gpu_speed(const std::string& gpu_name);
const SpeedConstants& default_speed_constants();

// The step-time estimate; nullopt with `why_not` when the GPU's figures or
// the precision on that GPU are not known.
std::optional<SpeedEstimate> estimate_step(const MemoryModel& m, const SpeedSettings& s, const GpuSpeed& gpu,
                                           const SpeedConstants& c, std::string* why_not = nullptr);

// The settings of a job (Bridge's defaults for what it leaves unset).
SpeedSettings read_speed_settings(const Job& job, const Derived& derived, const MemoryModel& m);

// What the estimate of a job reads: its model, its speed settings, its GPU's
// figures; nullopt with `why_not` when the memory model cannot be read, the
// GPU is unknown or has no figures, or the job is not modelled (PEFT). The
// rules change the settings to price one part (rules/support/speed_support.h).
struct SpeedInputs {
  MemoryModel model;
  SpeedSettings settings;
  const GpuSpeed* gpu = nullptr;
};
std::optional<SpeedInputs> read_speed_inputs(const Job& job, const Derived& derived, std::string* why_not = nullptr);

// The estimate of a resolved job; nullopt with `why_not` when the memory
// model cannot be read or the GPU is unknown or not modelled.
std::optional<SpeedEstimate> estimate_speed(const Job& job, const Derived& derived, std::string* why_not = nullptr,
                                            const SpeedConstants* constants = nullptr);

}  // namespace mblint
