// T5 in the memory estimate (see estimate_t5.h).
//
// Sources, NVIDIA/Megatron-LM at d98e8a64 (the commit of the functional
// tests' golden values):
// [PT5]  examples/t5/pretrain_t5.py: T5Model with the encoder and decoder
//        block specs of t5_spec.py, max_sequence_length
//        --max-position-embeddings, share_embeddings_and_output_weights unless
//        --untie-embeddings-and-output-weights; the encoder runs over
//        --encoder-seq-length, the decoder over --decoder-seq-length
//        (T5MaskedWordPieceDataset sequence_length / sequence_length_decoder).
// [T5M]  megatron/core/models/T5/t5_model.py: one LanguageModelEmbedding for
//        both stacks; the encoder and decoder TransformerBlocks each end in a
//        final norm; T5LMHead's output layer shares the embedding's weight
//        and then has its own bias (vocabulary / TP).
// [T5S]  megatron/core/models/T5/t5_spec.py: encoder layers are GPT layers
//        (padding mask); decoder layers add pre_cross_attn_layernorm, a
//        CrossAttention with linear_q (hidden -> heads x kv_channels) and
//        linear_kv (hidden -> 2 x heads x kv_channels), TE column-parallel
//        without a fused norm, and linear_proj, plus cross_attn_bda (its
//        dropout).
// [CA]   megatron/core/transformer/attention.py CrossAttention: every
//        decoder layer's linear_kv reads the same encoder output tensor,
//        which autograd saves once (the same storage), and keeps its own
//        K and V over the encoder's tokens.
#include "lint/facts/estimate_t5.h"

#include <algorithm>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/setting_reader.h"
#include "lint/model/job.h"

