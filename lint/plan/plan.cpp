#include "lint/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <array>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lint/facts/rank_layout.h"
#include "lint/facts/speed_model.h"
#include "lint/run/lint.h"

namespace mblint {

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "none";
}

namespace {

bool present(const Job& job, std::string_view path) {
  const ConfigValue* node = find_path(job.config, path);
  return node && !node->is_null();
}

bool is_moe(const Job& job) {
  Quantity experts = config_int(job, "model.num_moe_experts");
  return experts.known() && *experts > 0;
}

std::string int_or_null(int64_t value) { return value > 0 ? std::to_string(value) : "null"; }

// Where the job turns on the EP all-to-all overlap (Bridge's comm_overlap
// section or the model's own field); empty when it does not.
std::string ep_overlap_key(const Job& job) {
  for (const char* key : {"comm_overlap.overlap_moe_expert_parallel_comm", "model.overlap_moe_expert_parallel_comm"}) {
    if (config_bool(job, key).value.value_or(false)) return key;
  }
  return "";
}

// Whether a layout can keep the EP all-to-all overlap: Megatron-Core asserts
// without expert parallelism, with full recompute, and with PP > 1 without
// the interleaved schedule (ep-overlap-prerequisites). NVIDIA's presets turn
// it off for such layouts (Qwen3-235B on PP 8 without VPP); so does the plan.
bool keeps_ep_overlap(const Candidate& c) {
  return c.ep > 1 && c.recompute != Recompute::Full && (c.pp == 1 || c.vpp > 1);
}

ConfigValue setting_value(const std::string& text, const Provenance& where) {
  if (text == "null") return make_null(where);
  if (text == "true" || text == "false") return make_bool(text == "true", where);
  if (!text.empty() && std::all_of(text.begin(), text.end(), ::isdigit)) return make_int(std::stoll(text), where);
  return make_string(text, where);
}

int64_t mtp_layers_of(const Job& job) {
  Quantity mtp = config_int(job, "model.mtp_num_layers");
  return mtp.known() ? std::max<int64_t>(0, *mtp) : 0;
}

}  // namespace

std::string pipeline_layout_text(const Candidate& c, int64_t mtp_layers) {
  std::string text;
  for (size_t i = 0; i < c.chunk_layers.size(); ++i) {
    if (i > 0) text += '|';
    if (i == 0) text += 'E';
    text.append(static_cast<size_t>(c.chunk_layers[i]), 't');
    if (i + 1 == c.chunk_layers.size()) text.append(static_cast<size_t>(mtp_layers), 'm') += 'L';
  }
  return text;
}

std::vector<PlanSetting> candidate_settings(const Candidate& c, const Job& base, int64_t global_batch_size) {
  std::vector<PlanSetting> s;
  auto add = [&](std::string key, std::string value) { s.push_back({std::move(key), std::move(value)}); };
  add("model.tensor_model_parallel_size", std::to_string(c.tp));
  add("model.pipeline_model_parallel_size", std::to_string(c.pp));
  add("model.virtual_pipeline_model_parallel_size", int_or_null(c.vpp));
  add("model.context_parallel_size", std::to_string(c.cp));
  if (is_moe(base)) {
    add("model.expert_model_parallel_size", std::to_string(c.ep));
    add("model.expert_tensor_parallel_size", std::to_string(c.etp));
  }
  add("model.sequence_parallel", c.sp ? "true" : "false");
  for (auto [key, on] : {std::pair{"model.account_for_embedding_in_pipeline_split", c.account_embedding},
                         std::pair{"model.account_for_loss_in_pipeline_split", c.account_loss}}) {
    if (on || present(base, key)) add(key, on ? "true" : "false");
  }
  if (c.first_stage_layers > 0 || present(base, "model.num_layers_in_first_pipeline_stage")) {
    add("model.num_layers_in_first_pipeline_stage", int_or_null(c.first_stage_layers));
  }
  if (c.last_stage_layers > 0 || present(base, "model.num_layers_in_last_pipeline_stage")) {
    add("model.num_layers_in_last_pipeline_stage", int_or_null(c.last_stage_layers));
  }
  // A recipe's explicit layout is computed for its own PP and VPP.
  if (!c.chunk_layers.empty()) {
    add("model.pipeline_model_parallel_layout", pipeline_layout_text(c, mtp_layers_of(base)));
  } else if (find_path(base.config, "model.pipeline_model_parallel_layout") &&
             !find_path(base.config, "model.pipeline_model_parallel_layout")->is_null()) {
    add("model.pipeline_model_parallel_layout", "null");
  }
  switch (c.recompute) {
    case Recompute::None:
      add("model.recompute_granularity", "null");
      add("model.recompute_method", "null");
      add("model.recompute_num_layers", "null");
      break;
    case Recompute::Selective:
      add("model.recompute_granularity", "selective");
      add("model.recompute_method", "null");
      add("model.recompute_num_layers", "null");
      break;
    case Recompute::Full:
      add("model.recompute_granularity", "full");
      add("model.recompute_method", "uniform");
      add("model.recompute_num_layers", "1");
      break;
  }
  std::string overlap = ep_overlap_key(base);
  if (!overlap.empty() && !keeps_ep_overlap(c)) {
    add(overlap, "false");
    // Bridge's CommOverlapConfig requires the overlap for delayed wgrads.
    for (const char* key : {"comm_overlap.delay_wgrad_compute", "model.delay_wgrad_compute"}) {
      if (config_bool(base, key).value.value_or(false)) add(key, "false");
    }
  }
  add("train.micro_batch_size", std::to_string(c.mbs));
  if (global_batch_size > 0) add("train.global_batch_size", std::to_string(global_batch_size));
  return s;
}

