// Per-GPU memory and pipeline estimate of a resolved job: what the most
// loaded rank allocates (weights, gradients, optimizer state, activations),
// a stated fixed overhead, and the GPU's capacity. Sizes are in GiB.
// Formulas and their sources are documented in estimate.cpp.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lint/facts/derived.h"
#include "lint/facts/estimate_dit.h"
#include "lint/facts/estimate_dsv4.h"
#include "lint/facts/estimate_llava.h"
#include "lint/facts/estimate_vision.h"
#include "lint/model/job.h"

namespace mblint {

struct StageMemory {
  int stage = 0;                // pipeline stage, 0-based
  double peak_allocated = 0;    // weights + gradients + optimizer + activations + other
  double total = 0;             // peak_allocated + overhead
};

// One named part of the breakdown ("weights", "activations", ...), with the
// sub-terms that explain it ("attention scores 5as²b: 2.1 GiB").
struct MemoryPart {
  std::string name;
  double gib = 0;
  std::vector<std::string> details;
};

// Memory the job allocates that the estimate names but does not count,
// located at the setting that causes it ("the RL inference engine's KV
// cache" at --inference-dynamic-batching-buffer-size-gb). The memory rules
// attach each as a note; `mblint estimate` prints them.
struct UncountedMemory {
  std::string what;
  Span where;
};

struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double other = 0;
  // Loading a checkpoint's optimizer state: what the load peak adds above
  // the training step's (0 when the job does not resume, or training peaks higher).
  double resume = 0;
  double peak_allocated = 0;  // sum of the six above (PyTorch's max allocated)
  double overhead = 0;        // CUDA context, NCCL buffers, fragmentation
  double total = 0;           // peak_allocated + overhead
  double capacity = 0;        // the GPU's memory; 0 when the GPU is unknown
  std::string rank;           // which rank: "last pipeline stage (stage 3 of 4)"
  int stage = 0;              // the most loaded stage
  std::optional<double> bubble_fraction;
  std::optional<int64_t> microbatches;
  std::vector<StageMemory> stages;
  std::vector<MemoryPart> parts;       // the breakdown, in display order
  std::vector<std::string> assumptions;  // what was assumed for unknown values
  std::optional<VisionLoad> vision;      // a vision-language model's tower (first stage)
  std::vector<UncountedMemory> uncounted;  // named, not counted (estimate_llava.cpp)
  bool vocab_assumed = false;  // one of `assumptions` is the vocabulary's
};

// How many of `e.assumptions` bound the activations alone: the tower's images
// (or clips) per micro-batch, stated once when `e.vision` is set. The
// weights, gradients and optimizer state do not depend on them, so they can
// still be judged.
size_t activation_only_assumptions(const MemoryEstimate& e);

// The decoder layers of one pipeline stage by kind. A transformer layer is
// an attention block plus an MLP (mlp) or MoE (moe) block: attention counts
// every layer. A hybrid stack (megatron/core/ssm, Megatron-Core 0.16/0.17)
// has one block per layer: Mamba (M), attention (*), MLP (-) or MoE (E).
// LoRA's target_modules among the linears a gated delta net model has
// (Megatron Bridge 067f987df03b peft/lora.py LoRA.target_modules; the
// default is the first four): which of them get an adapter.
struct LoraTargets {
  bool qkv = true, proj = true, fc1 = true, fc2 = true;  // linear_qkv, linear_proj, linear_fc1, linear_fc2
  bool in_proj = false, out_proj = false;                // the GDN block's projections
};

struct LayerKinds {
  double mamba = 0, attention = 0, mlp = 0, moe = 0;
  // Of the attention layers, those with a DeepSeek sparse attention indexer
  // (not a layer of its own: part of the attention block).
  double indexers = 0;
  // Of the attention layers, gated delta net ones (a linear-attention block
  // in place of softmax attention; estimate_linear_attention.cpp).
  double linear = 0;
  // Of the attention layers, those that attend globally with their own head
  // width and KV groups (Gemma 4's full-attention layers).
  double global = 0;
};
// The kinds of the layers a hybrid pattern's symbols stand for (M, *, -, E).
LayerKinds count_kinds(std::string_view layers);
LayerKinds& operator+=(LayerKinds& a, const LayerKinds& b);
// A hybrid stack's layer kinds and layer count on each of `pp` pipeline
// stages (Megatron-Core mamba_hybrid_layer_allocation.py select_pipeline_segment,
// core_v0.17.0, as estimate.cpp [MM] reads it): piece i of `layers`, counts[i] long
// (at most what is left), runs on stage i % pp. The pattern's '|' segments
// are such pieces; without them, one contiguous piece per stage (or per
// chunk of a written interleaved layout).
void place_hybrid_pieces(std::string_view layers, const std::vector<int64_t>& counts, int64_t pp,
                         std::vector<LayerKinds>& kinds, std::vector<double>& stage_layers);


