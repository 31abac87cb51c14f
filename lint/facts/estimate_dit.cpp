// Diffusion transformers in the memory estimate (see estimate_dit.h).
//
// Sources, NVIDIA-NeMo/Megatron-Bridge at 067f987df03b (the catalog's
// snapshot) on the Megatron-Core it pins, 2a75ac12c54b; paths under
// src/megatron/bridge/:
// [WP]  diffusion/models/wan/wan_provider.py WanModelProvider: qk_layernorm,
//       add_bias_linear, add_qkv_bias, layernorm_across_heads, GELU
//       (bias_activation_fusion), dropouts 0, in/out channels 16, patch 1x2x2,
//       freq_dim 256, text_dim 4096.
// [WM]  diffusion/models/wan/wan_model.py WanModel: patch_embedding Conv3d
//       (first stage), text_embedding Linear-GELU-Linear, time_embedder
//       (ParallelTimestepEmbedding: linear_1, linear_2), time_proj h -> 6h on
//       every stage; the decoder is Megatron-Core's TransformerBlock (its
//       recompute applies); Head (last stage): a LayerNorm without weights,
//       Linear h -> out x patch volume, a 2 x h modulation.
// [WL]  diffusion/models/wan/wan_layer_spec.py WanLayerWithAdaLN: a 6 x h
//       modulation; norm1 and norm2 LayerNorms without weights, norm3 with;
//       adaLN.normalize_modulate and scale_add are jit_fuser (torch.compile)
//       regions; full_self_attention DiTSelfAttention (TE linear_qkv,
//       linear_proj), cross_attention DiTCrossAttention (linear_q, linear_kv
//       from crossattn_emb_size, linear_proj), MLP fc1/fc2.
// [DA]  diffusion/models/common/dit_attention.py: with layernorm_across_heads
//       the Q and K norms are RMSNorms over all heads (query_projection_size,
//       kv_projection_size wide), run on Q and K gathered over TP, then
//       scattered back.
// [WD]  diffusion/data/wan/wan_energon_datamodule.py WanDatasetConfig (mock
//       data when `path` is empty: F 24, H 104, W 60 latents, patch 2 / 1,
//       number_packed_samples 1, context_seq_len 512), wan_mock_datamodule.py
//       mock_batch (one packed sample whatever the micro-batch size),
//       wan_taskencoder.py (real data: samples padded to 2 x CP, packed by
//       first-fit up to seq_length; batch() takes the first packed sample).
// [FP]  diffusion/models/flux/flux_provider.py FluxProvider (num_layers a
//       dummy 1; openai_gelu; apply_rope_fusion False) and
//       diffusion/conversion/flux/flux_bridge.py provider_bridge.
// [FM]  diffusion/models/flux/flux_model.py Flux: img_embed, txt_embed,
//       TimeStepEmbedder, MLPEmbedder vector (and guidance) embedders,
//       double then single blocks called directly (no TransformerBlock: no
//       recompute, no pipeline split: set_input_tensor does nothing),
//       AdaLNContinuous norm_out, proj_out.
// [FL]  diffusion/models/flux/flux_layer_spec.py MMDiTLayer (two AdaLN of
//       6 x h with bias, a context MLP), FluxSingleTransformerBlock (AdaLN of
//       3 x h; MLP and attention over the same normed input);
//       flux_attention.py JointSelfAttention (linear_qkv, added_linear_qkv,
//       linear_proj, added_linear_proj, per-head Q/K norms for each stream;
//       the streams' Q, K, V concatenated), FluxSingleAttention (linear_proj
//       without bias).
// [FD]  diffusion/data/flux/flux_energon_datamodule.py FluxDatasetConfig and
//       flux_mock_datamodule.py: mock latents of image_H / vae_scale_factor x
//       image_W / vae_scale_factor, packed 2 x 2 (flux_step.py), and
//       prompt_seq_len text embeddings; real data takes each image's size.
// [FLW] diffusion/common/flow_matching/flow_matching_pipeline.py
//       compute_loss: mse_loss over the fp32 prediction and target.
// [RP]  Megatron-Core 2a75ac12c54b models/common/embeddings/rope_utils.py
//       _apply_rotary_pos_emb_bshd (the unfused RoPE FLUX runs): cos and sin
//       cast to the input's dtype, each saved by its product.
// What a block keeps is read from these forward passes: every GEMM input (TE
// linears save their input), each norm's input, the attention's Q, K, V,
// output and fp32 softmax statistics (fused attention, no dropout), the
// GELU's input and output, and each gate's operand; a tensor two consumers
// save is counted once. The text encoders (umT5, CLIP) and the VAE do not
// run in the step: the datasets carry their outputs (latents, embeddings).
#include "lint/facts/estimate_dit.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/catalog_fields.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

