// The sound encoder and its projector of an audio-visual recipe in the memory
// estimate (Nemotron Omni's Parakeet encoder): their parameters from the
// checkpoint's `sound_config` (data/sound_dims.csv), whether the recipe
// freezes them, and the sound tokens a micro-batch can carry. Sources are
// cited in estimate_sound.cpp and docs/memory.md ("Nemotron Omni").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mblint {

struct Job;
struct MemoryModel;

// One row of data/sound_dims.csv (tools/gen_catalog.py writes
// lint/facts/sound_dims_data.inc from it).
struct SoundDims {
  const char* key;           // the recipes' model key in the catalog: "nemotron_omni_valor32k"
  const char* hf_id;         // the checkpoint the recipes build from
  const char* arch;          // how the encoder's parameters are laid out: "parakeet"
  int layers;                // sound_config.num_hidden_layers (conformer blocks)
  int hidden;                // sound_config.hidden_size
  int heads;                 // sound_config.num_attention_heads
  int ffn;                   // sound_config.intermediate_size (each of a block's two feed-forwards)
  int conv_kernel;           // sound_config.conv_kernel_size (the depthwise convolution)
  int subsampling_channels;  // sound_config.subsampling_conv_channels
  int subsampling_factor;    // sound_config.subsampling_factor (log2 of it: strided conv stages)
  int mel_bins;              // sound_config.num_mel_bins
  int projector_ffn;         // sound_config.projection_hidden_size (the MLP projector's width)
  int text_hidden;           // the language model's width the projector maps to
  const char* source;        // where these numbers come from
};

// The catalog's sound encoder of a recipe model key; nullptr when it has none.
const SoundDims* find_sound_dims(std::string_view model_key);

// Parameters of the encoder (whole on every tensor-parallel rank: a Hugging
// Face module) and of the projector (`projector_split`: the part tensor
// parallelism divides).
struct SoundParams {
  int64_t encoder = 0;
  int64_t projector = 0, projector_split = 0;
};
SoundParams sound_params(const SoundDims& d);

// What the first pipeline stage holds for the sound encoder, per GPU.
struct SoundLoad {
  const SoundDims* dims = nullptr;  // nullptr: no sound encoder
  double trainable_params = 0;      // get main_grad and optimizer state
  double frozen_params = 0;         // weights only
  double activation_bytes = 0;      // saved for the backward pass, per micro-batch
  double adapter_params = 0;        // LoRA adapters on the projector (per GPU), trained
  int64_t tokens = 0;               // sound tokens assumed per micro-batch
  bool encoder_frozen = false, projector_frozen = false;
};

// The sound encoder a job with `d` trains with, sized for the language model
// `m`; nullopt (with `why_not`) when its cost is not modelled (a trained
// encoder).
std::optional<SoundLoad> read_sound_load(const Job& job, const MemoryModel& m, const SoundDims& d,
                                         std::string* why_not);

// The line the estimate states as its assumption about the encoder.
std::string sound_assumption(const SoundLoad& s);

}  // namespace mblint