// Everything the estimate reads, resolved with the entry point's defaults.
// Separate from the job so the physics can be tested on the paper's
// configurations directly.
struct MemoryModel {
  // Shape.
  int64_t layers = 0, hidden = 0, heads = 0, query_groups = 0, kv_channels = 0, ffn = 0;
  int64_t vocab = 0;  // padded
  bool vocab_assumed = false;  // the tokenizer's size was not known: GPT-2's was taken
  int64_t seq = 0;
  int64_t positions = 0;  // learned absolute position embeddings (0: rope/none)
  bool swiglu = false, tied = true, rmsnorm = false, add_bias = true;
  bool mla = false;
  // Text-stack layer features (estimate.cpp): a norm after linear_proj and
  // after linear_fc2 (Bridge's TERowParallelLinearLayerNorm: Gemma 2/3,
  // EXAONE 4); qk_layernorm; the output layer's tanh soft-cap over the
  // logits; attention logits soft-capped inside the attention (only the
  // unfused path keeps anything for it).
  bool post_norms = false, qk_norm = false;
  // A gated MLP's activation (dense MLP, shared and routed experts): the
  // unfused glu of MLP.forward / TEGroupedMLP (bias_activation_fusion off, or
  // an activation with no fused kernel: fast_gelu), or Transformer Engine's
  // activation module (use_te_activation_func); neither: the fused kernel.
  bool unfused_glu = false, te_activation = false;
  // activation_func_clamp_value set (K-EXAONE 2.0's swiglu_limits): the
  // unfused glu clamps the gate half into a new tensor the activation keeps.
  bool clamped_glu = false;
  bool pre_norms = true;  // false: no input norm before the attention nor the MLP (EXAONE 4)
  bool logit_softcap = false, softcap_attention = false;
  int64_t q_lora = 0, kv_lora = 0, qk_head = 0, qk_rope = 0, v_head = 0;
  int64_t experts = 0, topk = 2, moe_ffn = 0, shared_ffn = 0, mtp_layers = 0;
  std::vector<bool> moe_pattern;  // per decoder layer; empty = dense
  // Hybrid (Mamba) stacks: the layer kinds of each pipeline stage; empty for
  // a transformer. The Mamba-2 mixer's dims (TransformerConfig's mamba_*):
  // heads 0 means hidden x 2 / head_dim (expand 2).
  std::vector<LayerKinds> hybrid_stages;
  // The pattern's pipeline segments ('|' separated; one when it has none),
  // without the MTP part: the planner re-splits them for other layouts.
  std::vector<std::string> hybrid_segments;
  int64_t mamba_heads = 0, mamba_head_dim = 64, mamba_groups = 8, mamba_state = 128;
  // use_mamba_mem_eff_path off: the mixer runs conv1d and the chunked scan
  // as separate kernels (MambaMixer._static_prefill), which keep other
  // tensors for the backward pass than the fused kernel (estimate.cpp).
  bool mamba_unfused = false;
  // A hybrid stack's multi-token prediction layer: one depth's layer kinds
  // (the pattern after '/'); all zero for a transformer's MTP layer, which
  // is a transformer layer.
  LayerKinds mtp_kinds;
  bool mtp_repeated = false;  // mtp_use_repeated_layer: one layer's weights serve every depth
  int64_t moe_latent = 0;     // LatentMoE: routed experts work in this width (0: hidden)
  // DeepSeek sparse attention (Megatron-Core's experimental attention variant
  // "dsa", GLM-5.x): MLA in its absorbed form over the top-k keys a lightning
  // indexer picks (estimate_dsa.cpp). dsa_heads 0: no DSA. With topk_freq > 1
  // only the layers is_dsa_skip_topk_layer keeps build an indexer; the others
  // reuse its top-k (dsa_indexer: per decoder layer).
  int64_t dsa_heads = 0, dsa_head_dim = 0, dsa_topk = 0;
  int64_t dsa_topk_freq = 1, dsa_skip_offset = 0;
  bool dsa_indexer_loss = false;  // dsa_indexer_loss_coeff > 0: the indexer trains
  std::vector<bool> dsa_indexer;
  // Gated delta net (experimental attention variant "gated_delta_net",
  // Qwen3-Next, Qwen3.5; estimate_linear_attention.cpp): per decoder layer,
  // true = a GDN block, false = softmax attention; empty: none.
  std::vector<bool> gdn_pattern;
  // DeepSeek V4 (experimental attention variant "dsv4_hybrid"; its layers,
  // hyper-connection streams and MTP head in estimate_dsv4_stage.cpp): the
  // catalogued shape and what the job sets for its layers; nullopt for any
  // other model.
  std::optional<Dsv4Shape> dsv4;
  Dsv4Run dsv4_run;
  int64_t gdn_key_heads = 0, gdn_key_dim = 0, gdn_value_heads = 0, gdn_value_dim = 0, gdn_conv = 4;
  bool attention_gate = false;  // attention_output_gate: a sigmoid gate on the attention output
  // Gemma 4 (Bridge's modeling_gemma4.py): per decoder layer, true = a
  // full-attention layer with global_kv_channels and global_query_groups in
  // place of kv_channels and query_groups (Gemma4SelfAttention); empty: none.
  std::vector<bool> global_attention;
  int64_t global_kv_channels = 0, global_query_groups = 0;
  // Gemma 4's own norms: V normalised in fp32 in every attention (v_norm),
  // and the MoE layer's three RMSNorms as PyTorch expressions (expert input,
  // shared-expert input, after the FFN), which keep fp32 copies.
  bool gemma4_norms = false;
  // Every norm of the layer is a PyTorch expression (Gemma4RMSNorm in Bridge's
  // local Gemma 4 spec): the input, post-attention, pre-MLP, post-MLP and
  // Q/K head norms keep two fp32 copies of their input and their fp32 output.
  bool torch_norms = false;
  // Gemma 4's per-layer embeddings (the E-models; Bridge's _attach_ple_modules):
  // a vocab-parallel ple_vocab x (layers x ple_dim) table, a column-parallel
  // hidden -> layers x ple_dim projection, and per layer a hidden -> ple_dim
  // gate and ple_dim -> hidden projection; 0: none.
  int64_t ple_vocab = 0, ple_dim = 0;
  double capacity_factor = 0;     // 0: dropless
  bool pad_to_capacity = false;
  std::string dispatcher = "allgather";
  // Parallelism.
  int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1, dp = 1, edp = 1;
  bool sp = false;
  std::vector<double> stage_layers;  // decoder layers per pipeline stage
  std::vector<int64_t> stage_mtp;    // MTP layers per stage
  // Batch.
  int64_t micro_batch = 1, microbatches = 1;
  int64_t microbatch_group = 0;  // interleaved schedule group; 0 = PP
  // Precision and optimizer.
  int param_bytes = 2;        // bf16/fp16: 2, fp32: 4
  int grad_bytes = 4;         // main_grad buffer
  double master_bytes = 4, exp_avg_bytes = 4, exp_avg_sq_bytes = 4;
  bool fp8 = false, fp8_param = false;
  bool fp4 = false, fp4_param = false;  // NVFP4 GEMMs (model.fp4, or the preset's), NVFP4 parameters
  bool fp8_weight_cache = false;  // TE's cached FP8/NVFP4 weights (+ transposes) across micro-batches
  // Layers a first_last_layers_bf16 setting keeps in BF16 (start + end).
  int64_t bf16_edge_layers = 0;
  std::string optimizer = "adam";
  bool distributed_optimizer = false;
  int64_t optimizer_instances = 1;
  std::string fsdp_sharding;  // Megatron-FSDP: optim, optim_grads, optim_grads_params; "" = DDP
  // Hybrid FSDP (outer_dp_sharding_strategy "optim"): the FSDP shards are per
  // distributed-optimizer instance, the optimizer state is sharded over them all.
  bool fsdp_outer_optim = false;
  double optimizer_offload = 0;
  bool precision_aware = false;  // TE FusedAdam holds the master weight in its state
  // The job loads a distributed optimizer's state from a checkpoint
  // (checkpoint.load set, not finetune, load_optim): see resume_bytes.
  bool resumes_optimizer = false;
  bool grad_accumulation_fusion = true;
  int64_t lora_rank = 0;  // PEFT (LoRA): the base model is frozen; 0 = full training
  LoraTargets lora_targets;  // read for gated delta net models (estimate_peft.cpp)
  std::string cross_entropy = "unfused";  // "unfused", "native" (fused, compiled), "te"
  int64_t deferred_wgrad = 0;  // output-layer wgrads deferred to the flush (micro-batches)
  // Activations.
  bool unfused_attention = false;
  bool local_attention = false;  // transformer_impl "local": Megatron's own softmax, not TE's
  // That softmax without masked_softmax_fusion: PyTorch's, in fp32 with
  // attention_softmax_in_fp32, which keeps its fp32 output.
  bool torch_softmax_fp32 = false;
  double hidden_dropout = 0.1, attention_dropout = 0.1;
  std::string recompute;  // "", "selective", "full"
  std::string recompute_method;
  int64_t recompute_layers = 0;
  std::set<std::string> recompute_modules;
  bool distribute_saved = false;
  int64_t cpu_offload_layers = 0;
  std::set<std::string> offload_modules;  // fine-grained activation offloading
  VisionLoad vision;  // a vision-language recipe's tower and projector (estimate_vision.h)
  EncoderLoad encoder;  // pretrain_vlm.py's CLIP ViT and projector (estimate_llava.h)
  // A diffusion transformer (Wan, FLUX; estimate_dit.h): its blocks and
  // embedders replace the language model's layers, embedding and logits.
  DitLoad dit;
  // A frozen language model that gradients still flow through (to a trained
  // projector): TE's linear layers keep no input for a weight gradient
  // (transformer_engine/pytorch/module/linear.py v2.8: backward_needs_input =
  // is_grad_enabled and weight.requires_grad), so the GEMM inputs are not saved.
  bool frozen_gemm_inputs = false;
  std::vector<UncountedMemory> uncounted;
  // Hardware.
  std::string gpu;
  double capacity_gib = 0;
};