constexpr double kAct = 2.0;  // bf16 activations

struct Bytes {
  double total = 0;
  std::vector<std::string>* details = nullptr;
  void add(const char* what, double bytes) {
    total += bytes;
    if (details) details->push_back(fmt::format("{}: {:.1f} MiB", what, bytes / (1024.0 * 1024.0)));
  }
};

double linear(double in, double out, bool bias) { return in * out + (bias ? out : 0); }

}  // namespace

// [WL] [DA] one block: TP splits the column-parallel weights and biases and
// the row-parallel weights; the row-parallel biases, the across-heads Q/K
// norms, norm3 and the modulation are whole on every rank.
DitParams wan_layer_params(const WanDims& d, int64_t tp) {
  double h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn), c = static_cast<double>(d.cross);
  double split = linear(h, 3 * h, true) + h * h         // self-attention linear_qkv, linear_proj
                 + linear(h, h, true) + linear(c, 2 * h, true) + h * h  // linear_q, linear_kv, linear_proj
                 + linear(h, f, true) + f * h;                          // fc1, fc2
  double whole = 3 * h            // the three row-parallel biases
                 + 2 * h + 2 * h  // Q and K norms of both attentions
                 + 2 * h          // norm3 (weight and bias)
                 + 6 * h;         // the adaLN modulation
  return {split / static_cast<double>(std::max<int64_t>(1, tp)), whole};
}

// [WM]
DitParams wan_outer_params(const WanDims& d, bool first, bool last) {
  double h = static_cast<double>(d.hidden), c = static_cast<double>(d.cross);
  double patch = static_cast<double>(d.patch_temporal * d.patch_spatial * d.patch_spatial);
  double p = linear(static_cast<double>(d.text_dim), c, true) + linear(c, c, true)  // text_embedding
             + linear(static_cast<double>(d.freq), h, true) + linear(h, h, true)   // time_embedder
             + linear(h, 6 * h, true);                                              // time_proj
  if (first) p += linear(static_cast<double>(d.in_channels) * patch, h, true);     // patch_embedding
  if (last) p += linear(h, static_cast<double>(d.out_channels) * patch, true) + 2 * h;  // head, its modulation
  return {0, p};
}

// [FL] a double block: both AdaLN linears (column-parallel with bias), both
// streams' QKV and projections, the image and context MLPs; whole: the row
// biases and the four per-head norms.
DitParams flux_double_params(const FluxDims& d, int64_t tp) {
  double h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn);
  double head = h / static_cast<double>(std::max<int64_t>(1, d.heads));
  double split = 2 * linear(h, 6 * h, true) + 2 * linear(h, 3 * h, true) + 2 * h * h + 2 * (linear(h, f, true) + f * h);
  double whole = 2 * h + 2 * h + 4 * head;  // linear_proj and added_linear_proj biases, two fc2 biases, Q/K norms
  return {split / static_cast<double>(std::max<int64_t>(1, tp)), whole};
}

// [FL] a single block: AdaLN 3 x h, QKV, a projection without bias, the MLP.
DitParams flux_single_params(const FluxDims& d, int64_t tp) {
  double h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn);
  double head = h / static_cast<double>(std::max<int64_t>(1, d.heads));
  double split = linear(h, 3 * h, true) + linear(h, 3 * h, true) + h * h + linear(h, f, true) + f * h;
  return {split / static_cast<double>(std::max<int64_t>(1, tp)), h + 2 * head};
}

