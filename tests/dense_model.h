// The two decoders the memory and step-time tests start from: the GPT-3-style
// dense model (Narayanan et al. 2021, Korthikanti et al. 2022), and the
// Llama-style decoder of the recent checkpoints the model-shape tests count.
#pragma once

#include <cstdint>

#include "lint/facts/estimate.h"

namespace mblint::test {

inline MemoryModel dense_gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t seq, int64_t vocab) {
  MemoryModel m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.query_groups = heads;
  m.kv_channels = hidden / heads;
  m.ffn = 4 * hidden;
  m.seq = seq;
  m.vocab = vocab;
  m.swiglu = false;
  m.stage_layers = {static_cast<double>(layers)};
  m.stage_mtp = {0};
  return m;
}

// A Llama-style decoder's shape: grouped-query attention of `heads` x
// `kv_channels`, an `ffn`-wide MLP, a vocabulary, tied embeddings or not.
struct DecoderShape {
  int64_t layers = 0, hidden = 0, heads = 0, groups = 0, kv_channels = 0, ffn = 0, vocab = 0;
  bool tied = false;
};

// That decoder over a 4096-token sequence: the GPT model with grouped-query
// attention, a SwiGLU MLP `ffn` wide, RMSNorm, no linear biases, no dropout.
inline MemoryModel swiglu_decoder(const DecoderShape& s) {
  MemoryModel m = dense_gpt(s.layers, s.hidden, s.heads, 4096, s.vocab);
  m.query_groups = s.groups;
  m.kv_channels = s.kv_channels;
  m.ffn = s.ffn;
  m.swiglu = true;
  m.tied = s.tied;
  m.rmsnorm = true;
  m.add_bias = false;
  m.hidden_dropout = m.attention_dropout = 0;
  return m;
}

}  // namespace mblint::test
