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
// [Q3VL] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/qwen_vl/
//        modelling_qwen3_vl/: model.py (Qwen3VLModel builds the vision model
//        only with pre_process: the first pipeline stage; freeze() treats the
//        merger and the deepstack mergers as the "vision projection"),
//        vision_model.py (Qwen3VLVisionModel: not split over pipeline stages),
//        transformer_config.py get_vision_model_config (Megatron-Core
//        transformer layers: LayerNorm, qkv and linear biases, a GELU MLP
//        without gate, MHA, no dropout, no sequence parallelism, the language
//        model's tensor parallelism and recompute settings), utils.py
//        (Qwen3VLVisionPatchEmbed: Conv3d with bias; Qwen3VLVisionPatchMerger:
//        a norm, a merge^2 x hidden square fc1 and an fc2 to the text width,
//        TE column- and row-parallel). Each image token merges merge^2 patches,
//        so a micro-batch of seq_length tokens holds at most seq_length x
//        merge^2 patches per sample.
// [Q25VL] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/qwen_vl/
//        modeling_qwen25_vl.py (Qwen25VLModel): the vision tower is HF
//        transformers' Qwen2_5_VisionTransformerPretrainedModel, built only
//        where pre_process (the first pipeline stage), whole on every
//        tensor-parallel rank (hook_hf_module_setattr_for_tp_grad_sync);
//        freeze() freezes patch_embed and blocks (freeze_vision_model) and the
//        merger (freeze_vision_projection). Its modules (HF transformers
//        modeling_qwen2_5_vl.py; NeMo's Qwen25VLVisionConfig and
//        Pai-Megatron-Patch's get_vision_model_config, data/vision_dims.csv):
//        a Conv3d patch embedding without bias; per block two RMSNorms, qkv
//        and proj with bias, a gated SiLU MLP (gate, up, down) with biases;
//        2D rotary positions (no table); window attention except at
//        fullatt_block_indexes, which changes no parameter; the merger is an
//        RMSNorm over the hidden and two biased linears, merge^2 x hidden ->
//        the same -> text hidden, with a GELU between.
// [G3VL] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/gemma_vl/
//        modeling_gemma3_vl.py (Gemma3VLModel): the SigLIP tower is an HF
//        module (AutoModel.from_config(vision_config), vision_use_head False),
//        built only where pre_process, whole on every tensor-parallel rank;
//        Gemma3VLMultimodalProjector is Megatron-Core: avg-pool of the 64 x 64
//        patches to 16 x 16 tokens, a TENorm over the tower's width and a
//        ColumnParallelLinear (no bias) to the text width; freeze() turns off
//        requires_grad of the tower and of the projector. SigLIP's layers
//        (google-deepmind/gemma ViTModel, NeMo SigLIPViT400M_14_384_Config):
//        q/k/v/out and fc1/fc2 with biases, two LayerNorms, a Conv patch
//        embedding with bias, a learned position table, a final LayerNorm.
//        _compute_attention_biases builds a local and a global additive bias
//        (micro-batch x 1 x seq x seq in bf16) each forward, which the
//        language model's fused attention keeps for its backward pass.
// [PIX]  Megatron-Bridge 067f987df03b, src/megatron/bridge/models/ministral3/
//        modeling_ministral3.py (Ministral3Model): the vision tower is HF
//        transformers' PixtralVisionModel (AutoModel.from_config(
//        vision_config)) and the projector HF's Mistral3MultiModalProjector,
//        both built only where pre_process (the first pipeline stage), whole on
//        every tensor-parallel rank (hook_hf_module_setattr_for_tp_grad_sync).
//        Their modules (huggingface/transformers modeling_pixtral.py and
//        modular_mistral3.py): a Conv2d patch embedding without bias and an
//        RMSNorm (ln_pre); per layer q/k/v/o projections hidden x hidden
//        without bias, a gated SiLU MLP (gate, up, down) without bias, two
//        RMSNorms; 2D rotary positions (a buffer, no parameter). The projector:
//        an RMSNorm over the hidden, the patch merger (merge^2 x hidden ->
//        hidden, no bias), linear_1 hidden -> text hidden and linear_2 text
//        hidden -> text hidden (biased only with multimodal_projector_bias,
//        whose biases a row records in extra_params).
// [RADIO] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/
//        nemotron_omni/: nemotron_omni_provider.py _build_vision_config
//        (:101-129, :226-235: a copy of the language config with 32 layers,
//        hidden 1280, 16 heads of 80, ffn 5120, no gate, fast GELU, qkv and
//        linear biases, LayerNorm; recompute off, no SP, CP 1, PP 1) and
//        _build_vision_projection_config (:131-142, :237-247: the language
//        MLP spec, projector_hidden_size wide, squared ReLU);
//        modeling_nemotron_omni.py (:204-235: RADIOViTModel and the "mlp"
//        MultimodalProjector over hidden x 4, built only with add_encoder,
//        the first pipeline stage; :330-392: dynamic-resolution images,
//        class_token_len tokens prepended to each image and dropped after the
//        tower, a 2x2 pixel shuffle that needs an even patch grid, so every
//        image places at least one token in the sequence; :261-283 freeze());
//        nemotron_omni_bridge.py:142-166 (projector_hidden_size from the
//        checkpoint, has_sound from its sound_config, 10 class tokens).
//        NVIDIA/Megatron-LM 2a75ac12c54b megatron/core/models/vision/
//        radio.py:129-241: class_token [class_token_len, hidden], position
//        embeddings [(max_img / patch)^2, hidden], the embedder a
//        ColumnParallelLinear (3 x temporal x patch^2 -> hidden, split over
//        TP) without bias, no ln_pre/ln_post, no final norm; the layers are
//        vit_layer_specs.py's TE layers (the Qwen3-VL layer's layout);
//        hybrid_layer_specs.py:214-221 the projector's fc1 carries an RMSNorm
//        (TELayerNormColumnParallelLinear), fc2 is row-parallel, no biases
//        (HybridModelProvider add_bias_linear False).
// [Q2A]  Megatron-Bridge 067f987df03b, src/megatron/bridge/models/
//        qwen_audio/modeling_qwen2_audio.py (Qwen2AudioModel): the audio
//        encoder is HF transformers' Qwen2AudioEncoder built from the
//        checkpoint's audio_config and the projector its
//        Qwen2AudioMultiModalProjector (:137-145), both only where
//        pre_process (the first pipeline stage), whole on every
//        tensor-parallel rank (hook_hf_module_setattr_for_tp_grad_sync);
//        forward (:215-243) builds a bf16 key-padding mask of clips x 1 x
//        frames x frames (materialized by .to(dtype)) and passes it to the
//        encoder; freeze() (:295-327) turns requires_grad off per
//        freeze_audio_model / freeze_audio_projection (qwen2_audio_provider.py:
//        both default False, and recipes/qwen2_audio/h100/qwen2_audio.py:
//        105-106, 135-136 leaves them False). The modules (transformers
//        416fe37a8fc3 models/qwen2_audio/modeling_qwen2_audio.py): conv1
//        (mels -> hidden, kernel 3) and conv2 (kernel 3, stride 2), biased,
//        each followed by an exact GELU; a learned position table of
//        max_source_positions rows created with requires_grad_(False), so it
//        gets no gradient or optimizer state even when the encoder trains;
//        Whisper's pre-LN layer (two biased LayerNorms, q/v/out_proj with
//        bias, k_proj without, fc1 -> GELU -> fc2 with biases); AvgPool1d(2,
//        2) over the frames and a final LayerNorm; the projector one biased
//        linear hidden -> text hidden. The encoder accepts exactly
//        max_source_positions x 2 mel frames: every clip is padded to 30 s
//        (3000 mel frames, 1500 encoder frames, 750 audio tokens) whatever
//        its length. Bridge's collate for the Qwen2AudioProcessor
//        (data/collators/registry.py -> models/qwen_audio/data/collate_fn.py
//        :72-85) takes at most one clip (`audio`) per example, so a
//        micro-batch holds at most micro_batch clips.
//
// [GLM4V] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/glm_vl/
//        modeling_glm_45v.py (GLM45VModel): the vision tower is HF
//        transformers' Glm4vVisionModel (_from_config(vision_config)), built
//        only where pre_process (the first pipeline stage), whole on every
//        tensor-parallel rank (hook_hf_module_setattr_for_tp_grad_sync); its
//        downsample and merger are the projector. freeze() turns off
//        requires_grad of patch_embed and blocks (freeze_vision_model) and of
//        the merger (freeze_vision_projection) only: the position table,
//        post_conv_layernorm, post_layernorm and downsample stay trainable
//        unless PEFT freezes the whole model (peft/base.py freeze_model).
//        The modules, as the checkpoint's tensors name them (data/
//        vision_dims.csv glm_45v): per block qkv and proj without bias, a
//        gated SiLU MLP out_hidden_size (the text width) wide without bias,
//        two RMSNorms; a Conv3d patch embedding with bias; a learned
//        position table; post_conv_layernorm and post_layernorm (RMSNorm); a
//        merge x merge Conv2d downsample to out_hidden_size with bias; the
//        merger: proj (square, no bias), a LayerNorm with bias, and a gated
//        MLP intermediate_size wide without bias.
//
// [EX45] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/exaone/
//        exaone45/modelling_exaone45/: model.py (Exaone45Model builds the
//        vision model only with pre_process, the first pipeline stage, its
//        config with PP 1 and CP 1; freeze(): freeze_vision_model freezes the
//        whole vision model and turns the merger back on unless
//        freeze_vision_projection), transformer_config.py
//        get_vision_model_config (Megatron-Core ViT layers of
//        vit_layer_specs.py, the Qwen3-VL layer's TE modules: RMSNorm fused
//        into qkv and fc1, grouped-query attention with num_key_value_heads
//        groups of hidden / heads, qkv and linear biases, a gated SiLU MLP,
//        no dropout, no sequence parallelism, the language model's TP and
//        recompute settings), vision_model.py (no position table: 2D rotary;
//        no final norm) and utils.py (Exaone45VisionPatchEmbed: Conv3d
//        without bias; Exaone45VisionPatchMerger: an RMSNorm over the hidden,
//        fc1 merge^2 x hidden square and fc2 to the text width, biased, TE
//        column- and row-parallel, a GELU between).
//
// [LORA] Megatron-Bridge 067f987df03b, src/megatron/bridge/peft/lora.py and
//        module_matcher.py: LoRA wraps every module whose name equals a
//        target (linear_qkv, linear_proj, linear_fc1, linear_fc2 by default),
//        wherever it sits: in Qwen3-VL that includes the Megatron-Core vision
//        layers and the patch mergers (PatchMergerSubmodules linear_fc1,
//        linear_fc2), not the HF towers' q_proj/qkv/fc1 modules. Each adapter
//        is r x (in + out), the tensor-parallel side divided by TP, as the
//        language model's (estimate.cpp).
//
// What a frozen tower costs: its weights (params_dtype) and nothing else. With
// requires_grad off and pixel inputs that need no gradient, autograd records
// no graph through the tower, so it saves no activations and gets no
// main_grad or optimizer state; its forward working set is freed before the
// language model of the same micro-batch runs and is not counted.
#include "lint/facts/estimate_vision.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_llava.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/catalog.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