// The estimate's measured error, which the memory rules judge with: the p90
// of its under-estimation of the peak allocated memory (max(0, 1 -
// estimate / measured) per run) over the 217 evaluation runs of
// tools/memory_eval.py: 8.641% when set, rounded up to 8.65% (docs/memory.md,
// "Accuracy"; the p90 of |error| over the same runs is the same 8.641%),
// never fitted to a single run. One constant for
// both directions: 9 runs in 10 peak at most peak / (1 - band) and the
// over-estimates stay within the same margin. memory_eval_acceptance fails
// when the measured figure rises above it, so the band cannot go stale.
constexpr double kEstimateErrorBand = 0.0865;

// How far the whole estimate of a job on a catalog recipe may lie above what
// the job needs. Recipe and provider code leave settings mblint does not read
// at the estimate's defaults, so there the estimate is an upper bound, and by
// how much is measured on layouts known to fit: NVIDIA's 220 published
// layouts (perf_published.csv), each of which ran, are estimated at up to
// 2.143 times their GPU's memory (tools/memory_published.py, the Llama 3 70B
// NVFP4 row on GB300), rounded up to 2.15. A recipe job whose low end is above
// this many times its GPU does not fit even if over-counted that much.
// memory_published_acceptance fails when a published layout is estimated
// above it, so the bound cannot go stale.
constexpr double kRecipeOverEstimateBound = 2.15;

