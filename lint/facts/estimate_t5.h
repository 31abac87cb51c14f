// T5 (examples/t5/pretrain_t5.py) in the memory estimate: the decoder is
// estimated as the language model over --decoder-seq-length; the encoder,
// the decoder layers' cross-attention and the encoder's output they all read
// are added on the (only) pipeline stage as an EncoderLoad. Sources are cited
// in estimate_t5.cpp and docs/memory.md ("T5").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lint/facts/estimate_llava.h"

namespace mblint {

struct Job;
struct MemoryModel;

// The encoder's and decoder's layer counts of a Megatron-LM T5 command line
// (--encoder-num-layers, --decoder-num-layers, no vision flags); nullopt for
// any other job.
struct T5Layers {
  int64_t encoder = 0, decoder = 0;
};
std::optional<T5Layers> t5_layers(const Job& job);

// The encoder, the cross-attention and the shared encoder output for a T5
// whose decoder `m` describes (m.seq the decoder's sequence, m.layers the
// decoder's layers), the encoder running over `encoder_seq` tokens.
EncoderLoad t5_load(const MemoryModel& m, int64_t encoder_layers, int64_t encoder_seq);

// Reads a T5 command line into `m` (decoder sequence, the encoder's load);
// an empty load for any other job; nullopt (with `why_not`) for what is not
// modelled (pipeline or context parallelism, recompute, a missing size).
std::optional<EncoderLoad> read_t5(const Job& job, MemoryModel& m, std::vector<std::string>& assumptions,
                                   std::string* why_not);

}  // namespace mblint