constexpr VisionDims kVisionDims[] = {
#include "lint/facts/vision_dims_data.inc"
};

bool arch_is(const VisionDims& d, std::string_view arch) { return std::string_view(d.arch) == arch; }

// A tower built from Hugging Face modules whose training activations the
// estimate does not model: trainable, it is declined. (Qwen2.5-VL's, Gemma
// 3's SigLIP, Pixtral, GLM-4.5V's Glm4v and Qwen2-Audio's encoder are
// modelled: trained_hf_tower_bytes below.)
bool hf_tower(const VisionDims& d) { return arch_is(d, "gemma4"); }

int64_t patch_embedding(const VisionDims& d) {
  return static_cast<int64_t>(d.in_channels) * d.temporal_patch * d.patch_size * d.patch_size * d.hidden;
}

// [HFG4] Gemma4VisionModel's parameters.
int64_t gemma4_tower(const VisionDims& d) {
  int64_t h = d.hidden, inner = static_cast<int64_t>(d.heads) * d.head_dim;
  int64_t attention = 4 * h * inner + 2 * static_cast<int64_t>(d.head_dim);  // q, k, v, o + q/k norms
  int64_t mlp = 3 * h * d.ffn;                                                // gate, up, down
  int64_t norms = 4 * h;                                                      // input, post-attention, pre- and post-MLP
  int64_t positions = 2 * static_cast<int64_t>(d.position_rows) * h;          // x and y tables
  return d.layers * (attention + mlp + norms) + patch_embedding(d) + positions + d.extra_params;
}

// [Q25VL] Qwen2_5_VisionTransformerPretrainedModel without its merger.
int64_t qwen25_tower(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  int64_t attention = 3 * h * h + 3 * h + h * h + h;  // qkv, proj with biases
  int64_t mlp = 2 * (h * f + f) + f * h + h;           // gate, up, down with biases
  int64_t norms = 2 * h;                              // norm1, norm2 (RMSNorm)
  return d.layers * (attention + mlp + norms) + patch_embedding(d) + d.extra_params;
}

// [Q25VL] the merger: ln_q, then merge^2 x hidden -> same -> text hidden.
int64_t qwen25_merger(const VisionDims& d) {
  int64_t merged = static_cast<int64_t>(d.hidden) * d.merge * d.merge;
  return d.hidden + merged * merged + merged + merged * d.text_hidden + d.text_hidden;
}

// [G3VL] the SigLIP tower: per layer q/k/v/out and fc1/fc2 with biases and
// two LayerNorms; a Conv patch embedding with bias; the position table;
// extra_params holds the final LayerNorm.
int64_t siglip_tower(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  int64_t layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * 2 * h;
  int64_t positions = static_cast<int64_t>(d.position_rows) * h;
  return d.layers * layer + patch_embedding(d) + h + positions + d.extra_params;
}

// [PIX] PixtralVisionModel: per layer q/k/v/o (hidden x hidden), gate/up/down,
// two RMSNorms; the Conv2d patch embedding and ln_pre.
int64_t pixtral_tower(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  return d.layers * (4 * h * h + 3 * h * f + 2 * h) + patch_embedding(d) + h;
}

// [PIX] Mistral3MultiModalProjector: norm, patch merger, linear_1, linear_2
// (+ their biases, extra_params, when the checkpoint has them).
int64_t pixtral_projector(const VisionDims& d) {
  int64_t h = d.hidden, text = d.text_hidden, merged = h * d.merge * d.merge;
  return h + merged * h + h * text + text * text + d.extra_params;
}

// [GLM4V] Glm4vVisionModel without its downsample and merger: the blocks
// (their MLP text_hidden wide), the patch embedding and its bias, the
// position table, post_conv_layernorm and post_layernorm.
int64_t glm4v_tower(const VisionDims& d) {
  int64_t h = d.hidden, mlp_width = d.text_hidden;
  int64_t block = 3 * h * h + h * h + 3 * h * mlp_width + 2 * h;
  int64_t positions = static_cast<int64_t>(d.position_rows) * h;
  return d.layers * block + patch_embedding(d) + h + positions + 2 * h;
}

// [GLM4V] the downsample (merge x merge Conv2d to the text width, biased)
// and the merger (square proj, biased LayerNorm, gated MLP ffn wide).
int64_t glm4v_projector(const VisionDims& d) {
  int64_t h = d.hidden, text = d.text_hidden;
  int64_t downsample = text * h * d.merge * d.merge + text;
  int64_t merger = text * text + 2 * text + 3 * text * static_cast<int64_t>(d.ffn);
  return downsample + merger;
}

