// DeepSeek V4 in the stage estimate (estimate.cpp): the weights of each
// pipeline stage, what its decoder layers keep per micro-batch (attention and
// hyper-connections from estimate_dsv4.cpp, the MoE block from estimate.cpp's
// moe_block_bytes), the hyper-connection head and the MTP layers on the last
// stage, on the layout Megatron Bridge writes. Sources in
// estimate_dsv4_stage.cpp.
#pragma once

#include <string>

#include "lint/facts/estimate.h"

namespace mblint {

// Whether the estimate models this DeepSeek V4 job; `why_not` (located at
// the upstream code) when it does not.
bool dsv4_supported(const MemoryModel& m, std::string* why_not);

// The decoder layers per stage of the layout Bridge writes
// (dsv4_bridge_stage_layers), the MTP layers on the last stage.
void dsv4_bridge_split(MemoryModel& m);

// Parameters of stage `stage` on one rank: dense (every rank of the stage
// holds them) and routed experts (split over EP x ETP), and the largest
// single weight (elements).
struct Dsv4StageParams {
  double dense = 0, experts = 0, largest = 0;
};
Dsv4StageParams dsv4_stage_params(const MemoryModel& m, int stage);

// Bytes the decoder layers of stage `stage` keep for one micro-batch: each
// layer's attention and hyper-connections plus its MoE block.
double dsv4_layers_bytes(const MemoryModel& m, int stage);

// Under mhc recompute: the n-stream tensors a model chunk of `chunk_layers`
// layers keeps at its recompute blocks' boundaries, per micro-batch.
double dsv4_recompute_block_bytes(const MemoryModel& m, double chunk_layers);

// One MTP depth per micro-batch: its decoder layer, the e_proj/h_proj
// streams and its hyper-connection head, without its input (below).
double dsv4_mtp_depth_bytes(const MemoryModel& m);

// An MTP depth's input besides the decoder's streams: the embedding enorm keeps.
double dsv4_mtp_input_bytes(const MemoryModel& m);

// The decoder's hyper-connection head on the last stage, per micro-batch.
double dsv4_head_bytes(const MemoryModel& m);

// The width of the hidden states between layers and stages, in hidden sizes:
// the residual streams (1 for any other model).
double dsv4_streams(const MemoryModel& m);

}  // namespace mblint