// [FM] embedders and the output layers, plain nn.Linear: whole on every rank.
DitParams flux_outer_params(const FluxDims& d) {
  double h = static_cast<double>(d.hidden), mc = static_cast<double>(d.model_channels);
  double mlp_embedder = linear(mc, h, true) + linear(h, h, true);
  double p = linear(static_cast<double>(d.in_channels), h, true) + linear(static_cast<double>(d.context), h, true) +
             mlp_embedder  // timestep
             + linear(static_cast<double>(d.vec_in), h, true) + linear(h, h, true)  // vector (pooled CLIP)
             + (d.guidance ? mlp_embedder : 0) + linear(h, 2 * h, true)              // norm_out's modulation
             + linear(h, static_cast<double>(d.patch * d.patch * d.in_channels), true);  // proj_out
  return {0, p};
}

double wan_parameters(const WanDims& d) {
  return static_cast<double>(d.layers) * wan_layer_params(d, 1).total() + wan_outer_params(d, true, true).total();
}

double flux_parameters(const FluxDims& d) {
  return static_cast<double>(d.joint) * flux_double_params(d, 1).total() +
         static_cast<double>(d.single) * flux_single_params(d, 1).total() + flux_outer_params(d).total();
}

// [WL] [DA] one Wan block over t latent tokens on this rank (rows: t / TP
// under sequence parallelism) and L text tokens.
double wan_layer_bytes(const WanDims& d, const DitTokens& k, std::vector<std::string>* details) {
  Bytes b{0, details};
  double tp = static_cast<double>(std::max<int64_t>(1, k.tp));
  double t = k.latent, rows = k.sp ? t / tp : t, L = k.text;
  double h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn), n = static_cast<double>(d.heads);
  // Self-attention: norm1's input (the block's input), linear_qkv's input
  // (the modulated norm), the Q and K norms' inputs (all heads: gathered
  // over TP), linear_qkv's output (V is a view of it), Q and K after RoPE,
  // the attention's output (linear_proj's input) and its fp32 statistics,
  // linear_proj's output plus bias (the gate's operand).
  b.add("self-attention norm1 input, linear_qkv input", 2 * kAct * rows * h);
  b.add("self-attention Q and K norm inputs (all heads)", 2 * kAct * t * h);
  b.add("linear_qkv output (V is a view of it)", kAct * t * 3 * h / tp);
  b.add("Q and K after RoPE", 2 * kAct * t * h / tp);
  b.add("self-attention output", kAct * t * h / tp);
  b.add("self-attention softmax statistics (fp32)", 4 * t * n / tp);
  b.add("self-attention projection output (gate operand)", kAct * rows * h);
  // Cross-attention: norm3's input, linear_q's input, the Q norm's input
  // (all heads) and Q, the output and statistics; K's norm input, K and
  // linear_kv's output (V a view) over the text tokens.
  b.add("cross-attention norm3 input, linear_q input", 2 * kAct * rows * h);
  b.add("cross-attention Q norm input (all heads), Q", kAct * t * h + kAct * t * h / tp);
  b.add("cross-attention output", kAct * t * h / tp);
  b.add("cross-attention softmax statistics (fp32)", 4 * t * n / tp);
  b.add("cross-attention K norm input, K, linear_kv output (text tokens)",
        kAct * L * h + kAct * L * h / tp + kAct * L * 2 * h / tp);
  // MLP: norm2's input, fc1's input, fc1's output (the bias-GELU's input),
  // GELU's output (fc2's input), fc2's output plus bias (the gate's operand).
  b.add("MLP norm2 input, fc1 input", 2 * kAct * rows * h);
  b.add("fc1 output, GELU output", 2 * kAct * t * f / tp);
  b.add("fc2 output (gate operand)", kAct * rows * h);
  return b.total;
}

namespace {

// [FL] one stream of a double block (t tokens): its AdaLN norm's input and
// the modulated norm (linear_qkv's input), the Q and K norm inputs, its
// projection output (gate operand), the MLP's norm input, fc1 input, fc1
// output, GELU output and fc2 output (gate operand).
void flux_stream(const FluxDims& d, double t, double tp, Bytes& b, const char* stream) {
  double h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn);
  b.add(fmt::format("{} stream: norm input, linear_qkv input", stream).c_str(), 2 * kAct * t * h);
  b.add(fmt::format("{} stream: Q and K norm inputs", stream).c_str(), 2 * kAct * t * h / tp);
  b.add(fmt::format("{} stream: projection output (gate operand)", stream).c_str(), kAct * t * h);
  b.add(fmt::format("{} stream: MLP norm input, fc1 input", stream).c_str(), 2 * kAct * t * h);
  b.add(fmt::format("{} stream: fc1 output, GELU output", stream).c_str(), 2 * kAct * t * f / tp);
  b.add(fmt::format("{} stream: fc2 output (gate operand)", stream).c_str(), kAct * t * h);
}