// [Q3VL] one Qwen3-VL vision layer: the weights TP splits (qkv with its
// bias, proj, fc1 with its bias, fc2) and those it replicates (two
// LayerNorms, the row-parallel biases).
struct Split {
  int64_t split = 0, whole = 0;
};
Split qwen3_layer(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  return {3 * h * h + 3 * h + h * h + h * f + f + f * h, 2 * h + 2 * h + h + h};
}

// [Q3VL] a patch merger: norm over the hidden (main) or the merged width
// (deepstack, use_postshuffle_norm), fc1 merged -> merged with bias
// (column-parallel), fc2 merged -> text hidden with bias (row-parallel).
Split qwen3_merger(const VisionDims& d, bool postshuffle) {
  int64_t merged = static_cast<int64_t>(d.hidden) * d.merge * d.merge;
  int64_t norm = 2 * (postshuffle ? merged : d.hidden);
  return {merged * merged + merged + merged * d.text_hidden, norm + d.text_hidden};
}

// [EX45] one EXAONE 4.5 vision layer: qkv (grouped-query, with bias),
// proj, the gated fc1 (with bias) and fc2 split over TP; the two RMSNorm
// weights and the row-parallel biases whole.
Split exaone45_layer(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn, inner = static_cast<int64_t>(d.heads) * d.head_dim;
  int64_t qkv = static_cast<int64_t>(d.heads + 2 * d.kv_heads) * d.head_dim;
  return {h * qkv + qkv + inner * h + h * 2 * f + 2 * f + f * h, 2 * h + h + h};
}

// [EX45] the patch merger: RMSNorm over the hidden (whole), fc1 merged ->
// merged with bias (split), fc2 merged -> text hidden (split) and its bias
// (whole).
Split exaone45_merger(const VisionDims& d) {
  int64_t merged = static_cast<int64_t>(d.hidden) * d.merge * d.merge;
  return {merged * merged + merged + merged * d.text_hidden, static_cast<int64_t>(d.hidden) + d.text_hidden};
}

// [RADIO] the embeddings: the embedder (column-parallel, split) and the
// position table and class tokens (whole).
Split radio_embeddings(const VisionDims& d) {
  int64_t h = d.hidden;
  return {patch_embedding(d), static_cast<int64_t>(d.position_rows) * h + static_cast<int64_t>(d.class_tokens) * h};
}

// [RADIO] the MLP projector over the pixel-shuffled features (merge^2 x
// hidden wide): fc1's fused RMSNorm (whole), fc1 and fc2 without bias
// (split).
Split radio_projector(const VisionDims& d) {
  int64_t in = static_cast<int64_t>(d.hidden) * d.merge * d.merge, f = d.projector_ffn;
  return {in * f + f * d.text_hidden, in};
}

// [Q2A] the audio encoder's conv stem, kernel 3 wide (fixed in the module):
// conv1 over the mel bins, conv2 over the hidden width, both biased.
constexpr int64_t kQwen2AudioConvKernel = 3;
int64_t qwen2_audio_stem(const VisionDims& d) {
  int64_t h = d.hidden;
  return (static_cast<int64_t>(d.in_channels) * kQwen2AudioConvKernel * h + h) + (h * kQwen2AudioConvKernel * h + h);
}

// [Q2A] the learned position table, which requires no gradient.
int64_t qwen2_audio_positions(const VisionDims& d) { return static_cast<int64_t>(d.position_rows) * d.hidden; }

// [Q2A] Qwen2AudioEncoder: the stem, the position table, the Whisper layers
// (q, v, out_proj with bias, k_proj without; two biased LayerNorms; fc1, fc2
// with bias), the final LayerNorm.
int64_t qwen2_audio_encoder(const VisionDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  int64_t layer = (4 * h * h + 3 * h) + 2 * 2 * h + (h * f + f) + (f * h + h);
  return qwen2_audio_stem(d) + qwen2_audio_positions(d) + d.layers * layer + 2 * h;
}

// [RADIO] the embedder's extra width for video: with temporal_patch_dim t > 1
// RADIOViTModel builds a second ColumnParallelLinear (separate_video_embedder:
// 3 x t x patch^2 -> hidden, beside the image embedder) or makes its one
// embedder t times wider (radio.py:163-195); split over TP, no bias.
int64_t radio_video_embedder(const Job& job, const VisionDims& d) {
  int64_t t = config_int(job, "model.temporal_patch_dim").value.value_or(1);
  if (t <= 1) return 0;
  int64_t frame = static_cast<int64_t>(d.in_channels) * d.patch_size * d.patch_size * d.hidden;
  bool separate = config_bool(job, "model.separate_video_embedder").value.value_or(false);
  return separate ? t * frame : (t - 1) * frame;
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
  if (arch_is(d, "gemma4")) {
    p.tower = gemma4_tower(d);
    p.projector = static_cast<int64_t>(d.hidden) * d.text_hidden;  // [HFG4] embedding_projection
  } else if (arch_is(d, "gemma3_siglip")) {
    p.tower = siglip_tower(d);
    p.projector_split = static_cast<int64_t>(d.hidden) * d.text_hidden;  // [G3VL] proj, column-parallel
    p.projector = p.projector_split + d.hidden;                          // + the norm's weight
  } else if (arch_is(d, "pixtral")) {
    p.tower = pixtral_tower(d);
    p.projector = pixtral_projector(d);
  } else if (arch_is(d, "glm4v")) {
    p.tower = glm4v_tower(d);
    p.projector = glm4v_projector(d);
  } else if (arch_is(d, "qwen25_vl")) {
    p.tower = qwen25_tower(d);
    p.projector = qwen25_merger(d);
  } else if (arch_is(d, "qwen3_vl")) {
    Split layer = qwen3_layer(d);
    int64_t embeddings = patch_embedding(d) + d.hidden + static_cast<int64_t>(d.position_rows) * d.hidden;
    p.tower_split = d.layers * layer.split;
    p.tower = p.tower_split + d.layers * layer.whole + embeddings + d.extra_params;
    Split main = qwen3_merger(d, false), deep = qwen3_merger(d, true);
    p.projector_split = main.split + d.deepstack * deep.split;
    p.projector = p.projector_split + main.whole + d.deepstack * deep.whole;
  } else if (arch_is(d, "qwen2_audio")) {
    p.tower = qwen2_audio_encoder(d);
    p.projector = static_cast<int64_t>(d.hidden) * d.text_hidden + d.text_hidden;  // [Q2A] one biased linear
  } else if (arch_is(d, "exaone45")) {
    Split layer = exaone45_layer(d), merger = exaone45_merger(d);
    p.tower_split = d.layers * layer.split;
    p.tower = p.tower_split + d.layers * layer.whole + patch_embedding(d) + d.extra_params;  // [EX45] Conv3d whole
    p.projector_split = merger.split;
    p.projector = merger.split + merger.whole;
  } else if (arch_is(d, "radio")) {
    // [RADIO] the Qwen3-VL layer's layout (the same TE ViT layers).
    Split layer = qwen3_layer(d), embeddings = radio_embeddings(d), projector = radio_projector(d);
    p.tower_split = d.layers * layer.split + embeddings.split;
    p.tower = p.tower_split + d.layers * layer.whole + embeddings.whole + d.extra_params;
    p.projector_split = projector.split;
    p.projector = projector.split + projector.whole;
  }
  return p;
}