namespace {

Job candidate_job(const Job& base, const std::vector<PlanSetting>& settings, const PlanOptions& o) {
  Job job = base;
  // The machine is the plan's (the base job may name another GPU count).
  job.cluster.nodes.value = o.world / o.gpus_per_node;
  job.cluster.gpus_per_node.value = o.gpus_per_node;
  job.cluster.world_size = LocatedInt{};
  Provenance where;
  where.layer = Layer::CommandLine;
  where.origin = "chosen by mblint plan";
  for (const PlanSetting& s : settings) assign_path(job.config, split_path(s.key), setting_value(s.value, where));
  return job;
}

// Communication placement of the chattiest groups.
Locality locality_of(const Candidate& c, const PlanOptions& o) {
  Locality l;
  ParallelSizes sizes{.world = o.world, .tp = c.tp, .pp = c.pp, .cp = c.cp, .ep = c.ep, .etp = c.etp};
  auto layout = make_rank_layout(sizes);
  if (!layout) return l;
  l.tp_crossing = c.tp > 1 ? count_crossings(layout->decoder, "tp", o.nvlink_domain).crossing : 0;
  l.cp_crossing = c.cp > 1 ? count_crossings(layout->decoder, "tp-cp", o.nvlink_domain).crossing : 0;
  l.ep_crossing = c.ep * c.etp > 1 ? count_crossings(layout->expert, "tp-ep", o.nvlink_domain).crossing : 0;
  l.tp_in_domain = l.tp_crossing == 0;
  l.cp_in_domain = l.cp_crossing == 0;
  l.ep_in_domain = l.ep_crossing == 0;
  if (layout->dp > 1) l.dp_crossing_nodes = count_crossings(layout->decoder, "dp", o.gpus_per_node).crossing;
  if (c.pp > 1) l.pp_crossing_nodes = count_crossings(layout->decoder, "pp", o.gpus_per_node).crossing;
  if (c.tp > 1) l.tp_crossing_nodes = count_crossings(layout->decoder, "tp", o.gpus_per_node).crossing;
  if (c.ep * c.etp > 1) l.ep_crossing_nodes = count_crossings(layout->expert, "tp-ep", o.gpus_per_node).crossing;
  return l;
}

// Locality depends on the sizes only, not on the split, MBS or recompute:
// computed once per (TP, CP, PP, EP, ETP).
struct LocalityCache {
  std::map<std::array<int64_t, 5>, Locality> entries;
};

Locality cached_locality(const Candidate& c, const PlanOptions& o, LocalityCache* cache) {
  if (!cache) return locality_of(c, o);
  std::array<int64_t, 5> key{c.tp, c.cp, c.pp, c.ep, c.etp};
  auto found = cache->entries.find(key);
  if (found != cache->entries.end()) return found->second;
  return cache->entries.emplace(key, locality_of(c, o)).first->second;
}

double log2i(int64_t n) { return std::log2(static_cast<double>(std::max<int64_t>(n, 1))); }

// The estimated step-time overhead of a layout, as a fraction of the ideal
// step: pipeline bubble, recompute and communication penalties. The weights
// are deliberately coarse; they order layouts, they do not predict times.
struct Score {
  double value = 0;
  std::vector<std::string> reasons;
};

// `bubble` is the idle share of the step (what is shown); the score adds
// the time the bubble costs over the ideal step, (PP−1)/(VPP·m), the unit of
// its other terms.
Score score_of(const Candidate& c, const Locality& l, std::optional<double> bubble, int64_t microbatches,
               const PlanOptions& o, bool moe) {
  Score s;
  if (c.tp > 1) {
    if (l.tp_in_domain) {
      s.value += 0.02 * log2i(c.tp);
      s.reasons.push_back(fmt::format("TP {} inside the {}-GPU NVLink domain", c.tp, o.nvlink_domain));
    } else {
      s.value += 0.5;
      s.reasons.push_back(fmt::format("TP {} crosses NVLink domains ({} groups): all-reduces over the network",
                                      c.tp, l.tp_crossing));
    }
  }
  if (c.cp > 1) {
    s.value += l.cp_in_domain ? 0.02 * log2i(c.cp) : 0.15 * log2i(c.cp);
    s.reasons.push_back(l.cp_in_domain ? fmt::format("TP x CP {} inside the NVLink domain", c.tp * c.cp)
                                       : fmt::format("CP {} ring crosses NVLink domains", c.cp));
  }
  if (moe && c.ep * c.etp > 1) {
    int64_t span = c.ep * c.etp;
    // EP 1 has no token all-to-all, only the expert tensor-parallel reduction.
    std::string what = c.ep > 1 ? fmt::format("EP {} x ETP {} all-to-all", c.ep, c.etp)
                                : fmt::format("expert TP {}", c.etp);
    if (l.ep_in_domain) {
      s.value += 0.01 * log2i(span);
      s.reasons.push_back(what + " inside the NVLink domain");
    } else {
      s.value += 0.1 + 0.03 * log2i((span + o.nvlink_domain - 1) / o.nvlink_domain);
      s.reasons.push_back(what + " crosses NVLink domains");
    }
  }
  if (bubble) {
    s.value += c.pp > 1 && microbatches > 0 ? bubble_overhead(c.pp, c.vpp, microbatches) : 0.0;
    if (c.pp > 1) {
      s.reasons.push_back(fmt::format("bubble {:.1f}% (PP {}{}, {} microbatches)", *bubble * 100, c.pp,
                                      c.vpp > 1 ? fmt::format(", VPP {}", c.vpp) : "", microbatches));
    }
  }
  switch (c.recompute) {
    case Recompute::None: break;
    case Recompute::Selective:
      s.value += 0.03;
      s.reasons.push_back("selective recompute (core attention)");
      break;
    case Recompute::Full:
      s.value += 0.33;
      s.reasons.push_back("full recompute (about a third more compute)");
      break;
  }
  // A larger micro batch keeps the GPU busier.
  s.value -= 0.005 * log2i(c.mbs);
  return s;
}

// The speed model of the base job, re-parameterised for each layout.
struct LayoutSpeed {
  MemoryModel model;
  SpeedSettings settings;
  const GpuSpeed* gpu = nullptr;
  bool tp_overlap = false;   // the job asks for TP communication overlap
  bool comm_overlap = false; // a Bridge comm_overlap section: DP overlaps on for DP > 1
};

std::optional<LayoutSpeed> layout_speed_of(const Job& base) {
  Derived d = derive(base);
  if (!d.gpu) return std::nullopt;
  LayoutSpeed s;
  s.gpu = find_gpu_speed(d.gpu->name);
  std::vector<std::string> assumptions;
  auto model = read_memory_model(base, d, assumptions, nullptr);
  if (!s.gpu || !model || model->lora_rank > 0) return std::nullopt;
  s.model = std::move(*model);
  s.settings = read_speed_settings(base, d, s.model);
  s.tp_overlap = config_bool(base, "comm_overlap.tp_comm_overlap").value.value_or(
      config_bool(base, "model.tp_comm_overlap").value.value_or(false));
  const ConfigValue* section = config_node(base, "comm_overlap");
  s.comm_overlap = section && section->is_map();
  return s;
}

// Decoder layers per stage as the candidate splits them (plan's splits:
// even, or given first/last stages, or the embedding/loss counted as layers).
std::vector<double> stage_layers_of(const Candidate& c, double layers) {
  size_t pp = static_cast<size_t>(c.pp);
  std::vector<double> stages(pp, layers / static_cast<double>(c.pp));
  if (!c.chunk_layers.empty()) {
    std::fill(stages.begin(), stages.end(), 0.0);
    for (size_t i = 0; i < c.chunk_layers.size(); ++i) stages[i % pp] += static_cast<double>(c.chunk_layers[i]);
  } else if (c.pp > 1 && (c.first_stage_layers > 0 || c.last_stage_layers > 0)) {
    int64_t ends = (c.first_stage_layers > 0 ? 1 : 0) + (c.last_stage_layers > 0 ? 1 : 0);
    double middle = layers - static_cast<double>(c.first_stage_layers + c.last_stage_layers);
    for (auto& n : stages) n = c.pp > ends ? middle / static_cast<double>(c.pp - ends) : 0;
    if (c.first_stage_layers > 0) stages.front() = static_cast<double>(c.first_stage_layers);
    if (c.last_stage_layers > 0) stages.back() = static_cast<double>(c.last_stage_layers);
  } else if (c.pp > 1 && (c.account_embedding || c.account_loss)) {
    double each = (layers + (c.account_embedding ? 1 : 0) + (c.account_loss ? 1 : 0)) / static_cast<double>(c.pp);
    for (auto& n : stages) n = each;
    if (c.account_embedding) stages.front() -= 1;
    if (c.account_loss) stages.back() -= 1;
  }
  return stages;
}

// A hybrid stack's layer kinds on each stage of the candidate, as Megatron-
// Core assigns them [MM: select_pipeline_segment]: a pattern's '|' segments
// go to stage v % PP; without them, contiguous pieces of the candidate's
// sizes (chunk i of a written interleaved layout on stage i % PP). Empty
// when the segments do not divide over the candidate's PP.
std::vector<LayerKinds> hybrid_stages_of(const MemoryModel& m, const Candidate& c, std::vector<double>& stage_layers) {
  const std::vector<std::string>& segments = m.hybrid_segments;
  std::string layers;
  std::vector<int64_t> counts;
  if (segments.size() > 1) {
    if (segments.size() % static_cast<size_t>(c.pp) != 0) return {};
    for (const std::string& segment : segments) {
      layers += segment;
      counts.push_back(static_cast<int64_t>(segment.size()));
    }
  } else {
    layers = segments.front();
    std::vector<double> sizes = stage_layers;
    if (!c.chunk_layers.empty()) sizes.assign(c.chunk_layers.begin(), c.chunk_layers.end());
    double end = 0;
    int64_t placed = 0;
    for (double n : sizes) {
      end += n;
      int64_t to = std::llround(end);
      counts.push_back(to - placed);
      placed = to;
    }
  }
  std::vector<LayerKinds> kinds;
  place_hybrid_pieces(layers, counts, c.pp, kinds, stage_layers);
  return kinds;
}

std::optional<SpeedEstimate> predict(const LayoutSpeed& base, const Candidate& c, int64_t gbs) {
  MemoryModel m = base.model;
  m.tp = c.tp;
  m.pp = c.pp;
  m.cp = c.cp;
  m.ep = c.ep;
  m.etp = c.etp;
  m.dp = c.dp;
  m.edp = c.edp;
  m.vpp = std::max<int64_t>(1, c.vpp);
  m.sp = c.sp && c.tp > 1;
  m.micro_batch = c.mbs;
  m.microbatches = gbs > 0 ? std::max<int64_t>(1, gbs / (c.mbs * c.dp)) : c.pp;
  m.stage_layers = stage_layers_of(c, static_cast<double>(m.layers));
  if (!m.hybrid_segments.empty()) {
    m.hybrid_stages = hybrid_stages_of(m, c, m.stage_layers);
    if (m.hybrid_stages.empty()) return std::nullopt;
  }
  m.stage_mtp.assign(static_cast<size_t>(c.pp), 0);
  m.stage_mtp.back() = m.mtp_layers;
  m.recompute = c.recompute == Recompute::Full ? "full" : c.recompute == Recompute::Selective ? "selective" : "";
  m.recompute_method = "uniform";
  m.recompute_layers = 1;
  m.recompute_modules = c.recompute == Recompute::Selective ? std::set<std::string>{"core_attn"} : std::set<std::string>{};
  SpeedSettings s = base.settings;
  s.tp_comm_overlap = base.tp_overlap && m.sp;
  s.ep_overlap = base.settings.ep_overlap && keeps_ep_overlap(c);
  bool replicas = c.dp * c.cp > 1;
  s.overlap_grad_reduce = base.settings.overlap_grad_reduce || (base.comm_overlap && replicas);
  s.overlap_param_gather = base.settings.overlap_param_gather || (base.comm_overlap && replicas);
  return estimate_step(m, s, *base.gpu, default_speed_constants());
}

// What the step of a layout is spent on, for its reasons.
std::string speed_reason(const SpeedEstimate& e) {
  const StepBreakdown& b = e.breakdown;
  double comm = b.tp + b.cp + b.ep + b.pp + b.dp;
  return fmt::format("step {:.2f} s: compute {:.0f}%, exposed communication {:.0f}%, bubble {:.0f}%", e.step_time_s,
                     100 * b.compute / e.step_time_s,
                     100 * comm / e.step_time_s, 100 * b.bubble / e.step_time_s);
}

}  // namespace

