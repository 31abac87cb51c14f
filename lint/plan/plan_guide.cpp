// Where NVIDIA's parallelism guide would start for this model
// (parallelism-strategies sections 1 and 3), and the model's size that picks
// the guide's row.
#include <fmt/format.h>

#include <algorithm>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_dsv4.h"
#include "lint/plan/plan.h"

namespace mblint {

namespace {

int64_t value_of(const Job& job, std::string_view path, int64_t fallback) {
  Quantity q = config_int(job, path);
  return q.known() && *q > 0 ? *q : fallback;
}

// Parameters of `m` with every weight on one rank, in bf16.
double unsharded_params(MemoryModel m) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  m.param_bytes = 2;
  m.fp8 = m.fp8_weight_cache = false;
  m.lora_rank = 0;
  return estimate_model(m).weights * kGiB / 2;
}

// A model's size as the memory estimate counts it, where the transformer
// formula below does not hold: a hybrid (Mamba) stack, whose every layer the
// formula would take for attention + MoE (Nemotron 3 Super: 1,000 B for its
// 120 B), and Gemma 4 (per-layer embeddings: E4B's 7.5 B, not 4.5 B; global
// layers' wider heads). Active: the routed experts of top-k, every router
// column (the router scores all experts).
std::optional<ModelSize> counted_size(const Job& job, const Derived& d) {
  std::vector<std::string> assumptions;
  std::optional<MemoryModel> read = read_memory_model(job, d, assumptions, nullptr);
  if (!read || (read->hybrid_stages.empty() && read->ple_dim == 0 && read->global_attention.empty())) {
    return std::nullopt;
  }
  MemoryModel m = *read;
  m.vision = VisionLoad{};  // the language model's size: a tower is not part of the layout's model
  m.encoder = EncoderLoad{};
  if (!m.hybrid_stages.empty()) {
    LayerKinds all;
    for (const LayerKinds& k : m.hybrid_stages) all += k;
    m.hybrid_stages = {all};
  }
  m.stage_layers = {static_cast<double>(m.layers)};
  int64_t mtp = 0;
  for (int64_t n : m.stage_mtp) mtp += n;
  m.stage_mtp = {mtp};
  m.tp = m.pp = m.vpp = m.cp = m.ep = m.etp = m.dp = m.edp = 1;
  ModelSize size;
  size.moe = m.experts > 0;
  size.total_params = unsharded_params(m) / 1e9;
  size.active_params = size.total_params;
  if (!size.moe || m.topk >= m.experts) return size;
  MemoryModel top = m, routers = m, top_routers = m;
  top.experts = top_routers.experts = m.topk;
  routers.moe_ffn = top_routers.moe_ffn = 0;
  double router_rest = unsharded_params(routers) - unsharded_params(top_routers);
  size.active_params = (unsharded_params(top) + router_rest) / 1e9;
  return size;
}

// DeepSeek V4 as the memory estimate counts it (estimate_dsv4.cpp
// dsv4_model_params): the transformer formula below has none of its
// compressors, indexers, hyper-connections or grouped output projection,
// and leaves out the MTP layer (DeepSeek-V4-Flash: 287.9 B by the formula,
// 290.9 B counted). The MTP layers are the job's, as the estimate reads them
// (one built when repeated). Active: the routed experts of top-k.
std::optional<ModelSize> dsv4_size(const Job& job, const Derived& d) {
  std::vector<std::string> assumptions;
  std::optional<MemoryModel> read = read_memory_model(job, d, assumptions, nullptr);
  if (!read || !read->dsv4) return std::nullopt;
  const MemoryModel& m = *read;
  Dsv4Shape s = *m.dsv4;
  int64_t room = static_cast<int64_t>(s.ratios.size()) - s.layers;
  s.mtp_layers = std::clamp<int64_t>(m.mtp_repeated ? std::min<int64_t>(m.mtp_layers, 1) : m.mtp_layers, 0, room);
  ModelSize size;
  size.moe = s.experts > 0;
  double total = dsv4_model_params(s, s.mtp_layers > 0);
  double idle_experts = static_cast<double>(std::max<int64_t>(0, s.experts - m.topk));
  double idle = idle_experts * 3.0 * static_cast<double>(s.hidden) * static_cast<double>(s.moe_ffn) *
                static_cast<double>(s.layers + s.mtp_layers);
  size.total_params = total / 1e9;
  size.active_params = (total - idle) / 1e9;
  return size;
}

}  // namespace

