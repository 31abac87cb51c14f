// A hybrid layer pattern ("M*M-|M*E-/*E") split the way Megatron-Core's
// hybrid_layer_allocation.py splits it (parse_hybrid_pattern,
// get_hybrid_total_layer_count, get_hybrid_total_pipeline_segment_count;
// megatron/core/ssm/mamba_hybrid_layer_allocation.py at core_v0.17.0,
// megatron/core/models/hybrid/ from core_v0.19.0): the main stack before the
// first '/', cut at '|' into pipeline segments, and one MTP pattern per
// prediction depth after it. The one splitter the Megatron-LM flags and the
// memory estimate share; which symbols a reader accepts is its own business.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mblint {

struct HybridPatternParts {
  std::vector<std::string> segments;  // the main stack's pipeline segments (one when it has no '|')
  std::vector<std::string> mtp;       // each prediction depth's layers, in order (empty parts skipped)

  // The main stack's layers: what Megatron-LM takes as num_layers (core_v0.17.0 onward).
  int64_t layers() const;
};

HybridPatternParts split_hybrid_pattern(std::string_view pattern);

}  // namespace mblint