namespace {

Evaluation evaluate_cached(const Job& base, const Candidate& c, const PlanOptions& options, RuleSet rules,
                           bool run_rules, LocalityCache* cache, const LayoutSpeed* speed) {
  Evaluation e;
  e.c = c;
  Job job = candidate_job(base, candidate_settings(c, base, options.global_batch_size), options);
  Derived d = derive(job);
  e.memory = fit_memory(job, d, options.thresholds.memory_headroom);
  if (d.microbatches.known()) e.microbatches = *d.microbatches;
  e.bubble = c.pp > 1 ? d.bubble : std::optional<double>(0.0);
  // Derived leaves the bubble of an explicit layout open; a written one has the VPP it was written for.
  if (c.pp > 1 && !e.bubble && !c.chunk_layers.empty() && e.microbatches > 0) {
    e.bubble = bubble_idle_share(c.pp, c.vpp, e.microbatches);
  }
  e.locality = cached_locality(c, options, cache);
  Score s = score_of(c, e.locality, e.bubble, e.microbatches, options, is_moe(base));
  e.score = s.value;
  e.reasons = std::move(s.reasons);
  if (speed) e.speed = predict(*speed, c, options.global_batch_size);
  if (e.speed) {
    e.score = 1e6 / e.speed->tokens_per_sec_per_gpu;
    e.reasons.insert(e.reasons.begin(), speed_reason(*e.speed));
  }
  if (e.memory.status == MemoryFit::Status::Tight || e.memory.status == MemoryFit::Status::MayNotFit) {
    if (!e.speed) e.score += 0.2;  // the overhead score's penalty; the speed ranking breaks ties by headroom
  }
  if (e.memory.status == MemoryFit::Status::Tight) {
    e.reasons.push_back(fmt::format("memory above {:.0f}% of the GPU: little headroom for fragmentation",
                                    100 * options.thresholds.memory_headroom));
  } else if (e.memory.status == MemoryFit::Status::MayNotFit) {
    e.reasons.push_back("the GPU's memory lies within the estimate's measured error: it may run out of memory "
                        "(estimated-oom warns)");
  }
  e.min_gpus = c.pp * lcm64(c.tp * c.cp, c.ep * c.etp);
  e.full_product = c.pp * c.tp * c.cp * c.ep * c.etp;
  if (run_rules) {
    std::vector<Diagnostic> diagnostics;
    check_job(job, d, options.thresholds, rules, diagnostics);
    e.checked = true;
    for (const Diagnostic& diag : diagnostics) {
      if (diag.severity == Severity::Error) e.errors.push_back(fmt::format("[{}] {}", diag.rule, diag.message));
    }
    e.valid = e.errors.empty();
  }
  return e;
}

}  // namespace

