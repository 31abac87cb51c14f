// Megatron-LM's command-line LLaVA (pretrain_vlm.py) in the memory estimate
// (see estimate_llava.h).
//
// Sources, NVIDIA/Megatron-LM at d98e8a64 (the commit of the functional
// tests' golden values, shared/corpus/NVIDIA__Megatron-LM):
// [VLM]  pretrain_vlm.py model_provider: vision_model_type "clip"; the
//        decoder sequence is --dataloader-seq-length (default --seq-length)
//        plus the image embeddings, padded for SP/CP; the vision tower's
//        config is a deep copy of the language model's (hidden size, heads,
//        FFN, normalization, recompute) with --encoder-num-layers layers
//        (validate_args: the --num-layers when not given), CP 1 and no
//        sequence parallelism; the projector ("mlp") is the language model's
//        MLP module over the tower's hidden size; freeze(--freeze-LM,
//        --freeze-ViT, projection never frozen); the language model's
//        position table has language_max_sequence_length rows (the decoder
//        sequence, times the micro-batch for CP with packed sequences).
// [CLIP] megatron/core/models/vision/clip_vit_model.py: CLIPViTModel runs
//        over the patches plus class_token_len (1) class token, which
//        --disable-vision-class-token drops only after the tower; conv1
//        without bias, a learned position table over those tokens, the
//        class token, ln_pre (clip); get_num_image_embeddings.
// [SPEC] megatron/core/models/vision/vit_layer_specs.py and
//        multimodal/llava_spec.py: TE layers whose qkv and fc1 carry their
//        input norm (TELayerNormColumnParallelLinear), a dense MLP.
// [CTX]  megatron/core/models/multimodal/context_parallel.py get_padding.
// [LL]   megatron/core/models/multimodal/llava_model.py: the tower and the
//        projector are built only on the first pipeline stage (add_encoder);
//        a frozen tower runs without requires_grad, so autograd records no
//        graph through it (see estimate_vision.cpp).
#include "lint/facts/estimate_llava.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/job.h"

