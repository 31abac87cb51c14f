// Qwen3.5's language model of one size (data/model_dims.csv's qwen35_*
// rows): gated attention every fourth layer, gated delta nets between,
// dense or MoE; the sources are named in tests/estimate_qwen35_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_linear_attention.h"
#include "tests/dense_model.h"

namespace mblint::test {

struct Qwen35Text {
  int64_t layers, hidden, heads, groups, ffn, value_heads;
  bool tied;
  int64_t experts = 0, topk = 0, moe_ffn = 0, shared_ffn = 0;
};

// A size's language model on one GPU, as the catalog's row reads it.
inline MemoryModel qwen35(const Qwen35Text& t) {
  MemoryModel m = swiglu_decoder({t.layers, t.hidden, t.heads, t.groups, 256, t.ffn, 248320, t.tied});
  m.qk_norm = true;
  m.experts = t.experts;
  m.topk = t.topk;
  m.moe_ffn = t.moe_ffn;
  m.shared_ffn = t.shared_ffn;
  if (t.experts > 0) m.moe_pattern.assign(static_cast<size_t>(t.layers), true);
  m.gdn_pattern = gdn_layer_pattern(t.layers, 4);
  m.gdn_key_heads = 16;
  m.gdn_key_dim = 128;
  m.gdn_value_heads = t.value_heads;
  m.gdn_value_dim = 128;
  m.gdn_conv = 4;
  m.attention_gate = true;
  return m;
}

}  // namespace mblint::test