Evaluation evaluate(const Job& base, const Candidate& c, const PlanOptions& options, RuleSet rules, bool run_rules) {
  std::optional<LayoutSpeed> speed = layout_speed_of(base);
  return evaluate_cached(base, c, options, rules, run_rules, nullptr, speed ? &*speed : nullptr);
}

namespace {

struct Shape {
  int64_t layers = 0, heads = 0, groups = 0, experts = 0, seq = 0;
  bool account_embedding = false, account_loss = false;
  // A hybrid (Mamba) stack, and whether its pattern has '|' pipeline segments.
  bool hybrid = false, hybrid_segments = false;
};

Shape shape_of(const Job& job) {
  Derived d = derive(job);
  Shape s;
  s.layers = d.num_layers.value.value_or(0);
  s.heads = d.num_attention_heads.value.value_or(0);
  s.groups = d.num_query_groups.value.value_or(0);
  s.experts = d.num_moe_experts.value.value_or(0);
  s.seq = d.seq_length.value.value_or(0);
  s.account_embedding = d.account_for_embedding.value.value_or(false);
  s.account_loss = d.account_for_loss.value.value_or(false);
  if (std::optional<HybridPatternSetting> pattern = hybrid_layer_pattern(job)) {
    s.hybrid = true;
    s.hybrid_segments = pattern->segments > 1;
  }
  return s;
}

std::vector<int64_t> divisors_up_to(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= std::min(n, limit); ++k) {
    if (n % k == 0) out.push_back(k);
  }
  return out;
}