namespace {

// [Q3VL] bytes a trained Megatron-Core tower keeps for the backward pass per
// micro-batch: its layers as language-model layers over `patches` tokens
// plus `class_tokens` (RADIO's, per image) (estimate.cpp's terms: no SP, no
// dropout, flash attention), under the language model's recompute settings
// where the tower's config copies them (Qwen3-VL; [RADIO] turns recompute
// off), plus the patch embedding's pixel input.
double megatron_tower_bytes(const VisionDims& d, const MemoryModel& m, int64_t patches, int64_t class_tokens,
                            bool pixels_saved) {
  int64_t tokens = patches + class_tokens;
  MemoryModel v;
  v.hidden = d.hidden;
  v.heads = d.heads;
  v.query_groups = d.kv_heads > 0 ? d.kv_heads : d.heads;
  v.kv_channels = d.head_dim;
  v.ffn = d.ffn;
  // [EX45] the gated SiLU MLP, which get_vision_model_config runs without
  // bias_activation_fusion: Megatron-Core's unfused glu path.
  v.swiglu = v.unfused_glu = arch_is(d, "exaone45");
  v.rmsnorm = arch_is(d, "exaone45");
  v.add_bias = true;
  v.seq = tokens;
  v.tp = m.tp;
  v.hidden_dropout = v.attention_dropout = 0;
  bool copies_recompute = !arch_is(d, "radio");
  if (copies_recompute) {
    v.recompute = m.recompute;
    v.recompute_method = m.recompute_method;
    v.recompute_layers = m.recompute_layers;
    v.recompute_modules = m.recompute_modules;
  }
  double per_layer = layer_activation_bytes(v, false);
  double layers = d.layers, checkpoint = 2.0 * static_cast<double>(tokens) * d.hidden;
  double kept = layers * per_layer;
  if (v.recompute == "full") {
    double group = static_cast<double>(std::max<int64_t>(1, v.recompute_layers));
    if (v.recompute_method == "block") {
      double recomputed = std::min(group, layers);
      kept = recomputed * checkpoint + (layers - recomputed) * per_layer + per_layer;
    } else {
      kept = std::ceil(layers / group) * checkpoint + std::min(group, layers) * per_layer;
    }
  }
  double pixels = 2.0 * static_cast<double>(patches) * d.in_channels * d.temporal_patch * d.patch_size * d.patch_size;
  return kept + (pixels_saved ? pixels : 0);
}

// [Q3VL] a trained merger keeps its norm's input, fc1's input (the merged
// rows), and the GELU and fc2 inputs (merged width over TP): per patch
// hidden x (2 + 2/TP) elements in bf16.
double qwen3_merger_bytes(const VisionDims& d, const MemoryModel& m, int64_t patches) {
  double per_merger = 2.0 * static_cast<double>(patches) * d.hidden * (2.0 + 2.0 / std::max<int64_t>(1, m.tp));
  return (1 + d.deepstack) * per_merger;
}

// [LORA] adapters on a Megatron-Core tower's layers and its mergers or
// projector (Qwen3-VL, RADIO), per GPU.
double megatron_tower_lora_params(const VisionDims& d, const MemoryModel& m) {
  double r = static_cast<double>(m.lora_rank), tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  double h = d.hidden, f = d.ffn, merged = h * d.merge * d.merge;
  auto adapter = [&](double in, double out) { return lora_adapter_params(r, in, out, tp); };
  double layer = adapter(h, 3 * h) + adapter(h, h) + adapter(h, f) + adapter(f, h);     // qkv, proj, fc1, fc2
  if (arch_is(d, "exaone45")) {
    // [EX45] grouped-query qkv, the gated fc1 (2 x ffn wide), one merger.
    double qkv = static_cast<double>(d.heads + 2 * d.kv_heads) * d.head_dim;
    double inner = static_cast<double>(d.heads) * d.head_dim;
    double gqa_layer = adapter(h, qkv) + adapter(inner, h) + adapter(h, 2 * f) + adapter(f, h);
    return d.layers * gqa_layer + adapter(merged, merged) + adapter(merged, d.text_hidden);
  }
  if (arch_is(d, "radio")) {
    double ffn = d.projector_ffn;  // [RADIO] the projector's fc1 and fc2
    return d.layers * layer + adapter(merged, ffn) + adapter(ffn, d.text_hidden);
  }
  double merger = adapter(merged, merged) + adapter(merged, d.text_hidden);             // fc1, fc2
  return d.layers * layer + (1 + d.deepstack) * merger;
}

// ---- Trained Hugging Face towers: Qwen2.5-VL, Gemma 3's SigLIP, Pixtral ----
//
// [HFACT] What autograd keeps for the backward pass of a trained HF tower,
// per image patch, read from huggingface/transformers
// src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py (commit
// 00b676f8f0489b88652a31d70751cc540dd06305) and
// src/transformers/models/siglip/modeling_siglip.py (commit
// 1c51a62f5861390e994db1464e8a51f6d7fbacbc). Bridge 067f987df03b pins
// transformers >=5.8,<=5.12.1 (pyproject.toml; uv.lock resolves 5.12.1),
// whose source is not readable here: that the 5.12.1 modules save the same
// tensors is inference (the module layouts are the ones the checkpoints'
// weights name, which data/vision_dims.csv counts exactly).
//  * Bridge builds the towers with `_from_config` / `AutoModel.from_config`
//    from the checkpoint's vision_config and sets no attn_implementation
//    (git grep at 067f987df03b: only Kimi K2.5 and Qwen3-Omni set one) and
//    never turns on gradient checkpointing (the towers' own flag defaults to
//    False): transformers then picks "sdpa" (eager only where SDPA cannot
//    dispatch). Without a mask (SigLIP's vision path; Qwen2.5-VL runs one
//    SDPA call per window or image, cu_seqlens split) in bf16 with head
//    dims 72 and 80, PyTorch's flash kernel runs: it keeps q, k, v, its
//    output and an fp32 logsumexp per head and token, linear in the
//    patches, so windows (112 px: 8 x 8 patches) and the full-attention
//    layers (fullatt_block_indexes) keep the same bytes per patch. Eager
//    (not the default) would keep heads x n^2 probabilities per window or
//    image and is not modelled.
//  * Saved views keep their base alive: q, k and v are counted as separate
//    bf16 tensors beside the linear outputs they are views of where a copy
//    (rotary, .contiguous()) may make them distinct: erring high.
//  * Bridge's Float16Module casts the towers to bf16; the pixel input is
//    cast to the patch embedding's dtype, which keeps it for its weight.
//  * The tower runs whole on every TP rank (an HF module) and before the
//    context-parallel split: nothing is divided.

// Qwen2RMSNorm (and Llama's, which PixtralRMSNorm and Mistral3RMSNorm copy):
// the fp32 copy of its input (pow and mul), the fp32 rstd, and the bf16
// normalized value (for the weight's gradient).
double qwen_rms_norm_bytes(double h) { return 4 * h + 4 + 2 * h; }

// nn.LayerNorm in bf16: its input and the fp32 mean and rstd.
double layer_norm_bytes(double h) { return 2 * h + 8; }

// The SDPA flash kernel's saved tensors for one layer, per patch, beside
// the q/k/v projections' outputs: its bf16 output and fp32 logsumexp.
double sdpa_bytes(const VisionDims& d) { return 2.0 * d.hidden + 4.0 * d.heads; }

// [HFACT] One Qwen2_5_VLVisionBlock, per patch: norm1; qkv's input and its
// 3h output (v is a view of it); rotary q and k in bf16 (the fp32 cos/sin
// are shared by all blocks, counted once); SDPA; proj's input; norm2; the
// gated SiLU MLP: gate/up input, SiLU input, both factors of the product,
// down's input; the MLP `mlp_width` wide.
double rms_swiglu_block_bytes_per_patch(const VisionDims& d, double mlp_width) {
  double h = d.hidden, f = mlp_width;
  double attention = 2 * h + 6 * h + 4 * h + sdpa_bytes(d) + 2 * h;
  double mlp = 2 * h + 2 * f + 4 * f + 2 * f;
  return 2 * qwen_rms_norm_bytes(h) + attention + mlp;
}

double qwen25_block_bytes_per_patch(const VisionDims& d) { return rms_swiglu_block_bytes_per_patch(d, d.ffn); }

// [HFACT] One SiglipEncoderLayer, per patch: layer_norm1; q/k/v's shared
// input and their three outputs; SDPA; out_proj's input; layer_norm2; fc1's
// input, the GELU-tanh's input, fc2's input.
double siglip_layer_bytes_per_patch(const VisionDims& d) {
  double h = d.hidden, f = d.ffn;
  double attention = 2 * h + 6 * h + sdpa_bytes(d) + 2 * h;
  double mlp = 2 * h + 2 * f + 2 * f;
  return 2 * layer_norm_bytes(h) + attention + mlp;
}

// The patch embedding's bf16 pixel input, per patch.
double pixel_bytes_per_patch(const VisionDims& d) {
  return 2.0 * d.in_channels * d.temporal_patch * d.patch_size * d.patch_size;
}

// [HFACT] Qwen2.5-VL, per patch: the blocks, the Conv3d's pixels, the
// shared rotary cos and sin (fp32, head_dim each), and the merger behind a
// trained tower: trained, ln_q (its input now needs a gradient: fp32 copy
// and rstd too), fc1's, the GELU's and fc2's inputs; frozen, ln_q's fp32
// copy and rstd and the GELU's input only.
double qwen25_trained_tower_per_patch(const VisionDims& d, bool merger_frozen) {
  double h = d.hidden;
  double merger = merger_frozen ? 4 * h + 4 + 2 * h : qwen_rms_norm_bytes(h) + 3 * 2 * h;
  return d.layers * qwen25_block_bytes_per_patch(d) + pixel_bytes_per_patch(d) + 2.0 * 4 * d.head_dim + merger;
}

// [HFACT] SigLIP, per patch: the layers, the Conv's pixels, the final
// post_layernorm, and the input of Bridge's projector avg-pool (a
// contiguous copy AvgPool2d keeps for its backward). Per image token
// [G3VL]: a frozen projector behind a trained tower keeps the TENorm's
// input and rstd (for its input's gradient); a trained one also the
// projection's input (added in read_vision_load as before).
double siglip_trained_tower_per_patch(const VisionDims& d) {
  double h = d.hidden;
  return d.layers * siglip_layer_bytes_per_patch(d) + pixel_bytes_per_patch(d) + layer_norm_bytes(h) + 2 * h;
}

// [PIXACT] What a trained Pixtral tower and Mistral 3's projector keep, per
// patch, read from huggingface/transformers
// src/transformers/models/pixtral/modeling_pixtral.py (commit
// 0233e509531ace915c8241b4c16c8032a583279c) and models/mistral3/
// modeling_mistral3.py (commit 00dcc6dda6f6d8e69541a6b51f97986a80242367;
// Bridge 067f987df03b calls get_image_features(...).pooler_output, the 5.x
// return type: the modules are the ones read, their saved tensors inferred
// for 5.12.1 as for the other HF towers). PyTorch's saving rules: autograd
// saves a mul operand only when the other operand needs a gradient
// (tools/autograd/gen_variable_type.py guard_for), and a linear's input only
// when its weight trains.
//  * PixtralVisionModel concatenates every image of the micro-batch into one
//    sequence and, unless flash attention is requested, builds a
//    block-diagonal additive mask over it (generate_block_attention_mask:
//    patches x patches in bf16, shared by the 24 layers). With a mask SDPA
//    cannot run its flash kernel; on an H100 it runs cuDNN's or the
//    memory-efficient kernel (pytorch aten/src/ATen/native/transformers/
//    cuda/sdp_utils.cpp priority_order; never the math one for bf16 and head
//    dim 64). Both save the mask for the backward pass
//    (tools/autograd/derivatives.yaml: attn_bias is an input of their
//    backward); the memory-efficient path first pads a mask whose row
//    length is not a multiple of 8 into a new tensor (attention.cpp
//    preprocess_mask, pad_bias), once per layer. A patch count under the
//    bound is generally not a multiple of 8 (each image adds (2a) x (2b)
//    patches), so the count takes the padded copy per layer: layers x n x
//    ceil8(n) x 2 B, erring high (cuDNN, or an aligned count, keeps one).
//  * Per layer: q/k/v read the norm's output; the 2-D rotary multiplies q
//    and k by cos and sin that need no gradient, so only the rotated q and k
//    are kept (not the projections' outputs), with v; the kernels write
//    their output as (batch, patches, heads, head_dim), so transformers'
//    transpose(1, 2).contiguous() copies nothing and o_proj's input is that
//    output. cos and sin are bf16 (cast to the input's dtype), computed once
//    and shared by the layers.
//  * PixtralVisionModel: the Conv2d's bf16 pixels (the micro-batch's images
//    padded to the largest; counted at the patches), ln_pre. Mistral 3's
//    projector: norm, the patch merger's input (the unfolded merge^2 x
//    hidden rows), linear_1's input, the GELU's input, linear_2's input.

// [PIXACT] One PixtralAttentionLayer, per patch: attention_norm and
// ffn_norm; the q/k/v input, the rotated q and k, v, the kernel's output
// (o_proj's input too) and fp32 logsumexp; the gated SiLU MLP as
// Qwen2.5-VL's.
double pixtral_layer_bytes_per_patch(const VisionDims& d) {
  double h = d.hidden, f = d.ffn;
  double attention = 2 * h + 4 * h + 2 * h + sdpa_bytes(d);
  double mlp = 2 * h + 2 * f + 4 * f + 2 * f;
  return 2 * qwen_rms_norm_bytes(h) + attention + mlp;
}

// [PIXACT] Mistral3MultiModalProjector, per patch. Trained: its norm (the
// fp32 internals only when the tower's output needs a gradient, the bf16
// normalized value for its weight), the merging layer's input (hidden per
// patch), then per image token (merge^2 patches) linear_1's input (hidden),
// the GELU's and linear_2's inputs (text hidden each). Frozen behind a
// trained tower: the norm's fp32 copy and rstd and the GELU's input.
double pixtral_projector_per_patch(const VisionDims& d, bool tower_frozen, bool projector_frozen) {
  double h = d.hidden, text = d.text_hidden, merge2 = static_cast<double>(d.merge) * d.merge;
  if (projector_frozen) return tower_frozen ? 0 : 4 * h + 4 + 2 * text / merge2;
  double norm = tower_frozen ? 2 * h : qwen_rms_norm_bytes(h);
  return norm + 2 * h + (2 * h + 4 * text) / merge2;
}

// [PIXACT] the trained tower, per patch: the layers, the Conv2d's pixels,
// ln_pre, the shared bf16 cos and sin.
double pixtral_trained_tower_per_patch(const VisionDims& d) {
  double h = d.hidden;
  return d.layers * pixtral_layer_bytes_per_patch(d) + pixel_bytes_per_patch(d) + qwen_rms_norm_bytes(h) +
         2.0 * 2 * d.head_dim;
}

// [PIXACT] the block-diagonal masks a trained tower keeps per micro-batch of
// n patches: a padded copy per layer, n x ceil8(n) bf16 values each.
double pixtral_mask_bytes(const VisionDims& d, int64_t patches) {
  double n = static_cast<double>(patches), padded = static_cast<double>((patches + 7) / 8 * 8);
  return d.layers * n * padded * 2.0;
}

// [Q2A] What a trained Qwen2AudioEncoder and its projector keep, per encoder
// frame (the modules read in transformers 416fe37a8fc3, their saved tensors
// inferred for 5.12.1 as for the other HF towers; dropout 0, which PyTorch
// skips):
//  * The stem runs over two mel frames per encoder frame: conv1's bf16 mel
//    input (pixel_bytes_per_patch: mels x 2 frames x 2 B), conv1's output
//    (the GELU's input) and the GELU's output (conv2's input), hidden wide
//    per mel frame, then conv2's output (the second GELU's input) per
//    encoder frame. Adding the position table saves nothing.
//  * Each layer is Whisper's pre-LN layer, the same saved tensors as
//    SigLIP's (siglip_layer_bytes_per_patch: two LayerNorms, q/k/v's input
//    and outputs, SDPA's output and logsumexp, out_proj's, fc1's, the
//    GELU's and fc2's inputs). Bridge passes a mask, so SDPA runs cuDNN's or
//    the memory-efficient kernel, which keeps the mask (below).
//  * AvgPool1d keeps its input (a view of the last layer's output, hidden
//    per frame); the final LayerNorm and the projector work per audio token
//    (merge frames): the LayerNorm's bf16 input and fp32 mean and rstd, the
//    projector's input when it trains.
double qwen2_audio_trained_frame_bytes(const VisionDims& d, bool projector_frozen) {
  double h = d.hidden, merge = d.merge;
  double stem = pixel_bytes_per_patch(d) + 2 * (2 * h) + 2 * (2 * h) + 2 * h;
  double pooled = layer_norm_bytes(h) / merge + (projector_frozen ? 0 : 2 * h / merge);
  return d.layers * siglip_layer_bytes_per_patch(d) + stem + 2 * h + pooled;
}

// [Q2A] the key-padding mask Bridge builds per clip (frames x frames, bf16):
// as Pixtral's [PIXACT], padded afresh in each layer when the frame count
// is not a multiple of 8 (1500 is not) and kept for the backward pass.
double qwen2_audio_mask_bytes(const VisionDims& d, int64_t clips) {
  double n = d.position_rows, padded = static_cast<double>((d.position_rows + 7) / 8 * 8);
  return static_cast<double>(clips) * d.layers * n * padded * 2.0;
}

// [GLMACT] What a trained Glm4vVisionModel keeps, read from
// huggingface/transformers src/transformers/models/glm4v/modeling_glm4v.py
// at 03eac6f6d2af7e8562113f0b78d3d2d59a7d843d (4.x) and at 141c7ab87a1a (a
// 5.x copy in evalstate/transformers whose Glm4vVisionModel.forward returns
// BaseModelOutputWithPooling, the pooler_output Bridge 067f987df03b
// modeling_glm_45v.py:206 reads); the vision classes are the same in both,
// their saved tensors inferred for 5.12.1 as for the other HF towers [HFACT].
// Bridge builds the tower with Glm4vVisionModel._from_config(vision_config)
// (modeling_glm_45v.py:128-132), no attn_implementation and no gradient
// checkpointing (git grep glm_vl/: neither is set): SDPA, and with
// attention_mask=None per image (Glm4vVisionAttention.forward splits q, k, v
// at cu_seqlens) the flash kernel at head dim 128 [HFACT].
//  * Glm4vVisionBlock: norm1 and norm2 are Glm4vRMSNorm (Qwen2's: fp32 copy,
//    rstd, bf16 normalized value); Glm4vVisionAttention: qkv's input and its
//    3h output (v a view of it), apply_rotary_pos_emb_vision's rotated q and
//    k cast back to bf16, SDPA's output and logsumexp, torch.cat's copy that
//    proj reads; Glm4VisionMlp: gate/up's input, SiLU's input, both factors
//    of the product, down's input, out_hidden_size (the text width) wide:
//    Qwen2.5-VL's block with that MLP width. The residual adds save nothing.
//  * Glm4vVisionModel.forward: the Conv3d's bf16 pixels; post_conv_layernorm;
//    Glm4vVisionEmbeddings' bicubic grid_sample keeps its fp32 grid (2 values
//    a patch) and its input, an fp32 copy of the trained position table
//    (position_rows x hidden, once per micro-batch); the fp32 cos and sin of
//    the rotary, head_dim wide, shared by the blocks; post_layernorm; the
//    downsample Conv2d's input (hidden per patch).
//  * Glm4vVisionPatchMerger, per merged token (merge^2 patches): proj's
//    input, post_projection_norm (nn.LayerNorm: input, mean, rstd), the
//    exact GELU's input, gate/up's input, then the SwiGLU at
//    intermediate_size as in the blocks.
double glm4v_block_bytes_per_patch(const VisionDims& d) { return rms_swiglu_block_bytes_per_patch(d, d.text_hidden); }

// [GLMACT] the merger's bytes per merged token.
double glm4v_merger_bytes_per_token(const VisionDims& d) {
  double t = d.text_hidden, f = d.ffn;
  return 2 * t + layer_norm_bytes(t) + 2 * t + 2 * t + 2 * f + 4 * f + 2 * f;
}

// [GLMACT] the trained tower, downsample and merger, per patch.
double glm4v_trained_tower_per_patch(const VisionDims& d) {
  double h = d.hidden, merge2 = static_cast<double>(d.merge) * d.merge;
  double stem = pixel_bytes_per_patch(d) + qwen_rms_norm_bytes(h) + 2 * 4.0 + 2.0 * 4 * d.head_dim;
  double head = qwen_rms_norm_bytes(h) + 2 * h + glm4v_merger_bytes_per_token(d) / merge2;
  return d.layers * glm4v_block_bytes_per_patch(d) + stem + head;
}

// [GLMACT] grid_sample's fp32 copy of the position table, per micro-batch.
double glm4v_position_table_bytes(const VisionDims& d) {
  return 4.0 * static_cast<double>(d.position_rows) * d.hidden;
}

bool trained_hf_tower_modelled(const VisionDims& d) {
  return arch_is(d, "qwen25_vl") || arch_is(d, "gemma3_siglip") || arch_is(d, "pixtral") ||
         arch_is(d, "qwen2_audio") || arch_is(d, "glm4v");
}

// [HFACT] bytes a trained Qwen2.5-VL, SigLIP, Pixtral or [GLMACT] Glm4v
// tower (and the projector behind it) keeps per micro-batch of `v.patches`
// patches; [Q2A]
// Qwen2-Audio's encoder per `v.patches` frames of `v.images` clips.
double trained_hf_tower_bytes(const VisionDims& d, const VisionLoad& v) {
  double patches = static_cast<double>(v.patches);
  if (arch_is(d, "qwen2_audio")) {
    return patches * qwen2_audio_trained_frame_bytes(d, v.projector_frozen) + qwen2_audio_mask_bytes(d, v.images);
  }
  if (arch_is(d, "qwen25_vl")) return patches * qwen25_trained_tower_per_patch(d, v.projector_frozen);
  if (arch_is(d, "glm4v")) return patches * glm4v_trained_tower_per_patch(d) + glm4v_position_table_bytes(d);
  if (arch_is(d, "pixtral")) {
    double per_patch = pixtral_trained_tower_per_patch(d) + pixtral_projector_per_patch(d, false, v.projector_frozen);
    return patches * per_patch + pixtral_mask_bytes(d, v.patches);
  }
  double tokens = static_cast<double>(v.images * d.tokens_per_image);
  double frozen_projector = v.projector_frozen ? tokens * (2.0 * d.hidden + 4) : 0;
  return patches * siglip_trained_tower_per_patch(d) + frozen_projector;
}

}  // namespace

