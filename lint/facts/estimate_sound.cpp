// The sound encoder of an audio-visual recipe (see estimate_sound.h).
//
// Sources:
// [OMNI] Megatron-Bridge 067f987df03b, src/megatron/bridge/models/
//        nemotron_omni/: nemotron_omni_bridge.py:145-152 (has_sound when the
//        checkpoint has a sound_config; sound_hidden_size and
//        sound_projection_hidden_size from it); nemotron_omni_provider.py:
//        169-170 (freeze_sound_encoder and freeze_sound_projection default
//        False), :249-261 (the projector's config: a copy of the language
//        config, no SP, no recompute, ffn sound_projection_hidden_size),
//        :263-295 (_build_sound_encoder from the sound_config with
//        convolution and attention biases off; the MultimodalProjector "mlp"
//        of the language MLP spec, sound_hidden_size wide, built only with
//        add_encoder: the first pipeline stage), :389-393 (freeze());
//        nemotron_omni_sound.py (BridgeSoundEncoder wraps transformers'
//        ParakeetEncoder, a Hugging Face module whole on every
//        tensor-parallel rank, its gradients averaged over TP);
//        modeling_nemotron_omni.py:395-437 (_encode_sound: the encoder over
//        the micro-batch's mel clips, the projector over its output, one
//        projected row per sound placeholder token of the sequence).
// [PARA] huggingface/transformers f14d0cbc824e, src/transformers/models/
//        parakeet/modeling_parakeet.py: ParakeetEncoderSubsamplingConv2D
//        (a Conv2d 1 -> channels, then log2(factor) - 1 depthwise and
//        pointwise Conv2d pairs, all 3x3 stride 2 with bias but the
//        pointwise 1x1; a linear channels x mel_bins / factor -> hidden with
//        bias), ParakeetEncoderBlock (two feed-forwards hidden -> ffn ->
//        hidden, q/k/v/o and the relative-position key projection hidden x
//        hidden, bias_u and bias_v (heads x head_dim each), the convolution
//        module: pointwise hidden -> 2 x hidden, depthwise hidden x kernel,
//        a BatchNorm (weight and bias), pointwise hidden -> hidden; five
//        LayerNorms with bias). Bridge turns the linear and convolution
//        biases off (convolution_bias False), which the checkpoint's
//        parameter count confirms (tests/estimate_radio_test.cpp), and
//        passes no subsampling_conv_channels, kernel or stride, so
//        ParakeetEncoderConfig's defaults build the stack (256 channels,
//        3x3, stride 2: configuration_parakeet.py at 6e4054ae4d27), as the
//        row records.
// [LORA] Megatron-Bridge 067f987df03b, src/megatron/bridge/peft/lora.py and
//        module_matcher.py: LoRA wraps modules whose name equals a target;
//        the Omni recipes' targets (linear_qkv, linear_proj, in_proj,
//        out_proj, linear_fc1, linear_fc2) name the projector's linear_fc1
//        and linear_fc2, none of the Parakeet modules (q_proj, linear1,
//        pointwise_conv1, ...).
//
// What a frozen encoder costs: its weights and nothing else (the mel
// features need no gradient, so autograd records nothing through it; its
// forward working set is freed before the language model runs), as for a
// frozen vision tower (estimate_vision.cpp).
#include "lint/facts/estimate_sound.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_llava.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/job.h"

