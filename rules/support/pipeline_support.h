// Shared by the pipeline and batch rules: the pipeline layout string read the
// way Megatron-Core's PipelineParallelLayerLayout reads it, and what the run's
// schedule is once the layout, the virtual pipeline size and the dialect are
// taken into account.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/model/pipeline_layout.h"
#include "rules/support/rule_support.h"

namespace mblint {

struct Layout {
  bool present = false;  // a layout is configured (not null, not absent)
  bool known = false;    // its content could be read and expanded
  Quantity quantity;     // for notes and locations: name, path, where, display = the text
  ExpandedLayout expanded;
  bool list_form = false;  // written as a list of lists rather than a string
};

Layout read_layout(const Job& job);

// A layout that spreads `layers` evenly over `stages` stages with `mtp` MTP
// layers before the loss: "Et*10|(t*10|)*6t*10L". nullopt when the layers
// do not split evenly.
std::optional<std::string> example_layout(int64_t layers, int64_t stages, int64_t mtp);

int64_t count_layers(const std::vector<std::string>& stages, char code);

// The virtual stages per pipeline rank the layout implies (stages / PP);
// nullopt when PP is unknown or does not divide the stage count.
std::optional<int64_t> layout_virtual_stages(const Layout& layout, const Derived& d);

// The value written for virtual_pipeline_model_parallel_size, 1 included
// (Derived folds 1 into "none"; Megatron-Core does not under Megatron Bridge).
// Unknown when unknown; value 0 when null.
Quantity raw_virtual_pipeline(const Job& job);

// Which schedule Megatron-Core runs: the interleaved one whenever PP > 1 and
// the virtual pipeline size is set (by the field or by the layout), even to
// 1 under Megatron Bridge; Megatron-LM turns 1 into "none".
struct Interleaving {
  bool known = false;
  bool interleaved = false;
  int64_t chunks = 1;  // model chunks per pipeline rank
  Quantity source;     // the VPP field or the layout, for notes
};

Interleaving interleaving(const RuleContext& context);

// model.microbatch_group_size_per_vp_stage: the value written, or PP when it
// is null (written, or a full dump's default). Unknown when absent from a
// recipe-based job: recipes may set it and the catalog does not record it.
Quantity microbatch_group_size(const RuleContext& context);

// Microbatches per step: GBS / (MBS x DP), rounded down when
// train.decrease_batch_size_if_needed makes Megatron round the batch down.
Quantity microbatch_count(const RuleContext& context);

// Whether Megatron Bridge's `comm_overlap` section is configured. When it is,
// CommOverlapConfig.setup() overwrites model.overlap_p2p_comm,
// batch_p2p_comm, defer_embedding_wgrad_compute and wgrad_deferral_limit
// (with its own values where comm_overlap.* leaves them null) before the
// model config is checked. Unknown for a recipe-based job that does not say:
// some recipes set it, others leave it null, and the catalog does not record
// which.
enum class Presence { Absent, Present, Unknown };
Presence comm_overlap_presence(const Job& job);

// A boolean setting as a Quantity (1/0), for most_specific and add_notes.
Quantity as_quantity(const Setting& setting);

// A fix that writes null where `quantity` was written (unsafe: it changes
// the run).
Fix set_null_fix(const Quantity& quantity);

// A Quantity named after `path` that holds `value`, located where `where` is.
Quantity quantity_at(std::string_view path, std::optional<int64_t> value, const Provenance& where);

}  // namespace mblint
