// The vision tower of a vision-language recipe (see estimate_vision.h).
//
// Sources:
// [G4VL] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/gemma_vl/
//        modeling_gemma4_vl.py (Gemma4VLModel): the Hugging Face vision tower
//        (AutoModel.from_config(vision_config)) and the multimodal embedder are
//        built only where the language model has pre_process (the first
//        pipeline stage), whole on every tensor-parallel rank (an HF module,
//        its gradients all-reduced over TP by
//        hook_hf_module_setattr_for_tp_grad_sync), cast to params_dtype;
//        gemma4_vl_provider.py: freeze_vision_model / freeze_vision_projection
//        call model.freeze(), which turns requires_grad off.
// [HFG4] huggingface/transformers, src/transformers/models/gemma4/
//        modeling_gemma4.py and configuration_gemma4.py (Gemma4VisionModel,
//        Gemma4MultimodalEmbedder; read at 008e574391258935): per encoder
//        layer q/k/v/o projections without bias, a per-head RMSNorm on q and
//        k, a gated MLP (gate, up, down) without bias, four RMSNorms; a patch
//        embedding without bias; two learned position tables (x and y) of
//        position_embedding_size rows; with `standardize` a bias and a scale
//        over the output; the pooler averages merge x merge patches into one
//        soft token (pooling_kernel_size) and an image yields at most
//        vision_soft_tokens_per_image of them. The embedder is an RMSNorm
//        without weight and a hidden -> text hidden projection without bias.
//
// What a frozen tower costs: its weights (params_dtype) and nothing else. With
// requires_grad off and pixel inputs that need no gradient, autograd records
// no graph through the tower, so it saves no activations and gets no
// main_grad or optimizer state; its forward working set is freed before the
// language model of the same micro-batch runs and is not counted.
#include "lint/facts/estimate_vision.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "lint/facts/setting_reader.h"
#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

constexpr VisionDims kVisionDims[] = {
#include "lint/facts/vision_dims_data.inc"
};

// A tower built from Hugging Face modules whose training activations the
// estimate does not model: trainable, it is declined.
bool hf_tower(const VisionDims& d) { return std::string_view(d.arch) == "gemma4"; }

// [HFG4] Gemma4VisionModel's parameters.
int64_t gemma4_tower(const VisionDims& d) {
  int64_t h = d.hidden, inner = static_cast<int64_t>(d.heads) * d.head_dim;
  int64_t attention = 4 * h * inner + 2 * static_cast<int64_t>(d.head_dim);  // q, k, v, o + q/k norms
  int64_t mlp = 3 * h * d.ffn;                                                // gate, up, down
  int64_t norms = 4 * h;                                                      // input, post-attention, pre- and post-MLP
  int64_t patch = static_cast<int64_t>(d.in_channels) * d.patch_size * d.patch_size * h;
  int64_t positions = 2 * static_cast<int64_t>(d.position_rows) * h;
  return d.layers * (attention + mlp + norms) + patch + positions + d.extra_params;
}

}  // namespace

const VisionDims* find_vision_dims(std::string_view model_key) {
  for (const VisionDims& d : kVisionDims) {
    if (model_key == d.key) return &d;
  }
  return nullptr;
}

VisionParams vision_params(const VisionDims& d) {
  VisionParams p;
  if (std::string_view(d.arch) == "gemma4") {
    p.tower = gemma4_tower(d);
    p.projector = static_cast<int64_t>(d.hidden) * d.text_hidden;  // [HFG4] embedding_projection
  }
  return p;
}

std::optional<VisionLoad> read_vision_load(const Job& job, int64_t seq, int64_t micro_batch, bool lora,
                                           std::string* why_not) {
  VisionLoad v;
  if (!job.recipe || !job.recipe->model) return v;
  const VisionDims* d = find_vision_dims(job.recipe->model);
  if (!d) return v;
  v.dims = d;
  // [G4VL] the providers default every freeze_* to False; a PEFT job freezes
  // the whole base model, and LoRA's target modules (linear_qkv, linear_proj,
  // linear_fc1, linear_fc2) name Megatron-Core modules, not the HF tower's.
  auto frozen = [&](std::string_view path) { return lora || config_bool(job, path).value.value_or(false); };
  v.tower_frozen = frozen("model.freeze_vision_model");
  v.projector_frozen = frozen("model.freeze_vision_projection");
  VisionParams p = vision_params(*d);
  (v.tower_frozen ? v.frozen_params : v.trainable_params) += static_cast<double>(p.tower);
  (v.projector_frozen ? v.frozen_params : v.trainable_params) += static_cast<double>(p.projector);
  if (!v.tower_frozen && hf_tower(*d)) {
    if (why_not) {
      *why_not = fmt::format(
          "the trainable vision tower of {} (freeze_vision_model false) is a Hugging Face module whose saved "
          "activations per image patch are not modelled",
          d->hf_id);
    }
    return std::nullopt;
  }
  // Every image places tokens_per_image tokens in the sequence, so a sample
  // of seq_length tokens carries at most seq_length / tokens_per_image
  // images, each of at most tokens_per_image x merge^2 patches.
  int64_t tokens = std::max<int64_t>(1, d->tokens_per_image);
  v.images = std::max<int64_t>(0, micro_batch) * (seq / tokens);
  v.patches = v.images * tokens * d->merge * d->merge;
  if (!v.projector_frozen) {
    // [HFG4] the embedder's RMSNorm runs in fp32 and keeps its fp32 input and
    // the rstd per token; the projection keeps its bf16 input.
    double image_tokens = static_cast<double>(v.images * tokens);
    v.activation_bytes = image_tokens * (6.0 * d->hidden + 4.0);
  }
  return v;
}

std::string vision_assumption(const VisionLoad& v) {
  const VisionDims& d = *v.dims;
  VisionParams p = vision_params(d);
  auto state = [](bool frozen) { return frozen ? "frozen" : "trained"; };
  return fmt::format(
      "vision tower of {}: {:.1f} M parameters ({}) + projector {:.1f} M ({}), whole on every tensor-parallel rank "
      "of the first pipeline stage; images per micro-batch at most {} (seq_length / {} image tokens each, x micro "
      "batch), {} patches ({}x{} pooled into each image token)",
      d.hf_id, static_cast<double>(p.tower) / 1e6, state(v.tower_frozen), static_cast<double>(p.projector) / 1e6,
      state(v.projector_frozen), v.images, d.tokens_per_image, v.patches, d.merge, d.merge);
}

}  // namespace mblint