// [RP] the attention over T tokens: Q and K after the unfused RoPE (and the
// cos and sin each product saves), V, the output and its fp32 statistics.
void flux_attention(const FluxDims& d, double T, double tp, Bytes& b) {
  double h = static_cast<double>(d.hidden), n = static_cast<double>(d.heads), head = h / n;
  b.add("Q and K after RoPE, V", 3 * kAct * T * h / tp);
  b.add("RoPE cos and sin (saved by Q's and K's products)", 4 * kAct * T * head);
  b.add("attention output", kAct * T * h / tp);
  b.add("attention softmax statistics (fp32)", 4 * T * n / tp);
}

}  // namespace

double flux_double_bytes(const FluxDims& d, const DitTokens& k, std::vector<std::string>* details) {
  Bytes b{0, details};
  double tp = static_cast<double>(std::max<int64_t>(1, k.tp));
  flux_stream(d, k.latent, tp, b, "image");
  flux_stream(d, k.text, tp, b, "text");
  flux_attention(d, k.latent + k.text, tp, b);  // [FL] the streams' Q, K, V concatenated
  return b.total;
}

// [FL] a single block over the concatenated T tokens: the norm's input, the
// modulated norm (the input of both fc1 and linear_qkv), fc1's output and
// GELU's output, linear_qkv's output (V a view of it), the Q and K norm
// inputs, the attention, the summed output (gate operand).
double flux_single_bytes(const FluxDims& d, const DitTokens& k, std::vector<std::string>* details) {
  Bytes b{0, details};
  double tp = static_cast<double>(std::max<int64_t>(1, k.tp));
  double T = k.latent + k.text, h = static_cast<double>(d.hidden), f = static_cast<double>(d.ffn);
  b.add("norm input, modulated norm (fc1 and linear_qkv input)", 2 * kAct * T * h);
  b.add("fc1 output, GELU output", 2 * kAct * T * f / tp);
  b.add("linear_qkv output (V is a view of it)", kAct * T * 3 * h / tp);
  b.add("Q and K norm inputs", 2 * kAct * T * h / tp);
  b.add("Q and K after RoPE", 2 * kAct * T * h / tp);
  b.add("RoPE cos and sin (saved by Q's and K's products)", 4 * kAct * T * h / static_cast<double>(d.heads));
  b.add("attention output", kAct * T * h / tp);
  b.add("attention softmax statistics (fp32)", 4 * T * static_cast<double>(d.heads) / tp);
  b.add("summed output (gate operand)", kAct * T * h);
  return b.total;
}

