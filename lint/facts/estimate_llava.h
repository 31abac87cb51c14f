// The vision tower and projector of Megatron-LM's command-line LLaVA
// (pretrain_vlm.py) in the memory estimate, and the language model's longer
// decoder sequence (text plus image embeddings). Sources are cited in
// estimate_llava.cpp and docs/memory.md ("Megatron-LM's LLaVA").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mblint {

struct Job;
struct MemoryModel;

// What the first pipeline stage holds for pretrain_vlm.py's CLIP ViT and its
// MLP projector, per GPU. Empty (present false) for every other job.
struct EncoderLoad {
  bool present = false;
  std::string label;               // "CLIP ViT (12 layers over 577 tokens) and projector"
  int64_t tower_layers = 0;
  int64_t tower_tokens = 0;        // patches + class token the ViT runs over, per image
  int64_t image_embeddings = 0;    // what one image places in the language model's sequence
  int64_t decoder_seq = 0;         // the language model's sequence: text + image embeddings + padding
  double trainable_params = 0;     // get main_grad and optimizer state
  double frozen_params = 0;        // weights only
  double activation_bytes = 0;     // saved for the backward pass, per micro-batch
  bool tower_frozen = false;
  bool language_frozen = false;    // --freeze-LM: its weights keep no grads or optimizer state
};

// Number of image embeddings one tile places in the sequence
// (clip_vit_model.py get_num_image_embeddings for "clip", no pixel shuffle).
int64_t llava_image_embeddings(int64_t img_h, int64_t img_w, int64_t patch_dim, bool drop_class_token);

// The padding pretrain_vlm.py adds to the decoder sequence so SP and CP can
// split it (multimodal/context_parallel.py get_padding, without TP comm
// overlap or FP8).
int64_t llava_padding(int64_t seq, int64_t cp, int64_t tp, bool sp);

// A Megatron-LM command line for pretrain_vlm.py (it sets one of the vision
// flags: --img-h, --img-w, --patch-dim, --dataloader-seq-length,
// --disable-vision-class-token, --freeze-LM, --freeze-ViT). Sets the language
// model's sequence (and its learned position table) to the decoder
// sequence, and returns the tower's load; an empty load for any other job;
// nullopt (with `why_not`) for a tower the estimate does not model
// (examples/multimodal's --vision-model-type).
std::optional<EncoderLoad> read_llava(const Job& job, MemoryModel& m, std::vector<std::string>& assumptions,
                                      std::string* why_not);

// Memory the job allocates outside what the estimate models, each located
// at its setting (MemoryModel::uncounted): the RL step's inference engine
// (--perform-rl-step), CUDA graphs' pools (--cuda-graph-impl,
// --enable-cuda-graph), a distillation teacher (--export-kd-teacher-load).
void read_uncounted(const Job& job, MemoryModel& m);

// One dense GPT layer's parameters on one tensor-parallel rank (qkv, proj,
// fc1, fc2 and their biases split; the two fused norms and the row-parallel
// biases whole), as a ViT or T5 encoder layer built from `m`'s config has.
double dense_layer_params(const MemoryModel& m);

// Bytes a trained MLP projector (Megatron-Core MultimodalProjector "mlp": fc1
// with its fused input norm, the activation, fc2; no sequence parallelism)
// keeps per micro-batch for the backward pass over `tokens` rows of width
// `in`: the norm's input, fc1's input (the norm's output), fc1's output and
// the activation's output (fc2's input), the last two split over `tp`, bf16.
double mlp_projector_bytes(double tokens, double in, double ffn, double tp, bool glu);

// Bytes the tower and projector keep per micro-batch for the backward pass,
// and their parameters on one tensor-parallel rank (both from `m`, the
// language model's settings, which pretrain_vlm.py deep-copies).
EncoderLoad llava_load(const MemoryModel& m, int64_t tower_layers, int64_t tower_tokens, int64_t image_embeddings,
                       bool tower_frozen, bool language_frozen);

}  // namespace mblint