namespace mblint {

namespace {

constexpr SoundDims kSoundDims[] = {
#include "lint/facts/sound_dims_data.inc"
};

// [PARA] one conformer block without linear or convolution biases.
int64_t parakeet_block(const SoundDims& d) {
  int64_t h = d.hidden, f = d.ffn;
  int64_t feed_forwards = 2 * (h * f + f * h);
  int64_t attention = 4 * h * h + h * h + 2 * h;  // q, k, v, o; relative_k_proj; bias_u, bias_v
  int64_t convolution = h * 2 * h + h * d.conv_kernel + 2 * h + h * h;  // pointwise, depthwise, BatchNorm, pointwise
  int64_t norms = 5 * 2 * h;
  return feed_forwards + attention + convolution + norms;
}

// [PARA] the subsampling stack: the first Conv2d, the depthwise/pointwise
// pairs (all with bias), and the linear into the encoder's width.
int64_t parakeet_subsampling(const SoundDims& d) {
  int64_t c = d.subsampling_channels, k = 3;
  int stages = 0;
  for (int f = d.subsampling_factor; f > 1; f /= 2) ++stages;
  int64_t first = c * k * k + c;
  int64_t pair = (c * k * k + c) + (c * c + c);
  int64_t out_width = c * (d.mel_bins >> stages);
  return first + (stages - 1) * pair + out_width * d.hidden + d.hidden;
}

}  // namespace

const SoundDims* find_sound_dims(std::string_view model_key) {
  for (const SoundDims& d : kSoundDims) {
    if (model_key == d.key) return &d;
  }
  return nullptr;
}

SoundParams sound_params(const SoundDims& d) {
  SoundParams p;
  p.encoder = d.layers * parakeet_block(d) + parakeet_subsampling(d);
  // [OMNI] the projector: fc1's fused RMSNorm (whole), fc1 and fc2 without
  // bias (column- and row-parallel: split).
  p.projector_split = static_cast<int64_t>(d.hidden) * d.projector_ffn + static_cast<int64_t>(d.projector_ffn) * d.text_hidden;
  p.projector = p.projector_split + d.hidden;
  return p;
}

std::optional<SoundLoad> read_sound_load(const Job& job, const MemoryModel& m, const SoundDims& d,
                                         std::string* why_not) {
  SoundLoad s;
  s.dims = &d;
  bool lora = m.lora_rank > 0;
  // [OMNI] the freeze flags default to False; a PEFT job freezes the base.
  auto frozen = [&](std::string_view path) { return lora || config_bool(job, path).value.value_or(false); };
  s.encoder_frozen = frozen("model.freeze_sound_encoder");
  s.projector_frozen = frozen("model.freeze_sound_projection");
  if (!s.encoder_frozen) {
    if (why_not) {
      *why_not = fmt::format(
          "the trainable sound encoder of {} (freeze_sound_encoder false) is Hugging Face transformers' "
          "ParakeetEncoder, whose saved activations per audio frame are not modelled",
          d.hf_id);
    }
    return std::nullopt;
  }
  SoundParams p = sound_params(d);
  double tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  s.frozen_params += static_cast<double>(p.encoder);
  double projector = static_cast<double>(p.projector - p.projector_split) + static_cast<double>(p.projector_split) / tp;
  (s.projector_frozen ? s.frozen_params : s.trainable_params) += projector;
  if (lora) {
    // [LORA] adapters on the projector's fc1 and fc2.
    double r = static_cast<double>(m.lora_rank);
    s.adapter_params = lora_adapter_params(r, d.hidden, d.projector_ffn, tp) +
                       lora_adapter_params(r, d.projector_ffn, d.text_hidden, tp);
  }
  // [OMNI] one projected row per sound token: every token of the sample a
  // sound token bounds them (a micro-batch's shorter clips are padded to its
  // longest before the projector; those rows are not counted).
  s.tokens = std::max<int64_t>(0, m.micro_batch) * m.seq;
  if (!s.projector_frozen || lora) {
    s.activation_bytes = mlp_projector_bytes(static_cast<double>(s.tokens), d.hidden, d.projector_ffn, tp, false);
  }
  return s;
}

std::string sound_assumption(const SoundLoad& s) {
  const SoundDims& d = *s.dims;
  SoundParams p = sound_params(d);
  auto state = [](bool frozen) { return frozen ? "frozen" : "trained"; };
  return fmt::format("sound encoder of {}: Parakeet, {:.1f} M parameters ({}, whole on every tensor-parallel rank) + "
                     "projector {:.1f} M ({}{}), on the first pipeline stage; its projector over at most {} sound "
                     "tokens per micro-batch (every token of seq_length x micro batch a sound token; a clip's padding "
                     "to the micro-batch's longest not counted), counted beside the image bound",
                     d.hf_id, static_cast<double>(p.encoder) / 1e6, state(s.encoder_frozen),
                     static_cast<double>(p.projector) / 1e6, state(s.projector_frozen),
                     s.adapter_params > 0 ? fmt::format(", LoRA adapters {:.2f} M per GPU", s.adapter_params / 1e6) : "",
                     s.tokens);
}

}  // namespace mblint