namespace {

// [WM] [FLW] Wan outside the blocks, per micro-batch: the patch embedding's
// input (first stage); the text embedding's inputs and its output (every
// stage; the output is the K/V input every block shares); the rotary table
// (fp32, head dim per token, shared); the head's norm and linear inputs and
// the loss's fp32 prediction and target (last stage).
double wan_outer_bytes(const WanDims& d, const DitTokens& k, bool first, bool last) {
  double h = static_cast<double>(d.hidden), c = static_cast<double>(d.cross), L = k.text;
  double tp = static_cast<double>(std::max<int64_t>(1, k.tp));
  double rows = k.sp ? k.latent / tp : k.latent;
  double patch = static_cast<double>(d.patch_temporal * d.patch_spatial * d.patch_spatial);
  double out = static_cast<double>(d.out_channels) * patch;
  double bytes = kAct * L * (static_cast<double>(d.text_dim) + 3 * c);
  bytes += 4 * k.latent * h / static_cast<double>(d.heads);
  if (first) bytes += kAct * k.latent * static_cast<double>(d.in_channels) * patch;
  if (last) bytes += 2 * kAct * rows * h + 2 * 4 * k.latent * out;
  return bytes;
}

// [FM] [FLW] FLUX outside the blocks: img_embed's and txt_embed's inputs, the
// rotary table (fp32), norm_out's input and proj_out's input, the loss.
double flux_outer_bytes(const FluxDims& d, const DitTokens& k) {
  double h = static_cast<double>(d.hidden), T = k.latent + k.text;
  double out = static_cast<double>(d.patch * d.patch * d.in_channels);
  return kAct * k.latent * static_cast<double>(d.in_channels) + kAct * k.text * static_cast<double>(d.context) +
         4 * T * h / static_cast<double>(d.heads) + 2 * kAct * k.latent * h + 2 * 4 * k.latent * out;
}

// A positive integer setting, else `fallback` (the provider's or the mock
// data module's default). One written but not known (a variable mblint
// cannot resolve) is named in `unknown`, and the job is declined for it
// rather than estimated on the default.
int64_t setting(const Job& job, std::string_view path, int64_t fallback, std::string& unknown) {
  Quantity q = config_int(job, path);
  if (q.known()) return *q.value > 0 ? *q.value : fallback;
  if (unknown.empty() && (q.where.value.valid() || q.where.statement.valid())) unknown = std::string(path);
  return fallback;
}

std::optional<DitLoad> decline_unknown(std::string* why_not, std::string_view model, const std::string& unknown) {
  if (why_not) *why_not = fmt::format("{} (diffusion transformer): {} is set to a value mblint cannot know", model, unknown);
  return std::nullopt;
}

// A data path is set (real data) when dataset.path is a non-empty string or list.
bool real_data(const Job& job) {
  const ConfigValue* node = config_node(job, "dataset.path");
  if (!node || node->is_null()) return false;
  if (node->is_list()) return !node->items.empty();
  std::string text = config_text(job, "dataset.path").value.value_or("");
  return !text.empty() && text != "null" && text != "None";
}

std::optional<DitLoad> decline(std::string* why_not, std::string_view model, std::string why) {
  if (why_not) *why_not = fmt::format("{} (diffusion transformer): {}", model, why);
  return std::nullopt;
}

// [WD] Wan's tokens: the mock's latent grid, or the packing's capacity.
std::optional<DitLoad> read_wan(const Job& job, MemoryModel& m, std::vector<std::string>& assumptions,
                                std::string* why_not) {
  std::string unknown;  // a setting written but not known (setting())
  DitLoad load;
  load.present = true;
  WanDims& d = load.wan;
  d.layers = m.layers;
  d.hidden = m.hidden;
  d.heads = m.heads;
  d.ffn = m.ffn;
  d.cross = setting(job, "model.crossattn_emb_size", m.hidden, unknown);  // the recipes pass hidden_size
  d.in_channels = setting(job, "model.in_channels", d.in_channels, unknown);
  d.out_channels = setting(job, "model.out_channels", d.out_channels, unknown);
  d.patch_temporal = setting(job, "model.patch_temporal", d.patch_temporal, unknown);
  d.patch_spatial = setting(job, "model.patch_spatial", d.patch_spatial, unknown);
  d.freq = setting(job, "model.freq_dim", d.freq, unknown);
  d.text_dim = setting(job, "model.text_dim", d.text_dim, unknown);
  int64_t tokens = 0, text = 0;
  if (real_data(job)) {
    std::optional<int64_t> seq = config_int(job, "dataset.seq_length").value;
    if (!seq || *seq <= 0) return decline(why_not, "Wan", "with dataset.path set, the packed sequence's length (dataset.seq_length) is not known");
    int64_t shard = m.cp > 1 ? 2 * m.cp : 1;  // [WD] samples padded to a multiple of 2 x CP
    tokens = (*seq + shard - 1) / shard * shard;
    text = 512;
    assumptions.push_back(fmt::format(
        "Wan with real data: each micro-batch is one packed sequence of at most dataset.seq_length = {} latent tokens "
        "(the first-fit packing's capacity; a longer video is packed alone and exceeds it) and one sample's 512 text "
        "tokens",
        *seq));
  } else {
    int64_t F = setting(job, "dataset.F_latents", 24, unknown), H = setting(job, "dataset.H_latents", 104, unknown);
    int64_t W = setting(job, "dataset.W_latents", 60, unknown);
    int64_t pt = setting(job, "dataset.patch_temporal", 1, unknown), ps = setting(job, "dataset.patch_spatial", 2, unknown);
    int64_t packed = setting(job, "dataset.number_packed_samples", 1, unknown);
    tokens = (F / pt) * (H / ps) * (W / ps) * packed;
    text = setting(job, "dataset.context_seq_len", 512, unknown) * packed;
    assumptions.push_back(fmt::format(
        "Wan without dataset.path: the mock data module's {} x {} x {} latents in {} x {} x {} patches x {} packed = "
        "{} latent tokens and {} text tokens per micro-batch (dataset.seq_length does not bound them)",
        F, H, W, pt, ps, ps, packed, tokens, text));
  }
  if (tokens <= 0) return decline(why_not, "Wan", "the latent grid gives no tokens");
  assumptions.push_back(
      "Wan: one packed sequence per micro-batch whatever micro_batch_size says (WanTaskEncoder.batch and the mock "
      "build one); the text embeddings and latents are precomputed (no umT5 or VAE in the step); the cross-attention "
      "keys and values span every text token on each context-parallel rank");
  m.seq = tokens;
  m.micro_batch = 1;
  load.tokens = {static_cast<double>(tokens) / static_cast<double>(m.cp), static_cast<double>(text), m.tp, m.sp};
  load.total_params = wan_parameters(d);
  load.label = fmt::format("Wan: {} adaLN blocks over {} latent tokens and {} text tokens", d.layers, tokens, text);
  if (!unknown.empty()) return decline_unknown(why_not, "Wan", unknown);
  return load;
}

// [FD] FLUX's tokens: the mock's image latents and prompt.
std::optional<DitLoad> read_flux(const Job& job, std::string_view dit, MemoryModel& m,
                                 std::vector<std::string>& assumptions, std::string* why_not) {
  std::vector<int64_t> f = slash_numbers(std::string(dit.substr(5)).c_str(), 6);  // "flux/J/S/C/T/V/G"
  if (f.size() != 6) return decline(why_not, "FLUX", "the catalog's FLUX record is malformed");
  std::string unknown;  // a setting written but not known (setting())
  DitLoad load;
  load.present = true;
  load.flux = true;
  FluxDims& d = load.flux_dims;
  d.joint = setting(job, "model.num_joint_layers", f[0], unknown);
  d.single = setting(job, "model.num_single_layers", f[1], unknown);
  d.in_channels = setting(job, "model.in_channels", f[2], unknown);
  d.context = setting(job, "model.context_dim", f[3], unknown);
  d.vec_in = setting(job, "model.vec_in_dim", f[4], unknown);
  d.guidance = config_bool(job, "model.guidance_embed").value.value_or(f[5] == 1);
  d.model_channels = setting(job, "model.model_channels", d.model_channels, unknown);
  d.patch = setting(job, "model.patch_size", d.patch, unknown);
  d.hidden = m.hidden;
  d.heads = m.heads;
  d.ffn = m.ffn;
  if (m.pp > 1 || m.vpp > 1) return decline(why_not, "FLUX", "Flux builds every block on every rank (flux_model.py: no pipeline split); pipeline parallelism is not modelled");
  if (m.cp > 1) return decline(why_not, "FLUX", "context parallelism over the joint text and image attention is not modelled");
  if (m.sp) return decline(why_not, "FLUX", "sequence parallelism is not modelled (Flux does not scatter its streams)");
  if (real_data(job)) {
    return decline(why_not, "FLUX",
                   "with dataset.path set each image's latent size comes from the data (flux_taskencoder.py: (H/2) x "
                   "(W/2) tokens per image), which the recipe does not bound");
  }
  int64_t scale = setting(job, "dataset.vae_scale_factor", 8, unknown);
  int64_t H = setting(job, "dataset.image_H", 1024, unknown), W = setting(job, "dataset.image_W", 1024, unknown);
  int64_t tokens = (H / scale / 2) * (W / scale / 2);
  int64_t text = setting(job, "dataset.prompt_seq_len", 512, unknown);
  if (tokens <= 0) return decline(why_not, "FLUX", "the image size gives no tokens");
  assumptions.push_back(fmt::format(
      "FLUX without dataset.path: the mock data module's {} x {} images, latents / {} packed 2 x 2 = {} image tokens "
      "and {} text tokens per sample; the T5 and CLIP embeddings and the latents are precomputed (no text encoder or "
      "VAE in the step)",
      H, W, scale, tokens, text));
  if (!m.recompute.empty()) {
    assumptions.push_back(
        "FLUX: recompute settings have no effect (flux_model.py calls its blocks directly, outside Megatron's "
        "TransformerBlock)");
    m.recompute.clear();
  }
  // [FP] FluxProvider turns gradient accumulation fusion off: the bf16
  // weight gradient is a temporary before it is added to main_grad.
  if (!config_bool(job, "model.gradient_accumulation_fusion").value) m.grad_accumulation_fusion = false;
  m.layers = d.joint + d.single;
  m.seq = tokens;
  double b = static_cast<double>(m.micro_batch);
  load.tokens = {static_cast<double>(tokens) * b, static_cast<double>(text) * b, m.tp, false};
  load.total_params = flux_parameters(d);
  load.label = fmt::format("FLUX: {} double and {} single blocks over {} image tokens and {} text tokens", d.joint,
                           d.single, tokens, text);
  if (!unknown.empty()) return decline_unknown(why_not, "FLUX", unknown);
  return load;
}

}  // namespace