// What the most loaded rank needs (overhead included, GiB) when the peak
// allocated is off by the measured error either way: low = the peak
// over-estimated by the band, high = the peak under-estimated by it.
struct MemoryRange {
  double low = 0, high = 0;
};
MemoryRange total_range(const MemoryEstimate& e);

// The estimate without its optimizer state (its part, its share of the peak
// and of the overhead): what a rank needs whatever the data-parallel size the
// state is sharded over.
MemoryEstimate without_optimizer(const MemoryEstimate& e);

// Bytes of activations one transformer layer keeps for the backward pass,
// per micro-batch on one rank (Korthikanti et al. 2022 with the extensions
// documented in estimate.cpp). `moe` selects a MoE layer.
// Tokens one expert rank's grouped GEMMs receive per micro-batch when this
// rank routes `routed` tokens (balanced routing, padded to capacity when set).
double expert_received_tokens(const MemoryModel& m, double routed);

// Parameters of one LoRA adapter on a linear of `in` x `out` (the full,
// unsplit widths) at rank `rank`, per rank of the `split` ranks that share the
// linear (TP, or the expert TP for routed experts): Megatron Bridge's
// ParallelLinearAdapter (067f987df03b peft/utils.py:923-1080) splits both of
// its weights over that group, linear_in as a row-parallel layer behind a
// row-parallel base and as a column-parallel one over the rank otherwise,
// linear_out always column-parallel; get_adapter_attributes_from_linear
// (:549) passes the unsplit widths.
double lora_adapter_params(double rank, double in, double out, double split);