// Pipeline splits for PP stages: even, with every interleaving depth that
// leaves each model chunk whole layers (NVIDIA's presets go as deep as one
// or two layers per chunk: VPP 12 for Qwen3-235B on PP 4, 24 for
// Qwen3-30B-A3B on PP 2), counting the embedding and loss as layers when the
// job does (account_for_*_in_pipeline_split) and, where it does not, also
// with both counted (the layout then sets them), which evens the end stages (Llama 3.1 405B's
// 126 layers and two on PP 16); otherwise, when the layers do not divide, a
// first and last stage that take the remainder (which Megatron does not
// combine with the account_for options).
struct Split {
  int64_t vpp = 0, first = 0, last = 0;
  bool embedding = false, loss = false;
  std::vector<int64_t> chunks;  // a written layout's layers per model chunk
};

// A written layout for PP x VPP chunks where no even split exists (DeepSeek-V3's
// and Kimi K2's 61 layers), as NVIDIA's presets write them (perf_recipe_presets.csv:
// "Et*4|(t*4|)*14tmL" on PP 4 x VPP 4, "Et|(tt|)*30mL" on PP 8 x VPP 4): the
// middle chunks take ceil(layers / chunks) layers each, the first (beside the
// embedding) and the last (beside MTP and the loss) share the rest, the first
// no more than a middle one. Empty when the rest does not give the first
// chunk a layer.
std::vector<int64_t> written_layout(int64_t layers, int64_t chunks) {
  if (chunks < 3) return {};
  int64_t each = (layers + chunks - 1) / chunks;
  int64_t rest = layers - each * (chunks - 2);
  if (rest < 1) return {};
  std::vector<int64_t> out(static_cast<size_t>(chunks), each);
  out.front() = std::min(each, rest);
  out.back() = rest - out.front();
  return out;
}

// Interleaving deeper than this many chunks per stage is not tried.
constexpr int64_t kMaxVpp = 24;

// Middle stages take m layers; the first and last share the rest, the
// first no more than the last + 1 (the embedding sits there too). None
// below three stages.
void add_uneven_splits(int64_t layers, int64_t pp, std::vector<Split>& splits) {
  if (pp < 3) return;
  for (int64_t m = layers / pp - 1; m <= layers / pp + 1; ++m) {
    int64_t rest = layers - m * (pp - 2);
    if (m < 1 || rest < 2) continue;
    int64_t last = rest / 2, first = rest - last;
    if (first > m + 1 || last > m + 1) continue;
    splits.push_back(Split{0, first, last, false, false, {}});
  }
}

// A hybrid stack's stages [MM: select_pipeline_segment]: the pattern cut
// evenly, or with given first and last stage sizes when it has no '|'
// segments; never interleaved (Megatron Bridge's HybridModelProvider builds
// no virtual pipeline, hybrid-virtual-pipeline) nor split by a layout or the
// account_for_* options, which the hybrid allocation does not read.
std::vector<Split> hybrid_pipeline_splits(int64_t layers, int64_t pp, bool segments) {
  if (pp == 1 || segments || layers % pp == 0) return {Split{}};
  std::vector<Split> splits;
  add_uneven_splits(layers, pp, splits);
  return splits;
}

std::vector<Split> pipeline_splits(const Shape& shape, int64_t pp) {
  int64_t layers = shape.layers;
  bool embedding = shape.account_embedding, loss = shape.account_loss;
  if (shape.hybrid) return hybrid_pipeline_splits(layers, pp, shape.hybrid_segments);
  std::vector<Split> splits;
  if (pp == 1) return {Split{0, 0, 0, embedding, loss, {}}};
  auto even = [&](bool e, bool l) {
    int64_t counted = layers + (e ? 1 : 0) + (l ? 1 : 0);
    if (counted % pp != 0) return false;
    splits.push_back(Split{0, 0, 0, e, l, {}});
    for (int64_t v = 2; v <= std::min(kMaxVpp, counted / pp); ++v) {
      if (counted % (pp * v) == 0) splits.push_back(Split{v, 0, 0, e, l, {}});
    }
    return true;
  };
  bool found = even(embedding, loss);
  if (!embedding && !loss) found = even(true, true) || found;
  if (!found && (embedding || loss)) found = even(false, false);
  if (found) return splits;
  // No even split on this PP: interleaving needs a written layout, at the
  // depths NVIDIA's presets write (2, 4 and 8; the search stays small enough
  // for the 1 s budget).
  for (int64_t v : {2, 4, 8}) {
    if (v > layers / pp) break;
    std::vector<int64_t> chunks = written_layout(layers, pp * v);
    if (!chunks.empty()) splits.push_back(Split{v, 0, 0, false, false, std::move(chunks)});
  }
  add_uneven_splits(layers, pp, splits);
  return splits;
}

// Rule runs per plan at most: bounds the time when the guide's layout
// scores far below the leaders.
constexpr size_t kMaxLinted = 3000;
// Rule runs spent only to rank the guide's layout exactly (the list is full):
// past this many, it "ranks below" the layouts found. Keeps a 1,024-GPU MoE
// plan under a second (tools/bench_plan.sh) now that written pipeline layouts
// put hundreds more layouts above the guide's.
constexpr size_t kMaxLintedForGuide = 250;

struct Pending {
  double base_score;
  Candidate c;
};

}  // namespace