std::optional<VisionLoad> read_vision_load(const Job& job, const MemoryModel& m, std::string* why_not) {
  VisionLoad v;
  if (!job.recipe || !job.recipe->model) return v;
  const VisionDims* d = find_vision_dims(job.recipe->model);
  if (!d) return v;
  v.dims = d;
  bool lora = m.lora_rank > 0;
  // [LORA] LoRA's targets also name the Megatron-Core tower's and mergers'
  // linears: their base weights stay frozen, their adapters train, and
  // autograd records through them.
  bool megatron_tower = arch_is(*d, "qwen3_vl") || arch_is(*d, "radio") || arch_is(*d, "exaone45");
  bool adapters_on_tower = lora && megatron_tower;
  if (adapters_on_tower) v.adapter_params = megatron_tower_lora_params(*d, m);
  if (arch_is(*d, "radio") && config_bool(job, "model.has_sound").value.value_or(true)) {
    // [RADIO] has_sound follows the checkpoint's sound_config unless the
    // recipe turns it off (the cord_v2 recipes do); its encoder is counted
    // from data/sound_dims.csv (estimate_sound.cpp).
    const SoundDims* sound = find_sound_dims(d->key);
    if (!sound) {
      if (why_not) {
        *why_not = fmt::format(
            "{} has a sound encoder (has_sound: the checkpoint's sound_config; the recipe does not set "
            "model.has_sound false), whose sound_config has no row in mblint's data/sound_dims.csv",
            d->hf_id);
      }
      return std::nullopt;
    }
    std::optional<SoundLoad> s = read_sound_load(job, m, *sound, why_not);
    if (!s) return std::nullopt;
    v.sound = *s;
  }
  // [G4VL] the providers default every freeze_* to False; a PEFT job freezes
  // the whole base model, and LoRA's target modules name Megatron-Core
  // modules, not the HF tower's.
  auto frozen = [&](std::string_view path) { return lora || config_bool(job, path).value.value_or(false); };
  // [Q2A] the audio model's provider names its switches for the audio encoder.
  bool audio = arch_is(*d, "qwen2_audio");
  v.tower_frozen = frozen(audio ? "model.freeze_audio_model" : "model.freeze_vision_model");
  v.projector_frozen = frozen(audio ? "model.freeze_audio_projection" : "model.freeze_vision_projection");
  v.language_frozen = !lora && config_bool(job, "model.freeze_language_model").value.value_or(false);
  VisionParams p = vision_params(*d);
  double tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  double tower = static_cast<double>(p.tower - p.tower_split) + static_cast<double>(p.tower_split) / tp;
  double projector = static_cast<double>(p.projector - p.projector_split) + static_cast<double>(p.projector_split) / tp;
  if (arch_is(*d, "radio")) {
    v.video_embedder = radio_video_embedder(job, *d);
    tower += static_cast<double>(v.video_embedder) / tp;
  }
  (v.tower_frozen ? v.frozen_params : v.trainable_params) += tower;
  (v.projector_frozen ? v.frozen_params : v.trainable_params) += projector;
  if (audio && !v.tower_frozen) {
    // [Q2A] the position table never trains (requires_grad_(False)).
    double positions = static_cast<double>(qwen2_audio_positions(*d));
    v.trainable_params -= positions;
    v.frozen_params += positions;
  }
  v.frozen_params += v.sound.frozen_params;
  v.trainable_params += v.sound.trainable_params;
  v.adapter_params += v.sound.adapter_params;
  v.activation_bytes += v.sound.activation_bytes;
  if (v.tower_frozen && !lora && arch_is(*d, "glm4v")) {
    // [GLM4V] freeze() leaves the position table, the post norms and the
    // downsample trainable: the blocks' input needs a gradient, so autograd
    // records through the frozen blocks too.
    if (why_not) {
      *why_not = fmt::format(
          "freeze_vision_model on {} freezes only patch_embed and blocks (GLM45VModel.freeze): its position table, "
          "post_conv_layernorm, post_layernorm and downsample stay trainable, so the Hugging Face tower keeps "
          "activations per image patch for their gradients, which are not modelled",
          d->hf_id);
    }
    return std::nullopt;
  }
  if (!v.tower_frozen && v.projector_frozen && !lora && arch_is(*d, "glm4v")) {
    // [GLM4V] freeze_vision_projection freezes the merger only: the
    // downsample (counted with the projector) keeps training.
    if (why_not) {
      *why_not = fmt::format(
          "freeze_vision_projection on {} freezes only the merger (GLM45VModel.freeze): the downsample keeps "
          "training, and a frozen merger behind the trained tower is not modelled",
          d->hf_id);
    }
    return std::nullopt;
  }
  if (!v.tower_frozen && hf_tower(*d)) {
    if (why_not) {
      *why_not = fmt::format(
          "the trainable vision tower of {} (freeze_vision_model false) is a Hugging Face module whose saved "
          "activations per image patch are not modelled",
          d->hf_id);
    }
    return std::nullopt;
  }
  int64_t micro_batch = std::max<int64_t>(0, m.micro_batch);
  int64_t merge2 = static_cast<int64_t>(d->merge) * d->merge;
  if (audio) {
    // [Q2A] at most one clip per example, each padded to position_rows
    // encoder frames.
    v.images = micro_batch;
    v.patches = v.images * d->position_rows;
  } else if (d->tokens_per_image > 0) {
    // Every image places tokens_per_image tokens in the sequence, so a
    // sample of seq_length tokens carries at most seq_length /
    // tokens_per_image images, each of at most tokens_per_image x merge^2
    // patches.
    v.images = micro_batch * (m.seq / d->tokens_per_image);
    v.patches = v.images * d->tokens_per_image * merge2;
  } else {
    // Variable tokens per image: every token of the sample an image token.
    v.patches = micro_batch * m.seq * merge2;
    // [RADIO] dynamic resolution: an image places at least one token (one
    // 2x2 pixel-shuffle group), so a sample holds at most seq_length images.
    if (d->class_tokens > 0) v.images = micro_batch * m.seq;
  }
  v.class_tokens = v.images * d->class_tokens;
  // A trained tower keeps its layers' activations and the Conv3d's pixel
  // input; one with adapters keeps the layers' (as the language model under
  // LoRA is counted) but not the pixels: the frozen Conv3d's input needs no
  // gradient and its weight gets none.
  if ((!v.tower_frozen && !trained_hf_tower_modelled(*d)) || adapters_on_tower) {
    v.activation_bytes += megatron_tower_bytes(*d, m, v.patches, v.class_tokens, !v.tower_frozen);
  }
  if (!v.tower_frozen && trained_hf_tower_modelled(*d)) v.activation_bytes += trained_hf_tower_bytes(*d, v);
  if (!v.projector_frozen && arch_is(*d, "gemma4")) {
    // [HFG4] the embedder's RMSNorm runs in fp32 and keeps its fp32 input and
    // the rstd per token; the projection keeps its bf16 input.
    double image_tokens = static_cast<double>(v.images * d->tokens_per_image);
    v.activation_bytes += image_tokens * (6.0 * d->hidden + 4.0);
  }
  if ((!v.projector_frozen || adapters_on_tower) && (arch_is(*d, "qwen3_vl") || arch_is(*d, "exaone45"))) {
    v.activation_bytes += qwen3_merger_bytes(*d, m, v.patches);
  }
  if ((!v.projector_frozen || adapters_on_tower) && arch_is(*d, "radio")) {
    // [RADIO] the MLP projector over the image tokens (merge^2 patches each;
    // the class tokens are dropped before it), as Megatron-LM's LLaVA
    // projector keeps (estimate_llava.h).
    double image_tokens = static_cast<double>(v.patches / merge2);
    v.activation_bytes += mlp_projector_bytes(image_tokens, static_cast<double>(d->hidden) * merge2, d->projector_ffn,
                                              static_cast<double>(std::max<int64_t>(1, m.tp)), false);
  }
  if (arch_is(*d, "gemma3_siglip")) {
    // [G3VL] the local and global attention biases of each micro-batch,
    // whatever is frozen (the language model's attention keeps them).
    v.activation_bytes += 2.0 * 2.0 * static_cast<double>(micro_batch) * static_cast<double>(m.seq) * m.seq;
    if (!v.projector_frozen) {
      // The projector behind a frozen tower: TENorm keeps its bf16 input and
      // fp32 rstd (for its weight), the projection its bf16 input, per image
      // token.
      v.activation_bytes += static_cast<double>(v.images * d->tokens_per_image) * (4.0 * d->hidden + 4.0);
    }
  }
  if (v.tower_frozen && !v.projector_frozen && arch_is(*d, "pixtral")) {
    // [PIXACT] a trained projector behind a frozen tower: what its weights'
    // gradients need (the tower records no graph, so no mask is kept).
    v.activation_bytes += static_cast<double>(v.patches) * pixtral_projector_per_patch(*d, true, false);
  }
  if (v.tower_frozen && !v.projector_frozen && audio) {
    // [Q2A] a trained projector behind a frozen encoder keeps only its bf16
    // input, per audio token.
    v.activation_bytes += static_cast<double>(v.images * d->tokens_per_image) * 2.0 * d->hidden;
  }
  if (v.tower_frozen && !v.projector_frozen && arch_is(*d, "qwen25_vl")) {
    // [Q25VL] a trained merger behind a frozen tower (behind a trained one:
    // trained_hf_tower_bytes): its input needs no gradient, so autograd saves only
    // what the weights' gradients need: ln_q's bf16 normalized input (for its
    // weight), fc1's input, the GELU's input and fc2's input, each hidden
    // wide per patch in bf16.
    v.activation_bytes += 4.0 * 2.0 * static_cast<double>(v.patches) * d->hidden;
  }
  return v;
}