double layer_activation_bytes(const MemoryModel& model, bool moe, std::vector<std::string>* details = nullptr);

// Bytes a MoE block keeps per micro-batch on one rank without its pre-MLP
// norm's input and output (router, dispatch, routed and shared experts): for
// a layer whose norm is kept elsewhere (DeepSeek V4's hyper-connections,
// estimate_dsv4_stage.cpp).
double moe_block_bytes(const MemoryModel& model);

// Layer-micro-batches whose activations pipeline stage `stage` holds at its
// peak: layers on the stage x micro-batches in flight (1F1B), or model chunks
// in flight x layers per chunk (interleaved).
double layers_in_flight(const MemoryModel& model, int stage);

// How many of `stage`'s layers carry a per-layer mark (a DSA indexer, a gated
// delta net): counted over the stage's own layers without virtual stages,
// else the stage's share of all marked layers (interleaved chunks spread them).
double marked_layers_on_stage(const MemoryModel& model, const std::vector<bool>& marks, int stage);

// Bytes of activations one hybrid-stack Mamba layer keeps for the backward
// pass, per micro-batch on one rank (see estimate.cpp).
double mamba_layer_bytes(const MemoryModel& model, std::vector<std::string>* details = nullptr);

// Whether Transformer Engine's fused scale-mask-softmax kernel takes
// scores of sq x sk over `attn_batches` (b x heads per rank); when it does
// not, TE's unfused attention keeps the softmax's fp32 output too
// (estimate.cpp).
bool te_softmax_kernel(int64_t sq, int64_t sk, double attn_batches);

// Transformer Engine trains a head of width `head_dim` only in its unfused
// attention: FlashAttention 2 and 3 want a (padded) multiple of 8 up to 256
// (transformer_engine/pytorch/attention/dot_product_attention/utils.py
// get_attention_backend: "padded head_dim %8 = 0, padded head_dim <= 256",
// FA3 "head_dim_qk <= 256"), cuDNN's arbitrary-sequence-length kernels a
// multiple of 8 and, for the backward pass, at most 256 (transformer_engine/
// common/fused_attn/fused_attn.cpp: 256 on Hopper from cuDNN 9.5, on
// Blackwell 128, 192/128 or exactly 256), TransformerEngine d0067d0. A
// 624-wide model with 12 heads (52 each) and Gemma 4's 512-wide global heads
// run unfused.
bool te_trains_unfused(int64_t head_dim);

// The estimate for a resolved model.
MemoryEstimate estimate_model(const MemoryModel& model);

// The model a job describes; nullopt (with `why_not`) when the shape or the
// parallel sizes are not known. Defaults taken are added to `assumptions`.
std::optional<MemoryModel> read_memory_model(const Job& job, const Derived& derived,
                                             std::vector<std::string>& assumptions, std::string* why_not);

// nullopt when the model shape or the parallel sizes are not known well
// enough to estimate; `why_not` (when given) then says what is missing.
std::optional<MemoryEstimate> estimate_memory(const Job& job, const Derived& derived,
                                              std::string* why_not = nullptr);

}  // namespace mblint