namespace {

std::vector<Candidate> enumerate_candidates(const Shape& shape, const PlanOptions& o, int64_t gbs) {
  std::vector<Candidate> out;
  const int64_t w = o.world;
  int64_t heads = std::max<int64_t>(shape.heads, 1);
  int64_t groups = shape.groups > 0 ? shape.groups : heads;
  std::vector<int64_t> tps;
  for (int64_t t : divisors_up_to(w, std::max<int64_t>(o.nvlink_domain, 8))) {
    if (t <= 16 && heads % t == 0 && groups % t == 0) tps.push_back(t);
  }
  // CP helps long sequences only: up to seq/4096 (section 3's starting point
  // for long context), a power of two.
  std::vector<int64_t> cps = {1};
  for (int64_t c = 2; c <= 32 && shape.seq > 0 && c * 4096 <= shape.seq; c *= 2) {
    if (shape.seq % (2 * c) == 0) cps.push_back(c);
  }
  std::vector<int64_t> pps = divisors_up_to(w, std::min<int64_t>(shape.layers > 0 ? shape.layers : 1, 64));
  std::vector<int64_t> eps = {1};
  if (shape.experts > 0) eps = divisors_up_to(shape.experts, std::min<int64_t>(shape.experts, w));
  std::vector<int64_t> mbss = {1, 2, 4, 8};
  for (int64_t tp : tps) {
    for (int64_t cp : cps) {
      for (int64_t pp : pps) {
        if (w % (tp * cp * pp) != 0) continue;
        int64_t dp = w / (tp * cp * pp);
        std::vector<int64_t> etps = shape.experts > 0 ? std::vector<int64_t>{1} : std::vector<int64_t>{tp};
        if (shape.experts > 0 && tp > 1) etps.push_back(tp);
        for (int64_t ep : eps) {
          for (int64_t etp : etps) {
            if (w % (etp * ep * pp) != 0) continue;
            int64_t edp = w / (etp * ep * pp);
            for (const Split& split : pipeline_splits(shape, pp)) {
              for (int64_t mbs : mbss) {
                if (gbs > 0 && gbs % (mbs * dp) != 0) continue;
                for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                  Candidate c{.tp = tp, .pp = pp, .vpp = split.vpp, .cp = cp, .ep = ep, .etp = etp, .dp = dp,
                              .edp = edp, .mbs = mbs, .sp = tp > 1, .recompute = r,
                              .first_stage_layers = split.first, .last_stage_layers = split.last,
                              .account_embedding = split.embedding, .account_loss = split.loss,
                              .chunk_layers = split.chunks};
                  out.push_back(c);
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

// Whether the memory estimate backs a layout: 1 when it could not be made
// for this layout (a split or setting the estimate does not follow), 0
// otherwise. A layout it cannot judge ranks below every layout it judged to
// fit, whatever its predicted speed. (Ranking the layouts the estimate puts
// above the GPU's memory, within its error band, below the others was
// measured and not adopted: NVIDIA runs layouts estimated at 101% of the
// GPU, docs/plan-and-layout.md.)
int memory_tier(const Evaluation& e) { return e.memory.status == MemoryFit::Status::Unknown ? 1 : 0; }

// Within a memory tier, ties of the score go to more memory headroom, then
// to fewer GPUs in the layout's parallel dimensions (the simpler layout).
bool ranks_before(const Evaluation& a, const Evaluation& b) {
  if (memory_tier(a) != memory_tier(b)) return memory_tier(a) < memory_tier(b);
  if (a.score != b.score) return a.score < b.score;
  if (a.memory.ratio() != b.memory.ratio()) return a.memory.ratio() < b.memory.ratio();
  return a.full_product < b.full_product;
}

// The score without memory or rules: what orders the lazy walk.
double quick_score(const Candidate& c, const PlanOptions& o, int64_t gbs, bool moe, LocalityCache& cache,
                   const LayoutSpeed* speed) {
  if (speed) {
    if (auto e = predict(*speed, c, gbs)) return 1e6 / e->tokens_per_sec_per_gpu;  // what evaluate_cached scores
  }
  double bubble = 0;
  int64_t m = 0;
  if (gbs > 0 && c.pp > 1) {
    m = std::max<int64_t>(gbs / (c.mbs * c.dp), 1);
    bubble = bubble_idle_share(c.pp, c.vpp, m);
  }
  return score_of(c, cached_locality(c, o, &cache), std::optional<double>(bubble), m, o, moe).value;
}

bool fits(const Evaluation& e) {
  return e.memory.status != MemoryFit::Status::TooBig;
}

// The guide's layouts with the planner's choices for what the guide leaves
// open: no interleaving, micro batch 1, the lightest recompute that fits.
GuideResult place_guide_layout(const Job& base, const Shape& shape, Candidate c, const PlanOptions& o,
                               RuleSet rules) {
  GuideResult g;
  if (shape.experts == 0) c.etp = c.tp;
  g.layout = c;
  int64_t dense_mesh = c.tp * c.cp * c.pp, expert_mesh = c.ep * c.etp * c.pp;
  if (o.world % dense_mesh != 0 || o.world % expert_mesh != 0) {
    g.divides = false;
    std::string what = o.world % dense_mesh != 0 ? fmt::format("TP x CP x PP = {}", dense_mesh)
                                                 : fmt::format("EP x ETP x PP = {}", expert_mesh);
    g.why_not = fmt::format("{} GPUs are not a multiple of {} (it needs a multiple of PP x lcm(TP x CP, EP x ETP) = {})",
                            o.world, what, c.pp * lcm64(c.tp * c.cp, c.ep * c.etp));
    return g;
  }
  c.dp = o.world / (c.tp * c.cp * c.pp);
  c.edp = o.world / (c.ep * c.etp * c.pp);
  for (const Split& split : pipeline_splits(shape, c.pp)) {
    if (split.vpp != 0) continue;
    c.first_stage_layers = split.first;
    c.last_stage_layers = split.last;
    c.account_embedding = split.embedding;
    c.account_loss = split.loss;
    break;
  }
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    c.recompute = r;
    g.evaluation = evaluate(base, c, o, rules, true);
    if (fits(g.evaluation)) break;
  }
  g.layout = c;
  return g;
}

void place_guide(const Job& base, const Shape& shape, const PlanOptions& o, RuleSet rules, PlanResult& result) {
  Derived d = derive(base);
  result.size = model_size(base, d);
  result.guide_point = guide_point(base, d, result.size, shape.seq);
  for (const Candidate& c : result.guide_point.layouts) {
    result.guide.push_back(place_guide_layout(base, shape, c, o, rules));
  }
}

}  // namespace

namespace {

// A pinned key, how it reads, and whether a candidate has the job's value.
struct Pin {
  const char* key;
  const char* label;
};

constexpr Pin kPins[] = {
    {"model.tensor_model_parallel_size", "TP"},  {"model.pipeline_model_parallel_size", "PP"},
    {"model.virtual_pipeline_model_parallel_size", "VPP"}, {"model.context_parallel_size", "CP"},
    {"model.expert_model_parallel_size", "EP"},  {"model.expert_tensor_parallel_size", "ETP"},
    {"train.micro_batch_size", "MBS"},           {"model.sequence_parallel", "SP"},
    {"model.recompute_granularity", "recompute"},
};

// The job's value of a pinned key in the candidates' terms; nullopt when
// the job does not say.
std::optional<std::string> pinned_value(const Job& job, const Derived& d, std::string_view key) {
  auto number = [](const Quantity& q) -> std::optional<std::string> {
    return q.known() ? std::optional<std::string>(std::to_string(*q)) : std::nullopt;
  };
  if (key == "model.tensor_model_parallel_size") return number(d.tensor_parallel);
  if (key == "model.pipeline_model_parallel_size") return number(d.pipeline_parallel);
  if (key == "model.virtual_pipeline_model_parallel_size") return number(d.virtual_pipeline);
  if (key == "model.context_parallel_size") return number(d.context_parallel);
  if (key == "model.expert_model_parallel_size") return number(d.expert_parallel);
  if (key == "model.expert_tensor_parallel_size") return number(d.expert_tensor_parallel);
  if (key == "train.micro_batch_size") return number(d.micro_batch_size);
  if (key == "model.sequence_parallel") {
    if (!d.sequence_parallel.value) return std::nullopt;
    return std::string(*d.sequence_parallel.value ? "on" : "off");
  }
  if (key == "model.recompute_granularity") {
    TextSetting t = config_text(job, key);
    if (t.value) return *t.value;
    const ConfigValue* node = find_path(job.config, key);
    if (node && node->is_null()) return std::string("none");
  }
  return std::nullopt;
}

std::string candidate_value(const Candidate& c, std::string_view key) {
  if (key == "model.tensor_model_parallel_size") return std::to_string(c.tp);
  if (key == "model.pipeline_model_parallel_size") return std::to_string(c.pp);
  if (key == "model.virtual_pipeline_model_parallel_size") return std::to_string(c.vpp);
  if (key == "model.context_parallel_size") return std::to_string(c.cp);
  if (key == "model.expert_model_parallel_size") return std::to_string(c.ep);
  if (key == "model.expert_tensor_parallel_size") return std::to_string(c.etp);
  if (key == "train.micro_batch_size") return std::to_string(c.mbs);
  if (key == "model.sequence_parallel") return c.sp ? "on" : "off";
  return std::string(recompute_name(c.recompute));
}

std::vector<std::pair<std::string, std::string>> active_pins(const Job& base, const std::vector<std::string>& pinned) {
  Derived d = derive(base);
  std::vector<std::pair<std::string, std::string>> pins;
  for (const Pin& pin : kPins) {
    if (std::find(pinned.begin(), pinned.end(), pin.key) == pinned.end()) continue;
    if (auto value = pinned_value(base, d, pin.key)) pins.emplace_back(pin.key, *value);
  }
  return pins;
}

}  // namespace

std::vector<std::string> describe_pins(const Job& base, const std::vector<std::string>& pinned) {
  std::vector<std::string> out;
  for (const auto& [key, value] : active_pins(base, pinned)) {
    for (const Pin& pin : kPins) {
      if (key == pin.key) out.push_back(fmt::format("{} {}", pin.label, value == "0" ? "none" : value));
    }
  }
  return out;
}

PlanResult make_plan(const Job& base, const PlanOptions& options, RuleSet configured) {
  // Each layout's memory is judged here (plan_memory.cpp): the memory rules
  // would only repeat that verdict as errors.
  std::vector<const RuleInfo*> layout_rules;
  for (const RuleInfo* rule : configured) {
    if (rule->group != RuleGroup::Memory) layout_rules.push_back(rule);
  }
  RuleSet rules(layout_rules.data(), layout_rules.size());
  PlanResult result;
  Shape shape = shape_of(base);
  result.seq_length = shape.seq;
  result.global_batch_size = options.global_batch_size;
  bool moe = shape.experts > 0;
  std::vector<Candidate> all = enumerate_candidates(shape, options, options.global_batch_size);
  for (const auto& pin : active_pins(base, options.pinned)) {
    // (clang 14 cannot capture structured bindings: name the pair's parts.)
    const auto& key = pin.first;
    const auto& value = pin.second;
    std::erase_if(all, [&](const Candidate& c) { return candidate_value(c, key) != value; });
  }
  {
    // Whether the estimate works for this model: try it on the first layout.
    Evaluation probe = all.empty() ? Evaluation{} : evaluate(base, all.front(), options, rules, false);
    result.memory_known = !all.empty() && probe.memory.status != MemoryFit::Status::Unknown;
    result.memory_unknown_because = probe.memory.why_unknown;
  }
  result.enumerated = all.size();
  std::vector<Pending> order;
  order.reserve(all.size());
  LocalityCache cache;
  std::optional<LayoutSpeed> speed = layout_speed_of(base);
  const LayoutSpeed* by_speed = speed ? &*speed : nullptr;
  for (const Candidate& c : all) {
    order.push_back({quick_score(c, options, options.global_batch_size, moe, cache, by_speed), c});
  }
  std::stable_sort(order.begin(), order.end(), [](const Pending& a, const Pending& b) { return a.base_score < b.base_score; });

  // The guide's layouts first: the walk goes on until it has passed their
  // scores, so their rank among all valid layouts is exact.
  place_guide(base, shape, options, rules, result);
  double target = -1e9;
  for (const GuideResult& g : result.guide) {
    if (g.divides && g.evaluation.valid && fits(g.evaluation)) target = std::max(target, g.evaluation.score);
  }

  // Walk in score order (the final score is never below the quick one). A
  // layout that fits without recompute makes its recompute variants
  // pointless, and its best interleaving its other ones: the list shows
  // each layout once, with the VPP predicted fastest, instead of filling
  // the top N with VPP 8, 9 and 12 of one layout a few percent apart (less
  // than the speed model can tell).
  std::vector<Evaluation> accepted;  // sorted by score
  std::vector<Evaluation> too_big;
  auto key = [](const Candidate& c) { return std::make_tuple(c.tp, c.pp, c.cp, c.ep, c.etp, c.mbs); };
  std::set<decltype(key(Candidate{}))> settled;
  // A recompute setting the rules reject on a layout they accept with
  // another (full recompute under CUDA graphs) is rejected for itself: its
  // other layouts are not linted one by one.
  std::set<Recompute> rejected_recompute;
  bool probed_recompute = false;
  auto probe_recompute = [&](const Candidate& valid) {
    probed_recompute = true;
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      if (r == valid.recompute) continue;
      Candidate c = valid;
      c.recompute = r;
      ++result.checked;
      if (!evaluate_cached(base, c, options, rules, true, &cache, by_speed).valid) rejected_recompute.insert(r);
    }
  };
  bool exhausted = true;
  // Where the walk stopped: every layout scoring below was walked.
  double walked_below = 1e300;
  for (const Pending& p : order) {
    // A layout in the tie class of the last listed one may still rank above it.
    double worst = accepted.size() >= options.top ? accepted[options.top - 1].score : 1e9;
    // Below a layout the estimate could not judge, any layout it judges still
    // ranks higher (when it judges this model's layouts at all).
    if (result.memory_known && accepted.size() >= options.top && memory_tier(accepted[options.top - 1]) > 0) {
      worst = 1e300;
    }
    if (p.base_score > std::max(worst, target) && accepted.size() >= options.top) {
      exhausted = false;
      break;
    }
    bool only_for_guide = accepted.size() >= options.top && p.base_score > worst;
    if (result.checked >= kMaxLinted || (only_for_guide && result.checked >= kMaxLintedForGuide)) {
      exhausted = false;
      walked_below = p.base_score;
      break;
    }
    if (settled.count(key(p.c)) || rejected_recompute.count(p.c.recompute)) continue;
    Evaluation e = evaluate_cached(base, p.c, options, rules, false, &cache, by_speed);
    if (!fits(e)) {
      ++result.too_big;
      too_big.push_back(std::move(e));
      continue;
    }
    Evaluation checked = evaluate_cached(base, p.c, options, rules, true, &cache, by_speed);
    ++result.checked;
    if (!checked.valid) {
      ++result.rejected_by_rules;
      for (const std::string& error : checked.errors) ++result.rejections[error.substr(1, error.find(']') - 1)];
      continue;
    }
    settled.insert(key(p.c));
    if (!probed_recompute) probe_recompute(p.c);
    auto at = std::upper_bound(accepted.begin(), accepted.end(), checked, ranks_before);
    accepted.insert(at, std::move(checked));
  }
  for (GuideResult& g : result.guide) {
    if (!g.divides || !g.evaluation.valid || !fits(g.evaluation)) continue;
    size_t better = static_cast<size_t>(std::count_if(accepted.begin(), accepted.end(), [&](const Evaluation& x) {
      return x.score < g.evaluation.score;
    }));
    if (exhausted || (g.evaluation.score <= target && g.evaluation.score <= walked_below)) g.rank = better + 1;
  }
  result.valid_found = accepted.size();
  if (accepted.size() > options.top) accepted.resize(options.top);
  result.ranked = std::move(accepted);
  if (result.ranked.empty() && result.memory_known && options.try_more_gpus) {
    for (int64_t factor = 2; factor <= 16; factor *= 2) {
      PlanOptions more = options;
      more.world = options.world * factor;
      more.top = 1;
      more.try_more_gpus = false;
      PlanResult bigger = make_plan(base, more, rules);
      if (!bigger.ranked.empty()) {
        result.fits_with_gpus = more.world;
        result.fits_with = bigger.ranked.front();
        break;
      }
    }
  }
  if (result.ranked.empty() && !too_big.empty()) {
    std::stable_sort(too_big.begin(), too_big.end(),
                     [](const Evaluation& a, const Evaluation& b) { return a.memory.ratio() < b.memory.ratio(); });
    for (const Evaluation& e : too_big) {
      Evaluation checked = evaluate(base, e.c, options, rules, true);
      ++result.checked;
      if (checked.valid) {
        result.closest = std::move(checked);
        break;
      }
    }
  }
  return result;
}

}  // namespace mblint