namespace {

// [GLMACT] what the Glm4v count holds, op by op.
std::string glm4v_saved_tensors(const VisionDims& d) {
  if (!arch_is(d, "glm4v")) return "";
  return fmt::format(
      ": two RMSNorms (fp32 input copy, rstd, bf16 normalized value), qkv's input and output, the rotated q and k, "
      "SDPA's flash output and logsumexp (no mask: one call per image), proj's input, the SiLU-gated MLP {} wide "
      "(its input, the gate, both factors, down's input); beside the blocks {:.0f} bytes per patch (the Conv3d's "
      "pixels, post_conv_layernorm, the position grid, the shared fp32 cos and sin, post_layernorm, the downsample's "
      "input, and the merger's {:.0f} bytes per merged token: proj's input, the LayerNorm, the GELU, the gated MLP "
      "{} wide) and grid_sample's fp32 copy of the position table",
      d.text_hidden, glm4v_trained_tower_per_patch(d) - d.layers * glm4v_block_bytes_per_patch(d),
      glm4v_merger_bytes_per_token(d), d.ffn);
}

// [HFACT] what the count of a trained HF tower takes for granted.
std::string trained_hf_tower_assumption(const VisionLoad& v) {
  if (v.tower_frozen || !trained_hf_tower_modelled(*v.dims)) return "";
  const VisionDims& d = *v.dims;
  double per_layer = arch_is(d, "qwen25_vl")  ? qwen25_block_bytes_per_patch(d)
                     : arch_is(d, "pixtral") ? pixtral_layer_bytes_per_patch(d)
                     : arch_is(d, "glm4v")   ? glm4v_block_bytes_per_patch(d)
                                             : siglip_layer_bytes_per_patch(d);
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string mask = arch_is(d, "pixtral")
                         ? fmt::format("; the block-diagonal attention mask over the {} patches, padded afresh in each "
                                       "layer by SDPA's memory-efficient kernel when the count is not a multiple of "
                                       "8: {:.2f} GiB (cuDNN's kernel or an aligned count keeps one copy)",
                                       v.patches, pixtral_mask_bytes(d, v.patches) / kGiB)
                         : "";
  return fmt::format("; the trained Hugging Face tower keeps {:.0f} bytes per patch and layer (transformers' default "
                     "SDPA attention, no gradient checkpointing){}{}, the vision part {:.2f} GiB per micro-batch",
                     per_layer, glm4v_saved_tensors(d), mask, v.activation_bytes / kGiB);
}

// [Q2A] the audio encoder's line: its frozen position table, the clip bound,
// and what a trained encoder keeps.
std::string audio_assumption(const VisionLoad& v) {
  const VisionDims& d = *v.dims;
  VisionParams p = vision_params(d);
  auto state = [](bool frozen) { return frozen ? "frozen" : "trained"; };
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string line = fmt::format(
      "audio encoder of {}: {:.1f} M parameters ({}; its {:.1f} M position table never trains) + projector {:.1f} M "
      "({}), whole on every tensor-parallel rank, on the first pipeline stage{}; audio clips per micro-batch at most "
      "{} (one per example in Bridge's Qwen2-Audio collate, x micro batch), each padded to {} mel frames (30 s): {} "
      "encoder frames, {} audio tokens",
      d.hf_id, static_cast<double>(p.tower) / 1e6, state(v.tower_frozen),
      static_cast<double>(qwen2_audio_positions(d)) / 1e6, static_cast<double>(p.projector) / 1e6,
      state(v.projector_frozen),
      v.language_frozen ? "; language model frozen (freeze_language_model): weights only" : "", v.images,
      d.position_rows * d.temporal_patch, v.patches, v.images * d.tokens_per_image);
  if (v.tower_frozen) return line;
  return line + fmt::format("; the trained Hugging Face encoder keeps {:.0f} bytes per frame and layer (transformers' "
                            "default SDPA attention, no gradient checkpointing), and each clip's {}x{} key-padding "
                            "mask, padded afresh in each layer by SDPA's memory-efficient kernel: {:.2f} GiB (cuDNN's "
                            "kernel keeps one copy); the audio part {:.2f} GiB per micro-batch",
                            siglip_layer_bytes_per_patch(d), d.position_rows, d.position_rows,
                            qwen2_audio_mask_bytes(d, v.images) / kGiB, v.activation_bytes / kGiB);
}

// [RADIO] the video embedder of temporal_patch_dim > 1 (a video's frame
// pairs fused into tubelets of the same patch grid, so the tower-token bound
// above holds) and the checkpoint's sound encoder.
std::string video_and_sound_assumption(const VisionLoad& v) {
  std::string out;
  if (v.video_embedder > 0) {
    out += fmt::format("; the temporal video embedder ({:.1f} M parameters, split over tensor parallelism, {} with "
                       "the tower)",
                       static_cast<double>(v.video_embedder) / 1e6, v.tower_frozen ? "frozen" : "trained");
  }
  if (v.sound.dims) out += "; " + sound_assumption(v.sound);
  return out;
}

}  // namespace

