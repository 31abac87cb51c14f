// The vision tower and projector of a vision-language recipe in the memory
// estimate: their parameters from the Hugging Face `vision_config` of the
// checkpoint the recipe builds from (data/vision_dims.csv), which pipeline
// stage holds them, whether the recipe freezes them, and the image patches a
// micro-batch can carry. Sources are cited in estimate_vision.cpp and
// docs/memory.md ("Vision encoders").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lint/facts/estimate_sound.h"

namespace mblint {

struct Job;
struct MemoryModel;

// One row of data/vision_dims.csv (tools/gen_catalog.py writes
// lint/facts/vision_dims_data.inc from it).
struct VisionDims {
  const char* key;         // the recipes' model key in the catalog: "gemma4_vl_26b"
  const char* hf_id;       // the checkpoint the recipes build from
  const char* arch;        // how the tower's parameters are laid out: "gemma4"
  int layers;              // vision_config.num_hidden_layers
  int hidden;              // vision_config.hidden_size
  int heads;               // vision_config.num_attention_heads
  int head_dim;            // vision_config.head_dim
  int ffn;                 // vision_config.intermediate_size
  int patch_size;          // pixels per patch side
  int temporal_patch;      // frames per patch (video towers; 1 for images only)
  int in_channels;         // colour channels of a patch
  int position_rows;       // rows of each learned position table
  int merge;               // patches pooled into one image token, per side
  int text_hidden;         // the language model's width the projector maps to
  int tokens_per_image;    // image tokens one image places in the sequence (0: variable)
  int extra_params;        // tower parameters outside the layers and embeddings (named in `source`;
                           // "pixtral": the projector's linear biases, multimodal_projector_bias)
  int deepstack;           // extra patch mergers fed from inner layers (Qwen3-VL deepstack_visual_indexes)
  const char* source;      // where these numbers come from
  // Appended after `source` in the CSV (0 for the rows before them):
  int class_tokens;        // learned class tokens the tower prepends to each image (RADIO class_token_len)
  int projector_ffn;       // hidden width of an MLP projector (projector_hidden_size; 0: none)
  int kv_heads;            // the tower's key/value heads (num_key_value_heads; 0: heads, no grouped-query attention)
};

// The catalog's vision tower of a recipe model key; nullptr when it has none.
const VisionDims* find_vision_dims(std::string_view model_key);

// Parameters of the tower (patch embedding, position tables, encoder layers)
// and of the projector into the language model, exactly as the checkpoint's
// modules hold them; `*_split` is the part tensor parallelism divides (the
// weights of Megatron-Core column- and row-parallel layers).
struct VisionParams {
  int64_t tower = 0, tower_split = 0;
  int64_t projector = 0, projector_split = 0;
};
VisionParams vision_params(const VisionDims& d);

// What the first pipeline stage holds for the vision tower, per GPU.
struct VisionLoad {
  const VisionDims* dims = nullptr;  // nullptr: no vision tower
  double trainable_params = 0;       // get main_grad and optimizer state
  double frozen_params = 0;          // weights only
  double activation_bytes = 0;       // saved for the backward pass, per micro-batch
  int64_t images = 0;                // the bound assumed per micro-batch
  int64_t patches = 0;
  int64_t class_tokens = 0;          // the tower's class tokens over those images (RADIO)
  bool tower_frozen = false, projector_frozen = false;
  bool language_frozen = false;      // freeze_language_model: its weights keep no grads/optimizer state
  double adapter_params = 0;         // LoRA adapters on the tower and projector (per GPU), trained
  int64_t video_embedder = 0;        // RADIO's temporal video embedder (temporal_patch_dim > 1), in the tower's counts
  SoundLoad sound;                   // the checkpoint's sound encoder (Nemotron Omni), in the counts above
};

// The vision tower a recipe job trains with, read from its model key and its
// freeze_* settings, sized for the language model `m` (its sequence and
// micro-batch bound the images; its TP splits and its recompute settings
// apply to a Megatron-Core tower). nullopt (with `why_not`) when the
// recipe's model is a vision-language model whose tower the estimate cannot
// bound; an empty load (dims == nullptr) for every other job.
std::optional<VisionLoad> read_vision_load(const Job& job, const MemoryModel& m, std::string* why_not);

// The line the estimate states as its assumption about the tower.
std::string vision_assumption(const VisionLoad& v);

// What the estimate calls the first stage's multimodal encoders: "vision
// tower and projector", "audio encoder and projector" for Qwen2-Audio's, or
// "vision tower, projector and sound encoder" with Nemotron Omni's sound
// encoder. `v.dims` must be set.
const char* vision_part_label(const VisionLoad& v);

}  // namespace mblint
