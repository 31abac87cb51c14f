// Per-GPU memory and pipeline estimate of a resolved job: what the most
// loaded rank allocates (weights, gradients, optimizer state, activations),
// a stated fixed overhead, and the GPU's capacity. Sizes are in GiB.
// Formulas and their sources are documented in estimate.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/derived.h"
#include "lint/job.h"

namespace mblint {

struct StageMemory {
  int stage = 0;                // pipeline stage, 0-based
  double peak_allocated = 0;    // weights + gradients + optimizer + activations + other
  double total = 0;             // peak_allocated + overhead
};

// One named part of the breakdown ("weights", "activations", ...), with the
// sub-terms that explain it ("attention scores 5as²b: 2.1 GiB").
struct MemoryPart {
  std::string name;
  double gib = 0;
  std::vector<std::string> details;
};

struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double other = 0;
  double peak_allocated = 0;  // sum of the five above (PyTorch's max allocated)
  double overhead = 0;        // CUDA context, NCCL buffers, fragmentation
  double total = 0;           // peak_allocated + overhead
  double capacity = 0;        // the GPU's memory; 0 when the GPU is unknown
  std::string rank;           // which rank: "last pipeline stage (stage 3 of 4)"
  int stage = 0;              // the most loaded stage
  std::optional<double> bubble_fraction;
  std::optional<int64_t> microbatches;
  std::vector<StageMemory> stages;
  std::vector<MemoryPart> parts;       // the breakdown, in display order
  std::vector<std::string> assumptions;  // what was assumed for unknown values
};

// nullopt when the model shape or the parallel sizes are not known well
// enough to estimate; `why_not` (when given) then says what is missing.
std::optional<MemoryEstimate> estimate_memory(const Job& job, const Derived& derived,
                                              std::string* why_not = nullptr);

}  // namespace mblint
