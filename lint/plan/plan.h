// `mblint plan`: from a model and a GPU count to ranked parallel layouts.
// Every layout is built as a job (the base job with the layout's settings
// applied), re-derived and run through every error rule of the registry;
// memory goes through one function (fit_memory); the pipeline bubble and
// the communication locality (TP, CP, EP·ETP inside the NVLink domain) give
// the score. The search is pruned arithmetically and the rules run lazily in
// score order, so only the layouts that can make the list are linted.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lint/facts/derived.h"
#include "lint/facts/speed_model.h"
#include "lint/model/job.h"
#include "lint/rule/rule.h"

namespace mblint {

enum class Recompute { None, Selective, Full };
std::string_view recompute_name(Recompute recompute);

// One layout: the settings `mblint plan` chooses.
struct Candidate {
  int64_t tp = 1, pp = 1, vpp = 0, cp = 1, ep = 1, etp = 1;  // vpp 0: no interleaving
  int64_t dp = 1, edp = 1;
  int64_t mbs = 1;
  bool sp = false;
  Recompute recompute = Recompute::None;
  // An uneven pipeline split (first/last stage layers); 0: even split.
  int64_t first_stage_layers = 0, last_stage_layers = 0;
  // The embedding / loss counted as a layer of the first / last stage
  // (account_for_*_in_pipeline_split).
  bool account_embedding = false, account_loss = false;
  // A written pipeline layout (pipeline_model_parallel_layout): decoder
  // layers of each model chunk, PP x VPP of them, chunk i on stage i mod PP;
  // empty: none. The first chunk also holds the embedding, the last the MTP
  // layers and the loss.
  std::vector<int64_t> chunk_layers;
};

// The pipeline_model_parallel_layout string of a candidate's chunks
// ("Etttt|tttt|...|tmL"), empty without one.
std::string pipeline_layout_text(const Candidate& c, int64_t mtp_layers);

// A config key and the value the layout gives it ("null" for None).
struct PlanSetting {
  std::string key;    // "model.tensor_model_parallel_size"
  std::string value;  // "8", "true", "null", "selective"
};

// The settings of a candidate, in snippet order. Settings the base job has
// that would contradict the layout (a recipe's pipeline layout computed for
// another PP) are reset to null.
std::vector<PlanSetting> candidate_settings(const Candidate& c, const Job& base, int64_t global_batch_size);

// Memory of one layout. Everything memory-related in the planner goes
// through fit_memory. The verdict is the estimated-oom rule's: a layout is
// too big only when even the low end of the estimate's error band is above
// the GPU's memory; when the band straddles it, the layout may or may not
// fit (MayNotFit: listed, with its range).
struct MemoryFit {
  enum class Status { Fits, Tight, MayNotFit, TooBig, Unknown } status = Status::Unknown;
  double total_gib = 0;     // the most loaded GPU, with overhead
  double low_gib = 0, high_gib = 0;  // what it needs within the estimate's measured error
  double capacity_gib = 0;
  std::string why_unknown;  // when Unknown
  double ratio() const { return capacity_gib > 0 ? total_gib / capacity_gib : 0; }
};
MemoryFit fit_memory(const Job& job, const Derived& derived, double headroom);

struct Locality {
  bool tp_in_domain = true, cp_in_domain = true, ep_in_domain = true;
  int64_t tp_crossing = 0, cp_crossing = 0, ep_crossing = 0;  // groups crossing the NVLink domain
  // Groups spanning nodes (DP and PP are expected to): reported, not scored.
  int64_t dp_crossing_nodes = 0, pp_crossing_nodes = 0, tp_crossing_nodes = 0, ep_crossing_nodes = 0;
};

struct Evaluation {
  Candidate c;
  bool checked = false;  // the rules ran
  bool valid = false;    // no error from any rule
  std::vector<std::string> errors;  // "[rule-name] message", when not valid
  MemoryFit memory;
  std::optional<double> bubble;
  int64_t microbatches = 0;
  Locality locality;
  // With the speed model: microseconds per token per GPU (1e6 / predicted
  // tokens/s/GPU); without it (GPU not modelled): the estimated step-time
  // overhead fraction. Lower is better either way.
  double score = 0;
  std::optional<SpeedEstimate> speed;  // the predicted step of this layout
  std::vector<std::string> reasons;
  int64_t min_gpus = 0;      // PP · lcm(TP·CP, EP·ETP)
  int64_t full_product = 0;  // PP · TP · CP · EP · ETP
};

struct PlanOptions {
  int64_t world = 0;
  int64_t gpus_per_node = 8;
  int64_t nvlink_domain = 8;
  int64_t global_batch_size = 0;
  size_t top = 5;
  Thresholds thresholds;
  bool try_more_gpus = true;  // when nothing fits: search 2x, 4x ... 16x the GPUs
  // Keys the user fixed with --set (model.tensor_model_parallel_size ...):
  // only layouts with the job's value for them are searched.
  std::vector<std::string> pinned;
};

// The guide's starting point for the model (parallelism-strategies sections
// 1 and 3): a set of layouts (the guide gives ranges) and where they land.
struct GuidePoint {
  std::string band;        // "dense 70-175B: TP=8 + PP=4-8 + DP"
  std::string source;      // "section 1.1 + section 3 (seq 8192: SP)"
  std::vector<Candidate> layouts;
  std::vector<std::string> notes;  // inconsistencies (section 7's DeepSeek-V3 example)
};

struct GuideResult {
  Candidate layout;
  bool divides = true;       // the world size fits the layout's meshes
  std::string why_not;       // when it does not
  Evaluation evaluation;     // when it divides
  std::optional<size_t> rank;  // 1-based position among all valid, fitting layouts
};

struct ModelSize {
  double total_params = 0;   // parameters (billions)
  double active_params = 0;  // per token (billions); = total for dense
  bool moe = false;
};
ModelSize model_size(const Job& job, const Derived& derived);
GuidePoint guide_point(const Job& job, const Derived& derived, const ModelSize& size, int64_t seq_length);

struct PlanResult {
  std::vector<Evaluation> ranked;  // valid (and fitting, when memory is known), best first, up to `top`
  size_t enumerated = 0;           // layouts that pass the arithmetic
  size_t checked = 0;              // linted with every error rule
  size_t rejected_by_rules = 0;
  std::map<std::string, size_t> rejections;  // rule name -> layouts it rejected
  size_t valid_found = 0;          // valid, fitting layouts the walk met (at least the list)
  size_t too_big = 0;              // estimated not to fit
  std::optional<Evaluation> closest;  // when nothing fits: the valid layout nearest to fitting
  int64_t fits_with_gpus = 0;         // when nothing fits: the smallest multiple of the GPUs where one does
  std::optional<Evaluation> fits_with;
  std::vector<GuideResult> guide;
  GuidePoint guide_point;
  ModelSize size;
  int64_t global_batch_size = 0;
  bool global_batch_assumed = false;
  int64_t seq_length = 0;
  bool memory_known = false;       // the estimate worked for the layouts (else: why not)
  std::string memory_unknown_because;
};

PlanResult make_plan(const Job& base, const PlanOptions& options, RuleSet rules);

// "TP 8", "recompute full": the pinned keys the planner understands, with
// the job's value; keys it does not search are left out.
std::vector<std::string> describe_pins(const Job& base, const std::vector<std::string>& pinned);

// Builds one layout as a job and evaluates it (rules, memory, bubble,
// locality, score). Used by make_plan and by the guide comparison.
Evaluation evaluate(const Job& base, const Candidate& c, const PlanOptions& options, RuleSet rules,
                    bool run_rules);

}  // namespace mblint
