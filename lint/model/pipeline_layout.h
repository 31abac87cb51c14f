// The pipeline layout (`pipeline_model_parallel_layout`, Megatron-LM's
// --pipeline-model-parallel-layout) read the way Megatron-Core's
// PipelineParallelLayerLayout reads it: the one parser the flags, the memory
// estimate and the pipeline rules share.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/config_value.h"

namespace mblint {

// Layer codes of an expanded layout: the characters of the string form.
// The list form's "encoder" (not supported by Megatron-Core) becomes 'x'.
constexpr char kEmbedding = 'E';
constexpr char kLoss = 'L';
constexpr char kDecoder = 't';
constexpr char kMtp = 'm';
constexpr char kEncoder = 'x';

// `pipeline_model_parallel_layout` after expansion: commas dropped, `(...)*n`
// then `x*n` unrolled (Python's re.sub, leftmost and non-overlapping, exactly
// as Megatron-Core does it), split at `|` into stages in layer order.
struct ExpandedLayout {
  std::vector<std::string> stages;
  std::string error;  // the first grammar problem ("invalid layer character '('"); empty when it parsed
};

// nullopt when the expansion would be unreasonably large (never guessed).
std::optional<ExpandedLayout> expand_layout(std::string_view text);

// The list form, [["embedding", "decoder"], ["decoder", "loss"]], with the
// names of Megatron-Core's LayerType; nullopt when an item is not known.
std::optional<ExpandedLayout> expand_layout_list(const ConfigValue& list);

}  // namespace mblint