namespace mblint {

std::optional<T5Layers> t5_layers(const Job& job) {
  if (!megatron_lm_command_line(job)) return std::nullopt;
  auto encoder = config_int(job, "model.encoder_num_layers").value;
  auto decoder = config_int(job, "model.decoder_num_layers").value;
  if (!encoder && !decoder) return std::nullopt;
  for (std::string_view path : {"model.img_h", "model.img_w", "model.patch_dim", "model.dataloader_seq_length",
                                "model.freeze_language_model", "model.freeze_vision_model"}) {
    if (config_node(job, path)) return std::nullopt;  // pretrain_vlm.py's tower and language model
  }
  // validate_args: --num-layers stands for the encoder's when
  // --encoder-num-layers is absent.
  if (!encoder) encoder = config_int(job, "model.num_layers").value;
  return T5Layers{encoder.value_or(0), decoder.value_or(0)};
}

namespace {

// [T5S] one decoder layer's cross-attention: TP-split weights (linear_q,
// linear_kv, linear_proj and the column biases) and whole ones (the
// pre-cross-attention norm, linear_proj's bias).
double cross_attention_params(const MemoryModel& m) {
  double h = m.hidden, inner = static_cast<double>(m.heads) * m.kv_channels, bias = m.add_bias ? 1 : 0;
  double split = h * inner + bias * inner + h * 2 * inner + bias * 2 * inner + inner * h;
  double whole = (m.rmsnorm ? h : 2 * h) + bias * h;
  return split / static_cast<double>(std::max<int64_t>(1, m.tp)) + whole;
}

// [CA] what one decoder layer's cross-attention keeps per micro-batch: its
// norm's input, linear_q's input (the norm's output), Q over the decoder's
// tokens and K, V over the encoder's, the core attention over s_d x s_e (as
// estimate.cpp's self-attention: TE's fp32 softmax output when its kernel
// does not take the shape, the dropout's mask and output), the projection's
// input and the dropout mask after it.
double cross_attention_bytes(const MemoryModel& m, double encoder_seq) {
  double b = static_cast<double>(m.micro_batch), tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  double rep = m.sp ? 1.0 / tp : 1.0, h = m.hidden;
  double sd = static_cast<double>(m.seq), se = encoder_seq;
  double inner_local = static_cast<double>(m.heads) * m.kv_channels / tp, heads_local = m.heads / tp;
  double bytes = 2 * sd * b * h * rep * 2;           // norm input, linear_q input
  bytes += 2 * sd * b * inner_local;                 // Q
  bytes += 2 * se * b * inner_local * 2;             // K, V
  double scores = heads_local * sd * se * b;
  if (m.unfused_attention) {
    if (!m.local_attention && !te_softmax_kernel(m.seq, static_cast<int64_t>(se), b * heads_local)) {
      bytes += 4 * scores;  // fp32 softmax output
    }
    bytes += 2 * scores;
    if (m.attention_dropout > 0) bytes += scores + 2 * scores;  // dropout mask and output
  } else {
    bytes += 4 * sd * b * heads_local;  // flash attention's fp32 log-sum-exp
  }
  bytes += 2 * sd * b * inner_local;  // attention output (projection input)
  if (m.hidden_dropout > 0) bytes += sd * b * h * rep;
  return bytes;
}

}  // namespace

EncoderLoad t5_load(const MemoryModel& m, int64_t encoder_layers, int64_t encoder_seq) {
  EncoderLoad e;
  e.present = true;
  e.tower_layers = encoder_layers;
  e.tower_tokens = encoder_seq;
  e.label = fmt::format("T5 encoder ({} layers over {} tokens) and the decoder's cross-attention", encoder_layers,
                        encoder_seq);
  double tp = static_cast<double>(std::max<int64_t>(1, m.tp));
  double rep = m.sp ? 1.0 / tp : 1.0, h = m.hidden;
  double norm = m.rmsnorm ? h : 2 * h;
  // [T5M] the encoder's layers and final norm, every decoder layer's
  // cross-attention, the LM head's bias.
  e.trainable_params = static_cast<double>(encoder_layers) * dense_layer_params(m) + norm +
                       static_cast<double>(m.layers) * cross_attention_params(m) + static_cast<double>(m.vocab) / tp;
  MemoryModel enc = m;
  enc.seq = encoder_seq;
  double tokens = static_cast<double>(encoder_seq) * m.micro_batch;
  e.activation_bytes = static_cast<double>(encoder_layers) * layer_activation_bytes(enc, false);
  e.activation_bytes += 2 * tokens * h * rep;                     // the encoder's final norm input
  if (m.hidden_dropout > 0) e.activation_bytes += tokens * h * rep;  // the encoder embedding's dropout mask
  e.activation_bytes += 2 * tokens * h * rep;                     // [CA] the encoder output, once
  e.activation_bytes += static_cast<double>(m.layers) * cross_attention_bytes(m, static_cast<double>(encoder_seq));
  return e;
}

std::optional<EncoderLoad> read_t5(const Job& job, MemoryModel& m, std::vector<std::string>& assumptions,
                                   std::string* why_not) {
  std::optional<T5Layers> layers = t5_layers(job);
  if (!layers) return EncoderLoad{};
  auto decline = [&](std::string why) -> std::optional<EncoderLoad> {
    if (why_not) *why_not = fmt::format("T5 (examples/t5/pretrain_t5.py): {}", why);
    return std::nullopt;
  };
  if (layers->encoder <= 0 || layers->decoder <= 0) return decline("the encoder's or decoder's layer count is not known");
  if (m.pp > 1) return decline("the encoder and decoder split over pipeline stages is not modelled");
  if (m.cp > 1) return decline("context parallelism is not modelled");
  if (!m.recompute.empty()) return decline("activation recompute is not modelled");
  if (m.experts > 0 || m.mla) return decline("MoE or MLA layers are not modelled");
  std::optional<int64_t> decoder_seq = config_int(job, "model.decoder_seq_length").value;
  if (!decoder_seq || *decoder_seq <= 0) return decline("--decoder-seq-length is not known");
  int64_t encoder_seq = m.seq;  // --encoder-seq-length stands for --seq-length
  m.layers = layers->decoder;
  m.seq = *decoder_seq;
  // [PT5] a learned position table of --max-position-embeddings rows, which
  // validate_args keeps at least the encoder's sequence: that many assumed.
  if (m.positions > 0) m.positions = std::max(encoder_seq, *decoder_seq);
  assumptions.push_back(fmt::format(
      "T5: the decoder ({} layers over {} tokens, the loss over them) is the language model; the encoder ({} layers "
      "over {} tokens), each decoder layer's cross-attention and the encoder's output are added; the position table "
      "assumed to have {} rows",
      layers->decoder, *decoder_seq, layers->encoder, encoder_seq, std::max(encoder_seq, *decoder_seq)));
  EncoderLoad e = t5_load(m, layers->encoder, encoder_seq);
  e.decoder_seq = *decoder_seq;
  return e;
}

}  // namespace mblint
