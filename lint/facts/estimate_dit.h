// Diffusion transformers in the memory estimate: Megatron Bridge's Wan
// (WanModel: adaLN blocks with self-attention, cross-attention to the text
// embeddings and a GELU MLP) and FLUX (Flux: double-stream MMDiT blocks,
// then single-stream blocks). Their parameters and the activations their
// blocks keep replace the language model's layers, embedding and logits.
// Sources are cited in estimate_dit.cpp and docs/memory.md ("Diffusion
// transformers").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mblint {

struct Job;
struct MemoryModel;

// Wan's dims (WanModelProvider's fields).
struct WanDims {
  int64_t layers = 30, hidden = 1536, heads = 12, ffn = 8960;
  int64_t cross = 1536;          // crossattn_emb_size: the text embedding's width after text_embedding
  int64_t in_channels = 16, out_channels = 16, patch_temporal = 1, patch_spatial = 2;
  int64_t freq = 256, text_dim = 4096;
};

// FLUX's dims (FluxProvider's fields as FluxBridge.provider_bridge sets them).
struct FluxDims {
  int64_t joint = 19, single = 38, hidden = 3072, heads = 24, ffn = 12288;
  int64_t in_channels = 64, context = 4096, vec_in = 768, model_channels = 256, patch = 1;
  bool guidance = true;
};

// Parameters on one tensor-parallel rank: split over TP, or whole on every rank.
struct DitParams {
  double sharded = 0, replicated = 0;
  double total() const { return sharded + replicated; }
};

DitParams wan_layer_params(const WanDims& d, int64_t tp);
// The embedders (patch, text, time) and the head; `first`/`last`: which the stage builds.
DitParams wan_outer_params(const WanDims& d, bool first, bool last);
DitParams flux_double_params(const FluxDims& d, int64_t tp);
DitParams flux_single_params(const FluxDims& d, int64_t tp);
DitParams flux_outer_params(const FluxDims& d);

// The tokens one micro-batch puts through the blocks, per rank.
struct DitTokens {
  double latent = 0;  // latent (video/image) tokens on this rank: the packed sequence / CP, x micro-batch
  double text = 0;    // text tokens: Wan's cross-attention keys, FLUX's text stream
  int64_t tp = 1;
  bool sp = false;
};

// Bytes one block keeps for the backward pass, per micro-batch on one rank.
double wan_layer_bytes(const WanDims& d, const DitTokens& t, std::vector<std::string>* details = nullptr);
double flux_double_bytes(const FluxDims& d, const DitTokens& t, std::vector<std::string>* details = nullptr);
double flux_single_bytes(const FluxDims& d, const DitTokens& t, std::vector<std::string>* details = nullptr);

// What one pipeline stage of a diffusion transformer holds beside the
// generic terms: its parameters, its blocks' saved activations and the
// embedders', head's and loss's, per micro-batch.
struct DitStage {
  DitParams params;
  double largest = 0;      // the largest single weight (the bf16 wgrad temporary)
  double block_bytes = 0;  // all the stage's blocks, one micro-batch
  double outer_bytes = 0;  // embedders, rotary table, head and loss, one micro-batch
};

struct DitLoad {
  bool present = false;
  bool flux = false;  // FLUX, else Wan
  WanDims wan;
  FluxDims flux_dims;
  DitTokens tokens;
  std::string label;        // "Wan: 30 adaLN blocks over 37440 latent tokens, 512 text tokens"
  double total_params = 0;  // the whole model (TP 1, every stage)
  std::vector<DitStage> stages;
};

// The whole model's parameters (TP 1, one stage): what a checkpoint holds.
double wan_parameters(const WanDims& d);
double flux_parameters(const FluxDims& d);

// Reads a diffusion transformer (the recipe's model records `dit` in
// data/model_dims.csv) into `m`: its shape (m.layers: the blocks) and its
// tokens (m.seq, m.micro_batch); an empty load for any other job; nullopt
// (with `why_not`) for what is not modelled. Call dit_stages once
// m.stage_layers is split.
std::optional<DitLoad> read_dit(const Job& job, const char* dit, MemoryModel& m, std::vector<std::string>& assumptions,
                                std::string* why_not);
// Fills `load.stages` from m.stage_layers (Wan's blocks split over the
// stages, the embedders on every stage, patch embedding first, head last;
// FLUX runs on one stage).
void dit_stages(const MemoryModel& m, DitLoad& load);

}  // namespace mblint