ModelSize model_size(const Job& job, const Derived& d) {
  if (std::optional<ModelSize> counted = counted_size(job, d)) return *counted;
  if (std::optional<ModelSize> dsv4 = dsv4_size(job, d)) return *dsv4;
  const ModelDims* dims = job.recipe ? job.recipe->dims : nullptr;
  double h = static_cast<double>(d.hidden_size.value.value_or(0));
  double layers = static_cast<double>(d.num_layers.value.value_or(0));
  double heads = static_cast<double>(d.num_attention_heads.value.value_or(1));
  double groups = static_cast<double>(value_of(job, "model.num_query_groups", static_cast<int64_t>(heads)));
  double kv = static_cast<double>(value_of(job, "model.kv_channels", dims && dims->kv_channels ? dims->kv_channels
                                                                                                : static_cast<int64_t>(h / std::max(heads, 1.0))));
  double ffn = static_cast<double>(value_of(job, "model.ffn_hidden_size", static_cast<int64_t>(4 * h)));
  double vocab = static_cast<double>(value_of(job, "model.vocab_size", 32000));
  double experts = static_cast<double>(d.num_moe_experts.value.value_or(0));
  double moe_ffn = static_cast<double>(value_of(job, "model.moe_ffn_hidden_size", static_cast<int64_t>(ffn)));
  double shared = static_cast<double>(value_of(job, "model.moe_shared_expert_intermediate_size", 0));
  double topk = static_cast<double>(value_of(job, "model.moe_router_topk", 2));
  double dense_layers = dims ? dims->moe_dense_layers : 0;
  Setting glu = config_bool(job, "model.gated_linear_unit");
  double mats = glu.value.value_or(dims ? dims->gated_linear_unit : true) ? 3 : 2;
  Setting mla = config_bool(job, "model.multi_latent_attention");
  double attention = 0;
  if (mla.value.value_or(false) && dims) {
    double qk = dims->qk_head_dim + dims->qk_pos_emb_head_dim;
    double q = dims->q_lora_rank > 0 ? h * dims->q_lora_rank + dims->q_lora_rank * heads * qk : h * heads * qk;
    double kvp = h * (dims->kv_lora_rank + dims->qk_pos_emb_head_dim) +
                 dims->kv_lora_rank * heads * (dims->qk_head_dim + dims->v_head_dim);
    attention = q + kvp + heads * dims->v_head_dim * h;
  } else {
    attention = h * heads * kv + 2 * h * groups * kv + heads * kv * h;
  }
  bool tied = dims ? dims->tied_embeddings : false;
  double embeddings = vocab * h * (tied ? 1 : 2);
  ModelSize size;
  size.moe = experts > 0;
  if (!size.moe) {
    size.total_params = (layers * (attention + mats * h * ffn) + embeddings) / 1e9;
    size.active_params = size.total_params;
    return size;
  }
  double moe_layers = layers - dense_layers;
  double expert = mats * h * moe_ffn;
  double common = layers * attention + dense_layers * mats * h * ffn + moe_layers * (mats * h * shared + h * experts) +
                  embeddings;
  size.total_params = (common + moe_layers * experts * expert) / 1e9;
  size.active_params = (common + moe_layers * topk * expert) / 1e9;
  return size;
}

namespace {

struct Range {
  std::vector<int64_t> tp, pp, cp, ep;
};

struct MoeRow {
  const char* model;
  int64_t tp, pp, ep, cp;
};

// Section 1.2, per model (CP 2 is the Qwen3 235B row's "for pretrain").
constexpr MoeRow kMoeRows[] = {
    {"olmoe_7b", 1, 1, 8, 1},         {"moonlight_16b", 2, 1, 8, 1}, {"deepseek_v2", 1, 4, 32, 1},
    {"glm45_air_106b", 1, 4, 8, 1},   {"qwen3_30b_a3b", 4, 2, 4, 1}, {"glm45_355b", 2, 8, 16, 1},
    {"qwen3_235b_a22b", 4, 16, 8, 2}, {"deepseek_v3", 2, 16, 64, 1}, {"kimi_k2", 2, 16, 32, 1},
};

}  // namespace