const char* vision_part_label(const VisionLoad& v) {
  if (v.sound.dims) return "vision tower, projector and sound encoder";
  return arch_is(*v.dims, "qwen2_audio") ? "audio encoder and projector" : "vision tower and projector";
}

std::string vision_assumption(const VisionLoad& v) {
  const VisionDims& d = *v.dims;
  if (arch_is(d, "qwen2_audio")) return audio_assumption(v);
  VisionParams p = vision_params(d);
  auto state = [](bool frozen) { return frozen ? "frozen" : "trained"; };
  std::string placement = p.tower_split > 0       ? "split over tensor parallelism like the language model's layers"
                          : p.projector_split > 0 ? "the tower whole on every tensor-parallel rank, the projector split"
                                                  : "whole on every tensor-parallel rank";
  std::string bound =
      d.tokens_per_image > 0
          ? fmt::format("images per micro-batch at most {} (seq_length / {} image tokens each, x micro batch), {} "
                        "patches ({}x{} pooled into each image token)",
                        v.images, d.tokens_per_image, v.patches, d.merge, d.merge)
          : fmt::format("patches per micro-batch at most {} (every token of seq_length x micro batch an image token "
                        "of {}x{} merged patches)",
                        v.patches, d.merge, d.merge);
  bool tower_activations = !v.tower_frozen || v.adapter_params > 0;
  if (d.class_tokens > 0 && d.tokens_per_image == 0 && tower_activations) {
    // [RADIO] dynamic resolution: the images are bounded by their tokens.
    bound += fmt::format(", and {} class tokens before each of at most {} images (each at least one token of 2x2 "
                         "patches): {} tower tokens",
                         d.class_tokens, v.images, v.patches + v.class_tokens);
  }
  return fmt::format("vision tower of {}: {:.1f} M parameters ({}) + projector {:.1f} M ({}), {}, on the first "
                     "pipeline stage{}{}; {}",
                     d.hf_id, static_cast<double>(p.tower) / 1e6, state(v.tower_frozen),
                     static_cast<double>(p.projector) / 1e6, state(v.projector_frozen), placement,
                     v.language_frozen ? "; language model frozen (freeze_language_model): weights only" : "",
                     v.adapter_params > 0
                         ? fmt::format("; LoRA adapters on its layers and mergers too: {:.1f} M per GPU, trained, and "
                                       "the tower's activations kept for them",
                                       v.adapter_params / 1e6)
                         : "",
                     bound) +
         trained_hf_tower_assumption(v) + video_and_sound_assumption(v);
}

}  // namespace mblint