namespace mblint {

int64_t llava_image_embeddings(int64_t img_h, int64_t img_w, int64_t patch_dim, bool drop_class_token) {
  if (patch_dim <= 0) return 0;
  return (img_h / patch_dim) * (img_w / patch_dim) + (drop_class_token ? 0 : 1);
}

int64_t llava_padding(int64_t seq, int64_t cp, int64_t tp, bool sp) {
  int64_t factor = 1;
  if (sp && cp > 1) {
    factor = tp * cp * 2;
  } else if (cp > 1) {
    factor = cp * 2;
  } else if (sp) {
    factor = tp;
  }
  return (seq + factor - 1) / factor * factor - seq;
}

namespace {

double norm_params(const MemoryModel& m) { return m.rmsnorm ? m.hidden : 2.0 * m.hidden; }

// [SPEC] one ViT layer, as the language model's layer without experts:
// the TP-split weights (qkv, proj, fc1, fc2 and the column biases) and the
// replicated ones (the two fused input norms, the row-parallel biases).
struct Split {
  double split = 0, whole = 0;
};
Split tower_layer(const MemoryModel& m) {
  double h = m.hidden, d = m.kv_channels, f = m.ffn, glu = m.swiglu ? 2 : 1;
  double qkv_out = d * (m.heads + 2.0 * m.query_groups);
  double bias = m.add_bias ? 1 : 0;
  Split s;
  s.split = h * qkv_out + bias * qkv_out + m.heads * d * h + h * f * glu + bias * f * glu + f * h;
  s.whole = 2 * norm_params(m) + bias * 2 * h;
  return s;
}

// [SPEC] the projector: the language model's MLP (fc1 with its fused norm).
Split projector(const MemoryModel& m) {
  double h = m.hidden, f = m.ffn, glu = m.swiglu ? 2 : 1, bias = m.add_bias ? 1 : 0;
  return {h * f * glu + bias * f * glu + f * h, norm_params(m) + bias * h};
}

// [CLIP] conv1 (3 x patch² x h, no bias), the position table, the class
// token and ln_pre, whole on every TP rank.
double tower_embeddings(const MemoryModel& m, int64_t patch_dim, int64_t tokens) {
  double h = m.hidden;
  return 3.0 * patch_dim * patch_dim * h + static_cast<double>(tokens) * h + h + norm_params(m);
}

// The tower's layers as the language model's (the copied config), over the
// ViT's tokens: no CP, no sequence parallelism, no experts.
MemoryModel tower_model(const MemoryModel& m, int64_t tokens) {
  MemoryModel v = m;
  v.seq = tokens;
  v.cp = 1;
  v.sp = false;
  v.experts = 0;
  v.mla = false;
  v.dsa_heads = 0;
  v.frozen_gemm_inputs = false;  // a trained tower computes its weight gradients
  return v;
}

// Saved activations of the tower's layers per micro-batch, under the
// language model's recompute settings (as estimate_vision.cpp's tower).
double tower_layers_bytes(const MemoryModel& v, double layers) {
  double per_layer = layer_activation_bytes(v, false);
  double checkpoint = 2.0 * static_cast<double>(v.seq) * v.micro_batch * v.hidden;
  if (v.recompute != "full") return layers * per_layer;
  double group = static_cast<double>(std::max<int64_t>(1, v.recompute_layers));
  if (v.recompute_method == "block") {
    double recomputed = std::min(group, layers);
    return recomputed * checkpoint + (layers - recomputed) * per_layer + per_layer;
  }
  return std::ceil(layers / group) * checkpoint + std::min(group, layers) * per_layer;
}

}  // namespace

double dense_layer_params(const MemoryModel& m) {
  Split layer = tower_layer(m);
  return layer.split / static_cast<double>(std::max<int64_t>(1, m.tp)) + layer.whole;
}

EncoderLoad llava_load(const MemoryModel& m, int64_t tower_layers, int64_t tower_tokens, int64_t image_embeddings,
                       bool tower_frozen, bool language_frozen) {
  EncoderLoad e;
  e.present = true;
  e.tower_layers = tower_layers;
  e.tower_tokens = tower_tokens;
  e.image_embeddings = image_embeddings;
  e.tower_frozen = tower_frozen;
  e.language_frozen = language_frozen;
  e.label = fmt::format("CLIP ViT ({} layers over {} tokens) and projector", tower_layers, tower_tokens);
  double tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  Split layer = tower_layer(m);
  double tower = tower_layers * (layer.split / tp + layer.whole);
  Split proj = projector(m);
  double projector_params = proj.split / tp + proj.whole;
  (tower_frozen ? e.frozen_params : e.trainable_params) += tower;
  e.trainable_params += projector_params;  // [VLM] freeze_vision_projection=False
  double b = static_cast<double>(m.micro_batch);
  if (!tower_frozen) {
    MemoryModel v = tower_model(m, tower_tokens);
    // [CLIP] ln_pre keeps its input; the first layer's norm keeps its output.
    e.activation_bytes += tower_layers_bytes(v, static_cast<double>(tower_layers)) +
                          2.0 * static_cast<double>(tower_tokens) * b * m.hidden;
  }
  // The projector (trained): its fused norm's input, fc1's input (the norm's
  // output), fc1's output and the activation's output (fc2's input), over
  // the image embeddings, no sequence parallelism [VLM].
  double tokens = static_cast<double>(image_embeddings) * b;
  e.activation_bytes += mlp_projector_bytes(tokens, m.hidden, m.ffn, tp, m.swiglu);
  return e;
}

double mlp_projector_bytes(double tokens, double in, double ffn, double tp, bool glu) {
  double gate = glu ? 2 : 1;
  return 2.0 * tokens * (2.0 * in + ffn * gate / tp + ffn / tp);
}

namespace {

// The setting's place in the files, for a located note.
Span setting_span(const Job& job, std::string_view path) {
  const ConfigValue* node = config_node(job, path);
  return node ? primary_span(node->where) : Span{};
}

// [MIMO] examples/mimo/model_providers/llava_vlm.py, Megatron-LM d98e8a64:
// the language model is configs/llava_vlm.py get_vicuna_language_model_config
// (Vicuna-7B: 32 layers, hidden 4096, 32 heads without GQA, FFN 11008 with
// SwiGLU, RMSNorm, no linear biases, RoPE, no dropout) built as GPTModel
// with vocab_size 32256 and its default untied output layer; the command
// line gives only its precision, CP and SP (and TP through the process
// groups). The vision encoder is Hugging Face's CLIPVisionModel
// openai/clip-vit-large-patch14-336 (hf_clip_encoder.py), run under
// torch.no_grad; the projector is an MLP with biases, 1024 -> 4096 -> 4096
// (GELU, get_llava_projection_config). The provider sets requires_grad
// False on the encoder and the language model: only the projector trains.
// The CLIP tower's parameters: 24 layers of q/k/v/o (1024² + 1024 each),
// fc1 1024 -> 4096 and fc2 back (with biases) and two LayerNorms (4 x 1024),
// the patch conv (3 x 14² x 1024, no bias), the class embedding (1024), 577
// position rows, pre- and post-LayerNorms (config.json of the checkpoint:
// hidden_size 1024, intermediate_size 4096, num_hidden_layers 24,
// image_size 336, patch_size 14; transformers' modeling_clip.py).
constexpr double kClipL336Params = 24.0 * (4 * (1024.0 * 1024 + 1024) + (1024.0 * 4096 + 4096) +
                                           (4096.0 * 1024 + 1024) + 4 * 1024) +
                                   3.0 * 14 * 14 * 1024 + 1024 + 577.0 * 1024 + 2 * 2048;
constexpr int64_t kClipTokens = 576;  // image features after dropping the class token

bool read_mimo(const Job& job, MemoryModel& m, const std::string& provider, std::vector<std::string>& assumptions,
               std::string* why_not, EncoderLoad& e) {
  if (provider != "llava_vlm") {
    if (why_not) {
      *why_not = fmt::format("the MIMO model provider {} (examples/mimo/train.py --model-provider) is not modelled; "
                             "only llava_vlm is",
                             provider);
    }
    return false;
  }
  m.layers = 32;
  m.hidden = 4096;
  m.heads = m.query_groups = 32;
  m.kv_channels = 128;
  m.ffn = 11008;
  m.swiglu = m.rmsnorm = true;
  m.add_bias = false;
  m.tied = false;
  m.vocab = 32256;
  // The command line's tokenizer does not size this model's vocabulary.
  std::erase_if(assumptions, [](const std::string& a) { return a.rfind("vocabulary", 0) == 0; });
  m.positions = 0;
  m.hidden_dropout = m.attention_dropout = 0;
  m.frozen_gemm_inputs = true;
  // examples/mimo/train.py add_mimo_args: the data pipeline's samples are
  // --total-seq-length tokens (default 512), image tokens included.
  m.seq = config_int(job, "model.total_seq_length").value.value_or(512);
  double tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  e.present = true;
  e.language_frozen = true;
  e.tower_frozen = true;
  e.tower_layers = 24;
  e.tower_tokens = kClipTokens + 1;
  e.image_embeddings = kClipTokens;
  e.label = "CLIP ViT-L/14-336 (24 layers over 577 tokens) and projector";
  e.frozen_params = kClipL336Params;
  // The projector: fc1 (column-parallel, bias split) and fc2 (row-parallel,
  // bias whole).
  e.trainable_params = (1024.0 * 4096 + 4096 + 4096.0 * 4096) / tp + 4096;
  // One image per sample; packed sequences (--packing-buffer-size) hold as
  // many as fit. The projector keeps its input (CLIP's features), fc1's
  // output (GELU's input) and GELU's output (fc2's input).
  bool packed = config_node(job, "model.packing_buffer_size") != nullptr;
  int64_t images = m.micro_batch * (packed ? std::max<int64_t>(1, m.seq / (kClipTokens + 1)) : 1);
  e.activation_bytes = 2.0 * static_cast<double>(images * kClipTokens) * (1024 + 2 * 4096 / tp);
  assumptions.push_back(fmt::format(
      "--model-provider llava_vlm: MIMO's LLaVA (examples/mimo/model_providers/llava_vlm.py): Vicuna-7B's shape "
      "(not the command line's), frozen; CLIP ViT-L/14-336, frozen; a trained projector; {} tokens per sample, {} "
      "image(s) of 576 tokens per micro-batch",
      m.seq, images));
  if (Span at = setting_span(job, "checkpoint.language_model_checkpoint"); at.valid()) {
    m.uncounted.push_back({"loading --language-model-checkpoint (load_submodule_ckpt: dist_checkpointing.load, then "
                           "load_state_dict) holds the checkpoint's tensors beside the bf16 weights; their dtype is the "
                           "checkpoint's and is not known here: not counted (4 B per parameter, 25.1 GiB, for an fp32 "
                           "Vicuna-7B)",
                           at});
  }
  return true;
}

}  // namespace

void read_uncounted(const Job& job, MemoryModel& m) {
  auto note = [&](std::string_view path, std::string what) {
    Span at = setting_span(job, path);
    if (at.valid()) m.uncounted.push_back({std::move(what), at});
  };
  if (config_bool(job, "rl.perform_rl_step").value.value_or(false)) {
    // megatron/rl: the RL step generates rollouts with the dynamic inference
    // engine in the same process (its KV-cache buffer, sized by
    // --inference-dynamic-batching-buffer-size-gb, and its CUDA graphs).
    std::string path = config_node(job, "rl.inference_buffer_size_gb") ? "rl.inference_buffer_size_gb"
                                                                         : "rl.perform_rl_step";
    note(path, "the RL step's inference engine (its KV-cache buffer, --inference-dynamic-batching-buffer-size-gb, its "
               "request buffers and CUDA graphs) shares the GPU with training: not counted");
  }
  std::string graphs = config_text(job, "model.cuda_graph_impl").value.value_or("none");
  if (graphs != "none" && !graphs.empty()) {
    note("model.cuda_graph_impl", fmt::format("CUDA graphs (--cuda-graph-impl {}): each captured graph's memory pool "
                                              "holds its static inputs, outputs and intermediates: not counted",
                                              graphs));
  } else if (config_bool(job, "model.enable_cuda_graph").value.value_or(false)) {
    note("model.enable_cuda_graph", "CUDA graphs (--enable-cuda-graph): each captured graph's memory pool holds its "
                                    "static inputs, outputs and intermediates: not counted");
  }
  if (config_node(job, "model.kd_teacher_load")) {
    note("model.kd_teacher_load", "knowledge distillation: the teacher model (--export-kd-teacher-load) sits on every "
                                  "GPU beside the student, its weights and forward activations; its shape is in its "
                                  "checkpoint: not counted");
  }
}

std::optional<EncoderLoad> read_llava(const Job& job, MemoryModel& m, std::vector<std::string>& assumptions,
                                      std::string* why_not) {
  if (!megatron_lm_command_line(job)) return EncoderLoad{};
  auto provider = config_text(job, "model.model_provider").value;
  if (provider) {
    EncoderLoad e;
    if (!read_mimo(job, m, *provider, assumptions, why_not, e)) return std::nullopt;
    return e;
  }
  auto integer = [&](std::string_view path) { return config_int(job, path).value; };
  auto flag = [&](std::string_view path) { return config_bool(job, path).value; };
  bool vision = false;
  for (std::string_view path : {"model.img_h", "model.img_w", "model.patch_dim", "model.dataloader_seq_length",
                                "model.disable_vision_class_token", "model.freeze_language_model",
                                "model.freeze_vision_model", "model.vision_model_type"}) {
    if (config_node(job, path)) vision = true;
  }
  if (!vision) return EncoderLoad{};
  if (auto type = config_text(job, "model.vision_model_type").value) {
    if (why_not) {
      *why_not = fmt::format("the vision tower of examples/multimodal (--vision-model-type {}) is not modelled; "
                             "only pretrain_vlm.py's CLIP ViT, a copy of the language model's layers, is",
                             *type);
    }
    return std::nullopt;
  }
  if (m.experts > 0 || m.mla || !m.hybrid_stages.empty()) {
    if (why_not) *why_not = "pretrain_vlm.py's LLaVA over a MoE, MLA or hybrid language model is not modelled";
    return std::nullopt;
  }
  // arguments.py's vision group: --img-h/--img-w 224, --patch-dim 16.
  int64_t img_h = integer("model.img_h").value_or(224), img_w = integer("model.img_w").value_or(224);
  int64_t patch = integer("model.patch_dim").value_or(16);
  if (img_h <= 0 || img_w <= 0 || patch <= 0 || img_h > (1 << 16) || img_w > (1 << 16)) {
    if (why_not) *why_not = "pretrain_vlm.py: the image size or patch size is out of range";
    return std::nullopt;
  }
  bool drop_class = flag("model.disable_vision_class_token").value_or(false);
  int64_t patches = (img_h / patch) * (img_w / patch);
  int64_t embeddings = llava_image_embeddings(img_h, img_w, patch, drop_class);
  int64_t text = integer("model.dataloader_seq_length").value_or(m.seq);
  int64_t decoder = text + embeddings;
  decoder += llava_padding(decoder, m.cp, m.tp, m.sp);
  int64_t layers = integer("model.encoder_num_layers").value_or(m.layers);
  if (auto lm = integer("model.decoder_num_layers"); lm && *lm > 0) m.layers = *lm;
  bool tower_frozen = flag("model.freeze_vision_model").value_or(false);
  bool language_frozen = flag("model.freeze_language_model").value_or(false);
  // [VLM] the language model runs over the decoder sequence; a learned
  // position table has that many rows (times the micro-batch under CP with
  // packed sequences, the THD format).
  m.seq = decoder;
  m.frozen_gemm_inputs = language_frozen;  // --freeze-LM: gradients still flow to the projector
  if (m.positions > 0) m.positions = m.cp > 1 ? decoder * m.micro_batch : decoder;
  EncoderLoad e = llava_load(m, layers, patches + 1, embeddings, tower_frozen, language_frozen);
  e.decoder_seq = decoder;
  double embed = tower_embeddings(m, patch, patches + 1);
  (tower_frozen ? e.frozen_params : e.trainable_params) += embed;
  assumptions.push_back(fmt::format(
      "vision flags: pretrain_vlm.py's LLaVA: a CLIP ViT of {} layers (the language model's shape) over {} patches + "
      "1 class token of a {}x{} image, its MLP projector, and the language model over {} text + {} image tokens = {} "
      "(with padding)",
      layers, patches, img_h, img_w, text, embeddings, decoder));
  return e;
}

}  // namespace mblint