GuidePoint guide_point(const Job& job, const Derived& d, const ModelSize& size, int64_t seq_length) {
  GuidePoint g;
  Range r;
  std::string model = job.recipe && job.recipe->model ? job.recipe->model : "";
  const MoeRow* row = nullptr;
  for (const MoeRow& m : kMoeRows) {
    if (size.moe && model == m.model) row = &m;
  }
  double b = size.total_params;
  if (row) {
    r = Range{{row->tp}, {row->pp}, {row->cp}, {row->ep}};
    g.band = fmt::format("{} (section 1.2): TP={} PP={} EP={}{}", model, row->tp, row->pp, row->ep,
                         row->cp > 1 ? fmt::format(" CP={}", row->cp) : "");
    g.source = "section 1.2, per-model MoE table (ETP 1)";
  } else if (size.moe) {
    if (b < 20) {
      r = Range{{1}, {1}, {1}, {8}};
      g.band = fmt::format("MoE under 20B ({:.0f}B): EP only (TP=1, PP=1)", b);
    } else if (b < 100) {
      r = Range{{1, 2}, {2, 4}, {1}, {8, 16}};
      g.band = fmt::format("MoE 20-100B ({:.0f}B): TP=1-2 + PP=2-4 + EP=8-16", b);
    } else if (b < 500) {
      r = Range{{2, 4}, {8, 16}, {1}, {8, 16, 32}};
      g.band = fmt::format("MoE 100-500B ({:.0f}B): TP=2-4 + PP=8-16 + EP=8-32", b);
    } else {
      r = Range{{2}, {16}, {1}, {32, 64}};
      g.band = fmt::format("MoE over 500B ({:.0f}B): TP=2 + PP=16 + EP=32-64", b);
    }
    g.source = "section 1.3, MoE size bands (ETP 1)";
  } else {
    if (b < 1) {
      r = Range{{1}, {1}, {1}, {1}};
      g.band = fmt::format("dense under 1B ({:.1f}B): DP only", b);
    } else if (b < 10) {
      r = Range{{2, 4}, {1}, {1}, {1}};
      g.band = fmt::format("dense 1-10B ({:.1f}B): TP=2-4 + DP", b);
    } else if (b < 70) {
      r = Range{{4, 8}, {2, 4}, {1}, {1}};
      g.band = fmt::format("dense 10-70B ({:.1f}B): TP=4-8 + PP=2-4 + DP", b);
    } else if (b < 175) {
      r = Range{{8}, {4, 8}, {1}, {1}};
      g.band = fmt::format("dense 70-175B ({:.1f}B): TP=8 + PP=4-8 + DP", b);
    } else {
      r = Range{{8}, {8, 16}, {2}, {1}};
      g.band = b < 500 ? fmt::format("dense 175-500B ({:.0f}B): TP=8 + PP=8-16 + CP=2 + DP", b)
                       : fmt::format("dense over 500B ({:.0f}B), beyond the table; its last row (175-500B): TP=8 + "
                                     "PP=8-16 + CP=2 + DP",
                                     b);
    }
    g.source = "section 1.1, dense size bands";
  }
  // Section 3: the sequence length adds SP (2K-8K) or CP.
  if (seq_length >= 32768) {
    r.cp = {4, 8};
    g.source += fmt::format("; section 3: seq {} -> CP=4-8", seq_length);
  } else if (seq_length >= 8192 && r.cp == std::vector<int64_t>{1}) {
    r.cp = {2};
    g.source += fmt::format("; section 3: seq {} -> CP=2", seq_length);
  } else if (seq_length >= 2048) {
    g.source += fmt::format("; section 3: seq {} -> SP", seq_length);
  }
  for (int64_t tp : r.tp) {
    for (int64_t pp : r.pp) {
      for (int64_t cp : r.cp) {
        for (int64_t ep : r.ep) {
          g.layouts.push_back(Candidate{.tp = tp, .pp = pp, .cp = cp, .ep = ep, .etp = 1, .sp = tp > 1, .chunk_layers = {}});
        }
      }
    }
  }
  if (model == "deepseek_v3") {
    g.notes.push_back("the guide's section-7 snippet \"DeepSeek-V3 671B on 256 GPUs\" (TP=2, PP=16, EP=64) needs at "
                      "least PP x lcm(TP x CP, EP x ETP) = 16 x 64 = 1024 GPUs; the 256-GPU Bridge recipe uses TP=2, "
                      "PP=8, EP=32");
  }
  (void)d;
  return g;
}

}  // namespace mblint
