// The GPT-3-style dense model the memory and step-time tests start from
// (Narayanan et al. 2021, Korthikanti et al. 2022): multi-head attention and
// a 4h MLP without gating, all its layers on one pipeline stage.
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

}  // namespace mblint::test