std::optional<DitLoad> read_dit(const Job& job, const char* dit, MemoryModel& m, std::vector<std::string>& assumptions,
                                std::string* why_not) {
  std::string_view kind = dit ? dit : "";
  if (kind.empty()) return DitLoad{};
  std::string_view model = kind == "wan" ? "Wan" : "FLUX";
  if (kind != "wan" && kind.rfind("flux/", 0) != 0) return decline(why_not, kind, "not modelled");
  if (m.lora_rank > 0) return decline(why_not, model, "PEFT is not modelled");
  if (m.fp8) return decline(why_not, model, "FP8 training is not modelled");
  if (m.recompute == "selective") return decline(why_not, model, "selective recompute is not modelled");
  if (m.cpu_offload_layers > 0 || !m.offload_modules.empty()) {
    return decline(why_not, model, "activation offloading is not modelled");
  }
  // No vocabulary, no position table, no logits; the blocks' own terms
  // replace the language model's (estimate.cpp).
  m.vocab = 0;
  m.positions = 0;
  m.tied = false;
  m.mtp_layers = 0;
  return kind == "wan" ? read_wan(job, m, assumptions, why_not) : read_flux(job, kind, m, assumptions, why_not);
}

void dit_stages(const MemoryModel& m, DitLoad& load) {
  load.stages.assign(static_cast<size_t>(std::max<int64_t>(1, m.pp)), DitStage{});
  for (size_t s = 0; s < load.stages.size(); ++s) {
    DitStage& st = load.stages[s];
    bool first = s == 0, last = s + 1 == load.stages.size();
    if (load.flux) {
      const FluxDims& d = load.flux_dims;
      DitParams dp = flux_double_params(d, m.tp), sp = flux_single_params(d, m.tp), op = flux_outer_params(d);
      st.params.sharded = static_cast<double>(d.joint) * dp.sharded + static_cast<double>(d.single) * sp.sharded;
      st.params.replicated = static_cast<double>(d.joint) * dp.replicated + static_cast<double>(d.single) * sp.replicated +
                             op.replicated;
      double h = static_cast<double>(d.hidden);
      st.largest = std::max(6 * h * h / static_cast<double>(m.tp), static_cast<double>(d.context) * h);
      st.block_bytes = static_cast<double>(d.joint) * flux_double_bytes(d, load.tokens) +
                       static_cast<double>(d.single) * flux_single_bytes(d, load.tokens);
      st.outer_bytes = flux_outer_bytes(d, load.tokens);
      continue;
    }
    const WanDims& d = load.wan;
    double layers = s < m.stage_layers.size() ? m.stage_layers[s] : 0;
    DitParams lp = wan_layer_params(d, m.tp), op = wan_outer_params(d, first, last);
    st.params.sharded = layers * lp.sharded;
    st.params.replicated = layers * lp.replicated + op.replicated;
    double h = static_cast<double>(d.hidden);
    st.largest = std::max({6 * h * h, static_cast<double>(d.ffn) * h / static_cast<double>(m.tp),
                           static_cast<double>(d.text_dim) * static_cast<double>(d.cross)});
    st.block_bytes = layers * wan_layer_bytes(d, load.tokens);
    st.outer_bytes = wan_outer_bytes(d, load.tokens, first, last);
  }
}

}  // namespace mblint
