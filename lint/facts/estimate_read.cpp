// Reading the memory model's inputs from a resolved job, with the defaults of
// the program that runs it: Megatron-LM's argument parser and validate_args
// (pretrain_gpt.py) for the Megatron-LM dialect, Megatron Bridge's providers
// and recipes otherwise. Every default taken is recorded as an assumption.
#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "lint/facts/estimate.h"
#include "lint/facts/estimate_dsa.h"
#include "lint/facts/estimate_dsv4.h"
#include "lint/facts/estimate_dsv4_stage.h"
#include "lint/facts/estimate_linear_attention.h"
#include "lint/facts/estimate_peft.h"
#include "lint/facts/estimate_t5.h"
#include "lint/model/catalog_fields.h"
#include "lint/model/hybrid_pattern.h"
#include "lint/model/mixed_precision_presets.h"
#include "lint/model/pipeline_layout.h"

namespace mblint {

namespace {

// What a catalogued model without dimensions still lacks (data/model_notes.csv,
// generated into model_notes_data.inc): said where its recipes are declined.
struct ModelNote {
  const char* key;      // the recipes' model key
  const char* hf_id;    // the checkpoint the recipes build from
  const char* missing;  // the key not sourced or the mechanism not modelled, and where it would come from
};

constexpr ModelNote kModelNotes[] = {
#include "lint/facts/model_notes_data.inc"
};

const ModelNote* find_model_note(std::string_view key) {
  for (const ModelNote& n : kModelNotes) {
    if (key == n.key) return &n;
  }
  return nullptr;
}

struct Reader {
  const Job& job;
  const Derived& derived;
  std::vector<std::string>& assumptions;
  const ModelDims* dims = nullptr;
  bool megatron_lm = false;
  int64_t pattern_layers = 0;  // a hybrid stack's decoder layers (its pattern's length), or T5's decoder layers

  std::optional<int64_t> integer(std::string_view path) const { return config_int(job, path).value; }
  std::optional<bool> flag(std::string_view path) const { return config_bool(job, path).value; }
  std::optional<std::string> text(std::string_view path) const { return config_text(job, path).value; }
  std::optional<double> number(std::string_view path) const { return as_number(config_node(job, path)); }

  std::set<std::string> strings(std::string_view path) const {
    std::set<std::string> out;
    const ConfigValue* node = config_node(job, path);
    if (!node) return out;
    if (node->kind == ValueKind::String) out.insert(node->text);
    if (node->is_list()) {
      for (const ConfigValue& item : node->items) {
        if (item.kind == ValueKind::String) out.insert(item.text);
      }
    }
    return out;
  }

  // The value, else the model catalog's, else `fallback` (recorded).
  // The job's value at `path` when it is positive, else the catalog's.
  int64_t positive_or(std::string_view path, int64_t recorded) const {
    auto v = integer(path);
    return v && *v > 0 ? *v : recorded;
  }

  int64_t shape(std::string_view path, int catalog, int64_t fallback, const std::string& why) const {
    if (auto v = integer(path)) return *v;
    if (dims && catalog > 0) return catalog;
    if (!why.empty()) assumptions.push_back(why);
    return fallback;
  }
};

// Whether the catalog records layer feature `token` for the recipe's model
// (ModelDims::text_extras, '+'-separated).
bool has_extra(const ModelDims* dims, std::string_view token) {
  std::string_view text = dims && dims->text_extras ? dims->text_extras : "";
  while (!text.empty()) {
    size_t end = std::min(text.find('+'), text.size());
    if (text.substr(0, end) == token) return true;
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return false;
}

// The text stack's layer features (estimate.cpp [GM]): the job's own
// settings where it writes them, else what the catalog records for its model.
void read_text_extras(const Reader& r, MemoryModel& m) {
  auto extra = [&](std::string_view token) { return has_extra(r.dims, token); };
  m.qk_norm = r.flag("model.qk_layernorm").value_or(extra("qk_norm"));
  m.post_norms = extra("post_norms");
  m.pre_norms = !extra("no_pre_norms");
  auto capped = [&](std::string_view path, std::string_view token) {
    if (auto cap = r.number(path)) return *cap > 0;
    const ConfigValue* node = config_node(r.job, path);
    return !(node && node->is_null()) && extra(token);
  };
  m.logit_softcap = capped("model.final_logit_softcapping", "logit_softcap");
  m.softcap_attention = capped("model.attn_logit_softcapping", "softcap_attention");
  m.gemma4_norms = extra("gemma4_norms");
  m.torch_norms = extra("torch_norms");
}

// Gemma 4's per-layer embeddings (ModelDims::per_layer_embedding,
// "vocab/dim"); the job's own per_layer_embed_vocab_size and
// per_layer_embed_dim (Gemma4DenseProvider's fields) win.
void read_per_layer_embedding(const Reader& r, MemoryModel& m) {
  std::vector<int64_t> catalog = slash_numbers(r.dims ? r.dims->per_layer_embedding : nullptr, 2);
  if (catalog.size() != 2) return;
  m.ple_vocab = r.positive_or("model.per_layer_embed_vocab_size", catalog[0]);
  m.ple_dim = r.positive_or("model.per_layer_embed_dim", catalog[1]);
}

// Gemma 4's full-attention layers (ModelDims::global_attention,
// "every/kv_channels/query_groups"): every every-th layer, 1-based, as
// Bridge's _is_local_attn_layer reads interleaved_attn_pattern (local,
// global) = (every - 1, 1). The job's own global_head_dim,
// num_global_key_value_heads and two-number interleaved_attn_pattern win.
void read_global_attention(const Reader& r, MemoryModel& m) {
  std::vector<int64_t> catalog = slash_numbers(r.dims ? r.dims->global_attention : nullptr, 3);
  if (catalog.size() != 3) return;
  int64_t local = catalog[0] - 1, global = 1;
  if (const ConfigValue* pattern = config_node(r.job, "model.interleaved_attn_pattern");
      pattern && pattern->is_list() && pattern->items.size() == 2) {
    auto a = as_int(&pattern->items[0]), b = as_int(&pattern->items[1]);
    if (a && b && *a >= 0 && *b > 0) local = *a, global = *b;
  }
  m.global_attention.assign(static_cast<size_t>(m.layers), false);
  for (int64_t i = 0; i < m.layers; ++i) m.global_attention[static_cast<size_t>(i)] = i % (local + global) >= local;
  m.global_kv_channels = r.positive_or("model.global_head_dim", catalog[1]);
  m.global_query_groups = r.positive_or("model.num_global_key_value_heads", catalog[2]);
}

// Which activation path a gated MLP takes (estimate.cpp [GM], dense_mlp and
// moe_mlp): MLP.forward and TEGroupedMLP.forward (Megatron-Core 2a75ac12c54b
// megatron/core/transformer/mlp.py, moe/experts.py) run Transformer Engine's
// activation module with use_te_activation_func, else the fused kernel with
// bias_activation_fusion, else the unfused glu. The flag is the job's, else
// what the recipe's model provider leaves (the catalog's column), else
// Megatron-Core's default, off. Megatron-LM turns it on with --swiglu unless
// --no-bias-swiglu-fusion (arguments.py, argument_utils.py d98e8a64).
void read_glu_path(const Reader& r, MemoryModel& m) {
  if (!m.swiglu) return;
  m.te_activation = r.flag("model.use_te_activation_func").value_or(false);
  std::optional<bool> fused = r.megatron_lm ? r.flag("model.bias_swiglu_fusion").value_or(true)
                                            : r.flag("model.bias_activation_fusion");
  if (!fused && r.dims && r.dims->bias_activation_fusion >= 0) fused = r.dims->bias_activation_fusion == 1;
  // An activation with no fused kernel (Gemma's fast_gelu) takes the unfused
  // path whatever the flag says.
  if (has_extra(r.dims, "unfused_glu")) fused = false;
  if (!fused.has_value()) {
    r.assumptions.push_back("bias_activation_fusion unknown: Megatron-Core's default (off: the unfused SwiGLU, "
                            "which keeps two more ffn-wide tensors per MLP) assumed");
  }
  m.unfused_glu = !m.te_activation && !fused.value_or(false);
}

// Megatron-LM pads the vocabulary to a multiple of
// make_vocab_size_divisible_by x TP (vocab_size_with_padding).
int64_t padded_vocab(int64_t vocab, int64_t divisible_by, int64_t tp) {
  int64_t multiple = std::max<int64_t>(1, divisible_by * tp);
  return (vocab + multiple - 1) / multiple * multiple;
}

// Megatron Bridge sizes the embedding in training/setup.py
// _validate_and_set_vocab_size (067f987df03b): with
// tokenizer.use_tokenizer_vocab_size, or without a model vocabulary, the
// tokenizer's, padded (should_pad_vocab); else the model's own, unpadded. A
// NullTokenizer's vocabulary is its vocab_size (Megatron-Core 2a75ac12c5
// tokenizers/text/libraries/null_tokenizer.py: the end-of-document token is
// the last id, not one more). Another tokenizer's size is read from its files
// at run time, and a recipe may write `tokenizer.vocab_size =
// cfg.model.vocab_size` (Gemma 4, DeepSeek V4): the model's vocabulary stands
// in for it, padded, as it did before.
std::optional<int64_t> bridge_vocab_size(const Reader& r, int64_t divisible, int64_t tp) {
  if (r.megatron_lm || r.job.dialect != Dialect::Bridge) return std::nullopt;
  std::optional<int64_t> tokenizer_vocab;
  if (r.text("tokenizer.tokenizer_type") == "NullTokenizer") tokenizer_vocab = r.integer("tokenizer.vocab_size");
  // The recipe layer writes the model's vocabulary where the catalog knows it.
  std::optional<int64_t> model_vocab = r.integer("model.vocab_size");
  if (r.flag("tokenizer.use_tokenizer_vocab_size").value_or(false) || !model_vocab) {
    if (tokenizer_vocab && *tokenizer_vocab > 0) return padded_vocab(*tokenizer_vocab, divisible, tp);
    if (model_vocab && *model_vocab > 0) return padded_vocab(*model_vocab, divisible, tp);  // the stand-in
    return std::nullopt;
  }
  if (r.flag("tokenizer.use_tokenizer_vocab_size").has_value() && *model_vocab > 0) return *model_vocab;
  return std::nullopt;
}

int64_t vocab_size(const Reader& r, int64_t tp) {
  int64_t divisible = r.integer("model.make_vocab_size_divisible_by").value_or(128);
  if (std::optional<int64_t> bridge = bridge_vocab_size(r, divisible, tp)) return *bridge;
  std::optional<std::string> tokenizer = r.text("tokenizer.tokenizer_type");
  std::optional<int64_t> given = r.integer("model.vocab_size");
  int64_t raw = 0;
  if (r.megatron_lm && tokenizer && *tokenizer == "NullTokenizer" && given) {
    // Megatron-LM sizes the vocabulary from its global tokenizer: up to core
    // 0.16 the legacy _NullTokenizer, which adds the end-of-document token
    // (vocab_size + 1); from 0.17 Megatron-Core's, which counts vocab_size
    // ids ("fully remove legacy tokenizer system", 3257093930).
    raw = r.job.versions.megatron_core < Version{0, 17, 0} ? *given + 1 : *given;
  } else if (r.megatron_lm && (!tokenizer || *tokenizer == "GPT2BPETokenizer")) {
    raw = 50257;  // pretrain_gpt.py's default tokenizer: GPT-2 BPE, 50,257 tokens
    if (!tokenizer) {
      r.assumptions.push_back("vocabulary: pretrain_gpt.py's default GPT2BPETokenizer (50,257 tokens)");
    }
  } else if (given) {
    raw = *given;
  } else if (r.dims && r.dims->vocab_size > 0) {
    raw = r.dims->vocab_size;
  } else {
    raw = 50257;
    r.assumptions.push_back("vocabulary unknown: GPT-2 BPE's 50,257 tokens assumed");
  }
  return padded_vocab(raw, divisible, tp);
}

std::vector<bool> moe_pattern(const Reader& r, int64_t layers, int64_t experts) {
  std::vector<bool> pattern;
  if (experts <= 0 || layers <= 0) return pattern;
  pattern.assign(static_cast<size_t>(layers), true);
  const ConfigValue* freq = config_node(r.job, "model.moe_layer_freq");
  if (freq && freq->is_list() && freq->items.size() == pattern.size()) {
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = as_int(&freq->items[i]).value_or(1) != 0;
  } else if (auto every = as_int(freq); every && *every > 0) {
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<int64_t>(i) % *every == 0;
  } else if (!freq && r.dims && r.dims->moe_dense_layers > 0) {
    for (int i = 0; i < r.dims->moe_dense_layers && i < layers; ++i) pattern[static_cast<size_t>(i)] = false;
  }
  return pattern;
}

void split_layers(const Reader& r, MemoryModel& m) {
  m.stage_layers.assign(static_cast<size_t>(m.pp), 0);
  m.stage_mtp.assign(static_cast<size_t>(m.pp), 0);
  if (r.derived.pipeline_layout) {
    std::optional<ExpandedLayout> layout = expand_layout(*r.derived.pipeline_layout);
    const std::vector<std::string>* stages = layout && layout->error.empty() ? &layout->stages : nullptr;
    if (stages && static_cast<int64_t>(stages->size()) % m.pp == 0) {
      for (size_t v = 0; v < stages->size(); ++v) {
        size_t stage = v % static_cast<size_t>(m.pp);
        m.stage_layers[stage] += static_cast<double>(std::count((*stages)[v].begin(), (*stages)[v].end(), 't'));
        m.stage_mtp[stage] += std::count((*stages)[v].begin(), (*stages)[v].end(), 'm');
      }
      m.vpp = std::max<int64_t>(1, static_cast<int64_t>(stages->size()) / m.pp);
      return;
    }
    r.assumptions.push_back("pipeline layout not understood: layers split evenly");
  }
  double layers = static_cast<double>(m.layers);
  auto first = r.derived.first_stage_layers.value;
  auto last = r.derived.last_stage_layers.value;
  if (m.pp > 1 && (first || last)) {
    int64_t ends = (first ? 1 : 0) + (last ? 1 : 0);
    double middle = layers - static_cast<double>(first.value_or(0) + last.value_or(0));
    double each = m.pp > ends ? middle / static_cast<double>(m.pp - ends) : 0;
    for (auto& n : m.stage_layers) n = each;
    if (first) m.stage_layers.front() = static_cast<double>(*first);
    if (last) m.stage_layers.back() = static_cast<double>(*last);
  } else if (m.pp > 1 && (r.derived.account_for_embedding.value.value_or(false) ||
                          r.derived.account_for_loss.value.value_or(false))) {
    // The embedding and the loss count as one layer each in the split.
    bool emb = r.derived.account_for_embedding.value.value_or(false);
    bool loss = r.derived.account_for_loss.value.value_or(false);
    double each = (layers + (emb ? 1 : 0) + (loss ? 1 : 0)) / static_cast<double>(m.pp);
    for (auto& n : m.stage_layers) n = each;
    if (emb) m.stage_layers.front() -= 1;
    if (loss) m.stage_layers.back() -= 1;
  } else {
    for (auto& n : m.stage_layers) n = layers / static_cast<double>(m.pp);
  }
  m.stage_mtp.back() = m.mtp_layers;  // [MC] sec. 3: MTP sits on the last stage
}

double dtype_bytes(const std::optional<std::string>& dtype, double fallback) {
  if (!dtype) return fallback;
  if (*dtype == "fp32" || *dtype == "float32") return 4;
  if (*dtype == "fp16" || *dtype == "bf16" || *dtype == "float16" || *dtype == "bfloat16") return 2;
  if (*dtype == "fp8" || *dtype == "uint8") return 1;
  return fallback;
}

// The mixed-precision preset a Bridge job runs (its mixed_precision name,
// else its recipe's), from the one preset table; nullptr for none or a
// Megatron-LM job.
const MixedPrecisionPreset* job_precision_preset(const Reader& r) {
  if (r.megatron_lm) return nullptr;
  TextSetting name = config_text(r.job, "mixed_precision");
  if (name.value) return find_mixed_precision_preset(*name.value, name.where.layer == Layer::Recipe);
  if (!name.present && r.job.recipe && r.job.recipe->precision && *r.job.recipe->precision) {
    return find_mixed_precision_preset(r.job.recipe->precision, true);
  }
  return nullptr;
}

// NVFP4 GEMMs and parameters, and the layers kept in BF16: a preset's fields
// (MixedPrecisionConfig.setup writes them over the model's), else the
// model's (Megatron-Core TransformerConfig: fp4, first_last_layers_bf16 with
// num_layers_at_start/end_in_bf16).
void read_fp4_and_edge_layers(const Reader& r, MemoryModel& m) {
  if (const MixedPrecisionPreset* preset = job_precision_preset(r)) {
    m.fp4 = !preset->fp4.empty();
    m.fp4_param = m.fp4 && preset->fp4_param_gather;
    m.bf16_edge_layers = preset->first_last_layers_bf16 ? preset->layers_at_start + preset->layers_at_end : 0;
    return;
  }
  std::optional<std::string> fp4 = r.text("model.fp4");
  m.fp4 = fp4 && !fp4->empty();
  m.fp4_param = m.fp4 && (r.flag("model.fp4_param").value_or(false) || r.flag("ddp.fp4_param_gather").value_or(false));
  if (r.flag("model.first_last_layers_bf16").value_or(false)) {
    m.bf16_edge_layers = std::max<int64_t>(0, r.integer("model.num_layers_at_start_in_bf16").value_or(0)) +
                         std::max<int64_t>(0, r.integer("model.num_layers_at_end_in_bf16").value_or(0));
  }
}

void read_precision(const Reader& r, MemoryModel& m) {
  bool bf16 = r.flag("model.bf16").value_or(false) || r.flag("optimizer.bf16").value_or(false);
  bool fp16 = r.flag("model.fp16").value_or(false) || r.flag("optimizer.fp16").value_or(false);
  if (!bf16 && !fp16 && !r.megatron_lm) {
    std::optional<std::string> preset = r.text("mixed_precision");
    std::string recipe_precision = r.job.recipe ? r.job.recipe->precision : "";
    bool fp32 = (preset && preset->find("32") != std::string::npos) || recipe_precision.find("32") != std::string::npos;
    if (!fp32) {
      bf16 = true;
      if (!preset && recipe_precision.empty()) r.assumptions.push_back("precision: bf16 mixed precision assumed");
    }
  }
  // A Megatron-LM job whose precision a wrapper takes from the checkpoint's
  // torch_dtype (ms-swift): not known here.
  if (!bf16 && !fp16 && r.megatron_lm && (!r.flag("model.bf16") || !r.flag("model.fp16"))) {
    bf16 = true;
    r.assumptions.push_back("precision: not known (the model's torch_dtype): bf16 mixed precision assumed");
  }
  m.param_bytes = bf16 || fp16 ? 2 : 4;
  std::optional<std::string> fp8 = r.text("model.fp8");
  m.fp8 = fp8.has_value() && !fp8->empty();
  if (!fp8 && r.job.recipe) {  // the recipe's precision preset: fp8_cs, fp8_mx, fp8_sc...
    std::string preset = r.text("mixed_precision").value_or(r.job.recipe->precision);
    m.fp8 = preset.find("fp8") != std::string::npos;
  }
  read_fp4_and_edge_layers(r, m);
  // TE keeps the quantized weights across micro-batches unless the model
  // disables the parameter transpose cache.
  m.fp8_weight_cache = (m.fp8 || m.fp4) && !r.flag("model.disable_parameter_transpose_cache").value_or(false);
  m.fp8_param = r.flag("model.fp8_param").value_or(false) || r.flag("ddp.fp8_param_gather").value_or(false);
  // validate_args: bf16 accumulates and reduces gradients in fp32 unless
  // --grad-reduce-in-bf16; fp16 keeps fp16 main grads unless asked. Bridge
  // has no such default: the recipe layer and MixedPrecisionConfig set it.
  std::optional<bool> fp32_grads = r.flag("ddp.grad_reduce_in_fp32");
  m.grad_bytes = m.param_bytes == 4 || fp32_grads.value_or(bf16) ? 4 : 2;
  m.optimizer = r.text("optimizer.optimizer").value_or("adam");
  m.master_bytes = 4;
  m.exp_avg_bytes = 4;
  m.exp_avg_sq_bytes = m.optimizer == "adam" ? 4 : 0;  // SGD and Muon keep one momentum
  m.precision_aware = r.flag("optimizer.use_precision_aware_optimizer").value_or(false);
  if (m.precision_aware) {
    m.master_bytes = dtype_bytes(r.text("optimizer.main_params_dtype"), 4);
    m.exp_avg_bytes = dtype_bytes(r.text("optimizer.exp_avg_dtype"), 4);
    if (m.optimizer == "adam") m.exp_avg_sq_bytes = dtype_bytes(r.text("optimizer.exp_avg_sq_dtype"), 4);
    // store_param_remainders (OptimizerConfig, default True; no Megatron-LM
    // flag): with bf16 parameters and an fp32 master weight, TE's FusedAdam
    // keeps only the 16 bits of the fp32 master the bf16 parameter lacks, an
    // int16 "master_param" (megatron/core/optimizer/__init__.py passes it to
    // TE's FusedAdam; distrib_optimizer.py allocates it as torch.int16;
    // TE fused_adam.py _initialize_state), Megatron-LM 2a75ac12c54b.
    if (bf16 && m.master_bytes == 4 && r.flag("optimizer.store_param_remainders").value_or(true)) {
      m.master_bytes = 2;
    }
    // Megatron-LM's validate_args derives the gradient buffer's dtype from
    // --main-grads-dtype; Megatron-Core's DDP (what Bridge builds) takes it
    // from ddp.grad_reduce_in_fp32 alone (param_and_grad_buffer.py,
    // group_params_for_buffers), and the optimizer does not read main_grads_dtype.
    if (r.megatron_lm) {
      m.grad_bytes = static_cast<int>(dtype_bytes(r.text("optimizer.main_grads_dtype"), m.grad_bytes));
    }
  }
  m.distributed_optimizer = r.flag("ddp.use_distributed_optimizer").value_or(false) ||
                            r.flag("optimizer.use_distributed_optimizer").value_or(false);
  m.optimizer_instances = std::max<int64_t>(1, r.integer("ddp.num_distributed_optimizer_instances").value_or(1));
  if (r.flag("ddp.use_megatron_fsdp").value_or(false) || r.flag("dist.use_megatron_fsdp").value_or(false)) {
    m.fsdp_sharding = r.text("ddp.data_parallel_sharding_strategy").value_or("no_shard");
    if (m.fsdp_sharding == "no_shard") m.fsdp_sharding.clear();
    m.fsdp_outer_optim = !m.fsdp_sharding.empty() && m.optimizer_instances > 1 &&
                         r.text("ddp.outer_dp_sharding_strategy").value_or("no_shard") == "optim";
    m.distributed_optimizer = true;  // --use-megatron-fsdp forces it on [MC] sec. 3
  }
  if (r.flag("optimizer.optimizer_cpu_offload").value_or(false)) {
    m.optimizer_offload = std::clamp(r.number("optimizer.optimizer_offload_fraction").value_or(1.0), 0.0, 1.0);
  }
  std::string load = r.text("checkpoint.load").value_or("");
  bool loads = !load.empty() && load != "null" && load != "None";
  m.resumes_optimizer = loads && !r.flag("checkpoint.finetune").value_or(false) &&
                        r.flag("checkpoint.load_optim").value_or(true) && m.distributed_optimizer &&
                        m.fsdp_sharding.empty() && m.optimizer_offload == 0 && m.optimizer == "adam";
  m.grad_accumulation_fusion = r.flag("model.gradient_accumulation_fusion").value_or(true);
  // Megatron-LM's --cross-entropy-loss-fusion is off by default; Bridge's
  // GPT providers turn it on.
  if (r.flag("model.cross_entropy_loss_fusion").value_or(!r.megatron_lm && !m.mla)) {
    m.cross_entropy = r.text("model.cross_entropy_fusion_impl").value_or("native");
  }
  if (r.flag("model.defer_embedding_wgrad_compute").value_or(false)) {
    int64_t limit = r.integer("model.wgrad_deferral_limit").value_or(0);
    m.deferred_wgrad = limit > 0 ? std::min(limit, m.microbatches) : m.microbatches;
  }
}

void read_activation_settings(const Reader& r, MemoryModel& m) {
  std::optional<std::string> impl = r.text("model.transformer_impl");
  std::optional<std::string> backend = r.text("model.attention_backend");
  m.unfused_attention = (impl && *impl == "local") || (backend && (*backend == "unfused" || *backend == "local"));
  // Transformer Engine falls back to its unfused attention when no fused
  // backend trains the head dimension (te_trains_unfused).
  if (te_trains_unfused(m.kv_channels) && !m.mla) m.unfused_attention = true;
  m.local_attention = impl && *impl == "local";
  // Its FusedScaleMaskSoftmax runs the fused kernel only with
  // masked_softmax_fusion (on by default in Megatron-LM's argparse,
  // --no-masked-softmax-fusion, and in Bridge's GPTModelProvider,
  // gpt_provider.py:204; Gemma 4 E4B's recipe turns it off); otherwise
  // PyTorch's softmax, which keeps an fp32 output only with
  // attention_softmax_in_fp32 (off in Megatron-LM's argparse,
  // --attention-softmax-in-fp32, and in GPTModelProvider, gpt_provider.py:161).
  // Megatron-LM 2a75ac12c54b megatron/core/fusions/fused_softmax.py
  // forward_torch_softmax.
  m.torch_softmax_fp32 = m.local_attention && !r.flag("model.masked_softmax_fusion").value_or(true) &&
                         r.flag("model.attention_softmax_in_fp32").value_or(false);
  // Megatron-LM and TransformerConfig default both dropouts to 0.1; Bridge's
  // model providers for current models set them to 0.
  double dropout_default = r.megatron_lm || !r.dims ? 0.1 : 0.0;
  m.hidden_dropout = r.number("model.hidden_dropout").value_or(dropout_default);
  m.attention_dropout = r.number("model.attention_dropout").value_or(dropout_default);
  // [GM] Gemma 2's core attention (Gemma2FlexDotProductAttention) runs
  // FlexAttention, which keeps what flash attention keeps, only without
  // attention dropout; with it, it falls back to the unfused attention.
  if (has_extra(r.dims, "softcap_attention") && m.softcap_attention && m.attention_dropout > 0) {
    m.unfused_attention = true;
  }
  // [GM] EXAONE 4's layer spec names Megatron-Core's DotProductAttention as
  // its core attention, whatever attention_backend says.
  if (has_extra(r.dims, "unfused_attention")) m.unfused_attention = true;
  m.recompute = r.text("model.recompute_granularity").value_or("");
  m.recompute_method = r.text("model.recompute_method").value_or("uniform");
  m.recompute_layers = r.integer("model.recompute_num_layers").value_or(1);
  m.recompute_modules = r.strings("model.recompute_modules");
  if (m.recompute == "selective" && !config_node(r.job, "model.recompute_modules")) {
    m.recompute_modules = {"core_attn"};  // the default module list
  }
  m.distribute_saved = r.flag("model.distribute_saved_activations").value_or(false);
  bool offloading = r.flag("model.cpu_offloading").value_or(r.megatron_lm);
  if (offloading) m.cpu_offload_layers = r.integer("model.cpu_offloading_num_layers").value_or(0);
  if (r.flag("model.fine_grained_activation_offloading").value_or(false)) {
    m.offload_modules = r.strings("model.offload_modules");
  }
}

// ---------------------------------------------------------------------------------------
// Hybrid (Mamba) stacks [MM in estimate.cpp]

// Whether every symbol of a pattern is one the estimate models; `why_not`
// names the first that is not.
bool known_symbols(std::string_view layers, std::string_view allowed, std::string* why_not) {
  for (char c : layers) {
    if (allowed.find(c) != std::string_view::npos) continue;
    if (why_not) {
      *why_not = fmt::format("hybrid (Mamba) models: layer symbol '{}' of the pattern is not modelled "
                             "(only M Mamba, * attention, - MLP, E MoE)", c);
    }
    return false;
  }
  return true;
}

// A unified pattern's parts [MM: hybrid_layer_allocation.parse_hybrid_pattern]:
// the main stack before the first '/', and one identical MTP pattern per
// prediction depth after it.
struct HybridPattern {
  std::vector<std::string> segments;  // the main stack's pipeline segments ('|' separated)
  std::string mtp;                    // one MTP depth's layers
  int64_t mtp_depths = 0;
};

// The pattern's parts (split_hybrid_pattern), each checked for the symbols
// the estimate models; nullopt with `why_not` otherwise.
std::optional<HybridPattern> parse_hybrid(const std::string& pattern, std::string* why_not) {
  HybridPatternParts parts = split_hybrid_pattern(pattern);
  HybridPattern out;
  for (const std::string& depth : parts.mtp) {
    if (out.mtp_depths > 0 && depth != out.mtp) {
      if (why_not) *why_not = "hybrid (Mamba) models: the pattern's MTP depths differ (Megatron-Core requires them identical)";
      return std::nullopt;
    }
    out.mtp = depth;
    ++out.mtp_depths;
  }
  for (const std::string& segment : parts.segments) {
    if (!known_symbols(segment, "M*-E", why_not)) return std::nullopt;
  }
  if (!known_symbols(out.mtp, "M*-E", why_not)) return std::nullopt;
  out.segments = std::move(parts.segments);
  return out;
}

// The layers of each pipeline stage [MM: select_pipeline_segment]: with '|'
// separators segment v·PP + rank goes to that rank (VPP = segments / PP);
// without, PP equal contiguous slices (or the uneven first/last stage sizes)
// and no VPP.
bool split_hybrid(const Reader& r, const std::vector<std::string>& segments, MemoryModel& m, std::string* why_not) {
  m.hybrid_stages.assign(static_cast<size_t>(m.pp), LayerKinds{});
  m.stage_layers.assign(static_cast<size_t>(m.pp), 0);
  m.stage_mtp.assign(static_cast<size_t>(m.pp), 0);
  if (segments.size() > 1) {
    if (segments.size() % static_cast<size_t>(m.pp) != 0) {
      if (why_not) *why_not = fmt::format("the hybrid pattern's {} pipeline segments do not divide over PP {}", segments.size(), m.pp);
      return false;
    }
    m.vpp = static_cast<int64_t>(segments.size()) / m.pp;
    std::string layers;
    std::vector<int64_t> counts;
    for (const std::string& segment : segments) {
      layers += segment;
      counts.push_back(static_cast<int64_t>(segment.size()));
    }
    place_hybrid_pieces(layers, counts, m.pp, m.hybrid_stages, m.stage_layers);
    return true;
  }
  if (m.vpp > 1) {
    if (why_not) {
      *why_not = r.megatron_lm
                     ? "a virtual pipeline with --hybrid-layer-pattern (Megatron-LM asserts the virtual-stage flags off: "
                       "hybrid-pipeline-segments)"
                     : "a virtual pipeline on a hybrid stack whose pattern has no '|' pipeline segments (Megatron-Core "
                       "raises; Megatron Bridge builds hybrid language models without a virtual pipeline: "
                       "hybrid-virtual-pipeline)";
    }
    return false;
  }
  const std::string& layers = segments.front();
  int64_t n = static_cast<int64_t>(layers.size());
  int64_t first = r.derived.first_stage_layers.value.value_or(-1);
  int64_t last = r.derived.last_stage_layers.value.value_or(-1);
  int64_t ends = (first >= 0 ? 1 : 0) + (last >= 0 ? 1 : 0);
  int64_t middle = m.pp > ends ? (n - std::max<int64_t>(0, first) - std::max<int64_t>(0, last)) / (m.pp - ends) : 0;
  std::vector<int64_t> counts;
  for (int64_t stage = 0; stage < m.pp; ++stage) {
    int64_t count = stage == 0 && first >= 0 ? first : stage == m.pp - 1 && last >= 0 ? last : middle;
    counts.push_back(m.pp == 1 ? n : count);
  }
  place_hybrid_pieces(layers, counts, m.pp, m.hybrid_stages, m.stage_layers);
  return true;
}

// A hybrid's multi-token prediction [MM: MultiTokenPredictionBlock, Bridge's
// HybridModelProvider.finalize]: the unified pattern's depths after '/', else
// mtp_num_layers depths of mtp_hybrid_override_pattern (the job's or the
// catalog's record of what the recipe sets). The block sits on the last
// pipeline stage (Megatron-Core asserts it); with mtp_use_repeated_layer one
// layer's weights serve every depth.
bool read_hybrid_mtp(const Reader& r, const HybridPattern& parsed, MemoryModel& m, std::string* why_not) {
  std::string layers = parsed.mtp;
  int64_t depths = parsed.mtp_depths;
  if (depths == 0 && m.mtp_layers > 0) {
    layers = r.text("model.mtp_hybrid_override_pattern")
                 .value_or(r.dims && r.dims->mtp_layer_pattern ? r.dims->mtp_layer_pattern : "");
    depths = m.mtp_layers;
    if (layers.empty()) {
      if (why_not) *why_not = "hybrid (Mamba) models: the multi-token prediction layers' pattern (mtp_hybrid_override_pattern) is not known";
      return false;
    }
    if (!known_symbols(layers, "M*-E", why_not)) return false;
  }
  m.mtp_layers = depths;
  m.mtp_kinds = count_kinds(layers);
  if (depths > 0) m.stage_mtp.back() = depths;
  return true;
}

// The catalog's record of a recipe model's Mamba mixer (ModelDims::mamba_mixer,
// "heads/head_dim/state/groups[/unfused]"): the provider's values, which
// are not TransformerConfig's defaults. Empty when not recorded.
std::vector<int64_t> catalog_mixer(const Reader& r, bool& unfused) {
  std::string_view text = r.dims && r.dims->mamba_mixer ? r.dims->mamba_mixer : "";
  unfused = text.find("/unfused") != std::string_view::npos;
  return slash_numbers(r.dims ? r.dims->mamba_mixer : nullptr, 4);
}

// The Mamba mixer's dims: the job's, else the catalog's record of the
// recipe's model, else Megatron-LM's parser defaults (TransformerConfig:
// state 128, head dim 64, 8 groups, heads from expand 2). A Bridge job whose
// provider's values the catalog does not record is declined: they are not
// the defaults. The unfused path (use_mamba_mem_eff_path off, the
// catalog's "/unfused") keeps other tensors for the backward pass (estimate.cpp).
bool read_mamba_dims(const Reader& r, MemoryModel& m, std::string* why_not) {
  bool unfused = false;
  std::vector<int64_t> catalog = catalog_mixer(r, unfused);
  m.mamba_unfused = !r.flag("model.use_mamba_mem_eff_path").value_or(!unfused);
  std::vector<std::string> missing;
  auto dim = [&](const char* path, size_t index, int64_t fallback) {
    if (auto v = r.integer(path); v && *v > 0) return *v;
    if (catalog.size() == 4) return catalog[index];
    if (!r.megatron_lm) missing.push_back(std::string(path).substr(6));
    return fallback;
  };
  m.mamba_heads = dim("model.mamba_num_heads", 0, 0);
  m.mamba_head_dim = dim("model.mamba_head_dim", 1, 64);
  m.mamba_state = dim("model.mamba_state_dim", 2, 128);
  m.mamba_groups = dim("model.mamba_num_groups", 3, 8);
  if (!missing.empty() && why_not) {
    *why_not = "hybrid (Mamba) models: the Mamba mixer's ";
    for (size_t i = 0; i < missing.size(); ++i) *why_not += fmt::format("{}{}", i ? ", " : "", missing[i]);
    *why_not += " are not known (the model provider sets them; mblint's catalog does not record them for this model)";
  }
  return missing.empty();
}

// What changes a DeepSeek V4 layer's saved tensors. The fused CSA kernels
// run when dsa_kernel_backend is not "none" (Megatron-LM dev d48bd6be0a85
// dsa_kernels.py:92-97), which the deprecated apply_dsa_kernel_fusion sets
// (transformer_config.py:1620-1632); a job that sets neither takes
// TransformerConfig's "none", the unfused path. The recipes set
// apply_dsa_kernel_fusion (data/recipe_facts.csv records it); they set
// use_fused_mhc from the GPU: Megatron Bridge 067f987df03b
// deepseek_v4_bridge.py:105-111 deepseek_v4_supports_blackwell_fused_kernels,
// compute capability 10 or more (Blackwell, Rubin).
Dsv4Run dsv4_run(const Reader& r, const MemoryModel& m) {
  Dsv4Run run;
  run.seq = m.seq;
  run.tp = std::max<int64_t>(1, r.derived.tensor_parallel.value.value_or(1));
  std::string backend = r.text("model.dsa_kernel_backend").value_or("none");
  run.fused_csa = backend != "none" || r.flag("model.apply_dsa_kernel_fusion").value_or(false);
  if (r.text("model.attention_backend").value_or("") == "unfused") run.fused_csa = false;
  // use_fused_mhc: TransformerConfig's default False; a recipe's runtime
  // value follows the GPU.
  std::string arch = r.derived.gpu && r.derived.gpu->architecture ? r.derived.gpu->architecture : "";
  bool blackwell = arch == "blackwell" || arch == "rubin";
  run.fused_mhc = r.flag("model.use_fused_mhc").value_or(r.job.recipe && blackwell);
  bool selective = r.text("model.recompute_granularity").value_or("") == "selective";
  std::set<std::string> modules = r.strings("model.recompute_modules");
  run.recompute_mhc = selective && modules.count("mhc") > 0;
  run.recompute_up_proj = selective && modules.count("mla_up_proj") > 0;
  run.mhc_block_layers = std::max<int64_t>(0, r.integer("model.mhc_recompute_layer_num").value_or(0));
  return run;
}

// DeepSeek sparse attention: the job's experimental_attention_variant "dsa"
// and dsa_indexer_* settings, else the catalog's record of the recipe's model
// (ModelDims::dsa_indexer, what the GLM-5 bridge maps from the HF config,
// with its dsa_indexer_loss_coeff 0.001). TransformerConfig leaves the
// indexer's heads, head dim and top-k unset (None) and its loss off. The
// gated delta net variant ("gated_delta_net", spelled "gdn" since
// Megatron-Core deprecated the long name) is read by
// estimate_linear_attention.cpp; "gdn2" is declined.
bool read_dsa(const Reader& r, MemoryModel& m, std::string* why_not) {
  std::vector<int64_t> catalog = slash_numbers(r.dims ? r.dims->dsa_indexer : nullptr, 5);
  bool recorded = catalog.size() == 5;
  std::optional<Dsv4Shape> dsv4 = dsv4_shape(r.dims);
  std::string fallback = recorded                               ? "dsa"
                         : catalog_has_gated_delta_net(r.dims) ? "gated_delta_net"
                         : dsv4                                 ? "dsv4_hybrid"
                                                                : "";
  std::string variant = r.text("model.experimental_attention_variant").value_or(fallback);
  if (variant.empty()) return true;
  if (variant == "gated_delta_net" || variant == "gdn") return read_gated_delta_net(r.job, r.dims, m, why_not);
  // DeepSeek V4: its layers and stages in estimate_dsv4_stage.cpp.
  if (variant == "dsv4_hybrid" && dsv4) {
    m.dsv4 = dsv4;
    m.dsv4_run = dsv4_run(r, m);
    // Megatron Bridge 067f987df03b deepseek_v4_bridge.py:503-504: the
    // provider's activation_func_clamp_value is the checkpoint's one
    // swiglu_limit, for every layer: the clamped SwiGLU (estimate.cpp [GLU]).
    m.clamped_glu = true;
    return true;
  }
  if (variant != "dsa") {
    if (why_not) *why_not = fmt::format("the experimental attention variant {} is not modelled", variant);
    return false;
  }
  if (!m.mla) {
    if (why_not) *why_not = "DeepSeek sparse attention without multi-latent attention is not modelled";
    return false;
  }
  std::vector<std::string> missing;
  auto dim = [&](const char* path, size_t index) -> int64_t {
    if (auto v = r.integer(path); v && *v > 0) return *v;
    if (recorded) return catalog[index];
    missing.push_back(std::string(path).substr(6));
    return 0;
  };
  m.dsa_heads = dim("model.dsa_indexer_n_heads", 0);
  m.dsa_head_dim = dim("model.dsa_indexer_head_dim", 1);
  m.dsa_topk = dim("model.dsa_indexer_topk", 2);
  if (!missing.empty()) {
    if (why_not) {
      *why_not = "DeepSeek sparse attention: the indexer's ";
      for (size_t i = 0; i < missing.size(); ++i) *why_not += fmt::format("{}{}", i ? ", " : "", missing[i]);
      *why_not += " are not known";
    }
    return false;
  }
  m.dsa_topk_freq = std::max<int64_t>(1, r.integer("model.dsa_indexer_topk_freq").value_or(recorded ? catalog[3] : 1));
  m.dsa_skip_offset = std::max<int64_t>(0, r.integer("model.dsa_indexer_skip_topk_offset").value_or(recorded ? catalog[4] : 0));
  m.dsa_indexer_loss = r.number("model.dsa_indexer_loss_coeff").value_or(recorded ? 0.001 : 0.0) > 0;
  m.dsa_indexer = dsa_indexer_layers(m.layers, m.dsa_skip_offset, m.dsa_topk_freq);
  return true;
}

bool read_shape(const Reader& r, MemoryModel& m, std::string* why_not) {
  const Derived& d = r.derived;
  const ModelDims* dims = r.dims;
  auto known = [&](const Quantity& q, int catalog) -> std::optional<int64_t> {
    if (q.known()) return *q;
    if (dims && catalog > 0) return catalog;
    return std::nullopt;
  };
  auto layers = r.pattern_layers > 0 ? std::optional<int64_t>(r.pattern_layers) : known(d.num_layers, dims ? dims->num_layers : 0);
  auto hidden = known(d.hidden_size, dims ? dims->hidden_size : 0);
  auto heads = known(d.num_attention_heads, dims ? dims->num_attention_heads : 0);
  auto seq = d.seq_length.value;
  // Known but 0 is a shape the job never set (model-shape-unset).
  std::vector<std::string> missing, zero;
  auto sort = [&](const std::optional<int64_t>& v, const char* name) {
    if (!v) missing.push_back(name);
    else if (*v <= 0) zero.push_back(name);
  };
  sort(layers, "num_layers");
  sort(hidden, "hidden_size");
  sort(heads, "num_attention_heads");
  sort(seq, "seq_length");
  if (!missing.empty() || !zero.empty()) {
    if (why_not) {
      if (missing.empty()) {
        *why_not = fmt::format("the model shape is not set: {} {} 0", join_names(zero), zero.size() == 1 ? "is" : "are");
      } else {
        *why_not = "the model shape is not known: ";
        for (size_t i = 0; i < missing.size(); ++i) *why_not += (i ? ", " : "") + missing[i];
      }
      const Recipe* recipe = r.job.recipe;
      if (recipe && !dims) {
        *why_not += fmt::format(" (the recipe's model {} has no dimensions in mblint's catalog, data/model_dims.csv",
                                recipe->model);
        const ModelNote* note = find_model_note(recipe->model);
        *why_not += note ? fmt::format("; for {}, {})", note->hf_id, note->missing) : std::string(")");
      }
    }
    return false;
  }
  constexpr int64_t kMaxDim = int64_t{1} << 30;
  if (*layers > 100000 || *hidden > kMaxDim || *heads > kMaxDim || *seq > kMaxDim) {
    if (why_not) *why_not = "the model shape is out of range";
    return false;
  }
  m.layers = *layers;
  m.hidden = *hidden;
  m.heads = *heads;
  m.seq = *seq;
  m.query_groups = d.num_query_groups.known() && *d.num_query_groups > 0 ? *d.num_query_groups
                   : dims && dims->num_query_groups > 0                  ? dims->num_query_groups
                                                                         : m.heads;
  m.kv_channels = r.shape("model.kv_channels", dims ? dims->kv_channels : 0, m.hidden / m.heads, "");
  m.swiglu = r.flag("model.gated_linear_unit").value_or(dims ? dims->gated_linear_unit : false);
  // Megatron-LM: ffn_hidden_size 4h, or int(8h/3/64)*64 with --swiglu.
  int64_t ffn_default = r.megatron_lm && m.swiglu ? (8 * m.hidden / 3) / 64 * 64 : 4 * m.hidden;
  m.ffn = r.shape("model.ffn_hidden_size", dims ? dims->ffn_hidden_size : 0, ffn_default, "");
  m.tied = r.flag("model.share_embeddings_and_output_weights").value_or(dims ? dims->tied_embeddings : true);
  m.rmsnorm = r.text("model.normalization").value_or(has_extra(dims, "rmsnorm") ? "RMSNorm" : "LayerNorm") == "RMSNorm";
  read_text_extras(r, m);
  read_global_attention(r, m);
  read_per_layer_embedding(r, m);
  read_glu_path(r, m);
  // A job's own activation_func_clamp_value clamps every layer.
  if (r.number("model.activation_func_clamp_value")) m.clamped_glu = true;
  if (has_extra(dims, "swiglu_clamp") && !m.clamped_glu) {
    // The checkpoint's swiglu_limits set activation_func_clamp_value per
    // layer; which layers clamp is not in the catalog, so every layer is
    // taken as clamped (the larger count).
    m.clamped_glu = true;
    if (m.unfused_glu) {
      r.assumptions.push_back("clamped SwiGLU: every layer assumed clamped (the checkpoint's per-layer swiglu_limits "
                              "are not in mblint's catalog), one more ffn-wide tensor per MLP and expert token");
    }
  }
  m.add_bias = r.flag("model.add_bias_linear").value_or(dims == nullptr);
  std::string positions = r.text("model.position_embedding_type").value_or(dims ? "rope" : "learned_absolute");
  m.positions = positions == "learned_absolute" ? m.seq : 0;
  m.mla = r.flag("model.multi_latent_attention").value_or(dims ? dims->multi_latent_attention : false);
  if (m.mla) {
    m.q_lora = r.shape("model.q_lora_rank", dims ? dims->q_lora_rank : 0, 0, "");
    m.kv_lora = r.shape("model.kv_lora_rank", dims ? dims->kv_lora_rank : 0, 32, "");
    m.qk_head = r.shape("model.qk_head_dim", dims ? dims->qk_head_dim : 0, 128, "");
    m.qk_rope = r.shape("model.qk_pos_emb_head_dim", dims ? dims->qk_pos_emb_head_dim : 0, 64, "");
    m.v_head = r.shape("model.v_head_dim", dims ? dims->v_head_dim : 0, 128, "");
  }
  m.experts = d.num_moe_experts.known() ? *d.num_moe_experts : dims ? dims->num_moe_experts : 0;
  m.experts = std::clamp<int64_t>(m.experts, 0, kMaxDim);
  if (m.experts > 0) {
    m.topk = r.shape("model.moe_router_topk", dims ? dims->moe_router_topk : 0, 2, "");
    m.moe_ffn = r.shape("model.moe_ffn_hidden_size", dims ? dims->moe_ffn_hidden_size : 0, m.ffn, "");
    m.shared_ffn = r.shape("model.moe_shared_expert_intermediate_size",
                           dims ? dims->moe_shared_expert_intermediate_size : 0, 0, "");
    m.moe_pattern = moe_pattern(r, m.layers, m.experts);
    m.capacity_factor = r.number("model.moe_expert_capacity_factor").value_or(0);
    m.pad_to_capacity = r.flag("model.moe_pad_expert_input_to_capacity").value_or(false);
    m.dispatcher = r.text("model.moe_token_dispatcher_type").value_or("allgather");
    m.moe_latent = std::clamp<int64_t>(r.shape("model.moe_latent_size", dims ? dims->moe_latent_size : 0, 0, ""), 0, kMaxDim);
  }
  m.mtp_layers = std::clamp<int64_t>(r.shape("model.mtp_num_layers", dims ? dims->mtp_num_layers : 0, 0, ""), 0, 1000);
  m.mtp_repeated = r.flag("model.mtp_use_repeated_layer").value_or(dims ? dims->mtp_repeated_layer : false);
  // A transformer's MTP layer as the catalog records it ("*-": EXAONE MoE's
  // dense MTP layer, Bridge's build_exaone_moe_layer_spec); a hybrid's comes
  // from its own pattern in read_hybrid_mtp.
  if (m.mtp_layers > 0 && dims && dims->mtp_layer_pattern && *dims->mtp_layer_pattern) {
    m.mtp_kinds = count_kinds(dims->mtp_layer_pattern);
  }
  return read_dsa(r, m, why_not);
}

bool read_parallel(const Reader& r, MemoryModel& m, std::string* why_not) {
  const Derived& d = r.derived;
  // A size the job sets to something mblint cannot know (`$TP` from the
  // environment, the value a misspelled flag meant): no layout to estimate.
  for (std::string_view path : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                                "model.context_parallel_size", "model.expert_model_parallel_size"}) {
    const ConfigValue* node = config_node(r.job, path);
    if (node && node->is_unknown()) {
      if (why_not) *why_not = fmt::format("{} is not known", path.substr(6));
      return false;
    }
  }
  auto size = [](const Quantity& q) { return q.known() && *q > 0 ? *q : int64_t{1}; };
  m.tp = size(d.tensor_parallel);
  m.pp = size(d.pipeline_parallel);
  m.cp = size(d.context_parallel);
  m.ep = size(d.expert_parallel);
  m.etp = size(d.expert_tensor_parallel);
  m.vpp = d.virtual_pipeline.known() && *d.virtual_pipeline > 1 ? *d.virtual_pipeline : 1;
  m.sp = d.sequence_parallel.value.value_or(false) && m.tp > 1;
  constexpr int64_t kMaxSize = 1 << 20;  // no real job comes near; keeps the arithmetic exact
  if (m.pp > 4096 || m.vpp > 4096 || m.tp > kMaxSize || m.cp > kMaxSize || m.ep > kMaxSize || m.etp > kMaxSize) {
    if (why_not) *why_not = "the parallel sizes are out of range";
    return false;
  }
  int64_t model_ranks = m.tp * m.pp * m.cp;
  const Recipe* recipe = r.job.recipe;
  if (d.data_parallel.known() && *d.data_parallel > 0) {
    m.dp = *d.data_parallel;
  } else if (!d.world_size.known() && recipe && recipe->num_gpus > 0 && recipe->num_gpus % model_ranks == 0) {
    m.dp = recipe->num_gpus / model_ranks;
    r.assumptions.push_back(fmt::format("world size unknown: the recipe's {} GPUs (data-parallel size {})",
                                        recipe->num_gpus, m.dp));
  } else if (d.world_size.known()) {
    // world-size-divisibility reports the layout; estimate one replica.
    m.dp = 1;
    r.assumptions.push_back(fmt::format("world size {} is not a multiple of TP×PP×CP = {}: data-parallel size 1 assumed",
                                        *d.world_size, model_ranks));
  } else {
    m.dp = 1;
    r.assumptions.push_back("world size unknown: data-parallel size 1 (give --nodes and --gpus-per-node)");
  }
  m.edp = d.expert_data_parallel.known() && *d.expert_data_parallel > 0
              ? *d.expert_data_parallel
              : std::max<int64_t>(1, m.dp * m.tp * m.cp / (m.ep * m.etp));
  m.micro_batch = d.micro_batch_size.known() && *d.micro_batch_size > 0 ? std::min<int64_t>(*d.micro_batch_size, kMaxSize) : 1;
  if (!d.micro_batch_size.known()) r.assumptions.push_back("micro_batch_size unknown: 1 assumed");
  if (d.microbatches.known() && *d.microbatches > 0) {
    m.microbatches = *d.microbatches;
  } else if (d.global_batch_size.known() && *d.global_batch_size % (m.micro_batch * m.dp) == 0 &&
             *d.global_batch_size >= m.micro_batch * m.dp) {
    m.microbatches = *d.global_batch_size / (m.micro_batch * m.dp);
  } else {
    m.microbatches = m.pp;
    r.assumptions.push_back(fmt::format("microbatches per step unknown: {} (PP) assumed", m.pp));
  }
  m.microbatches = std::min<int64_t>(m.microbatches, kMaxSize);
  m.microbatch_group = std::clamp<int64_t>(r.integer("model.microbatch_group_size_per_vp_stage").value_or(0), 0, kMaxSize);
  return true;
}

}  // namespace

LayerKinds count_kinds(std::string_view layers) {
  LayerKinds k;
  for (char c : layers) {
    if (c == 'M') k.mamba += 1;
    if (c == '*') k.attention += 1;
    if (c == '-') k.mlp += 1;
    if (c == 'E') k.moe += 1;
  }
  return k;
}

LayerKinds& operator+=(LayerKinds& a, const LayerKinds& b) {
  a.mamba += b.mamba;
  a.attention += b.attention;
  a.mlp += b.mlp;
  a.moe += b.moe;
  return a;
}

void place_hybrid_pieces(std::string_view layers, const std::vector<int64_t>& counts, int64_t pp,
                         std::vector<LayerKinds>& kinds, std::vector<double>& stage_layers) {
  kinds.assign(static_cast<size_t>(pp), LayerKinds{});
  stage_layers.assign(static_cast<size_t>(pp), 0);
  int64_t n = static_cast<int64_t>(layers.size()), offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t count = std::clamp<int64_t>(counts[i], 0, n - offset);
    size_t stage = i % static_cast<size_t>(pp);
    kinds[stage] += count_kinds(layers.substr(static_cast<size_t>(offset), static_cast<size_t>(count)));
    stage_layers[stage] += static_cast<double>(count);
    offset += count;
  }
}

std::optional<MemoryModel> read_memory_model(const Job& job, const Derived& derived,
                                             std::vector<std::string>& assumptions, std::string* why_not) {
  Reader r{job, derived, assumptions};
  // T5 has no --num-layers: the decoder's layers are the language model's
  // (estimate_t5.cpp), set here as a pattern's layer count would be.
  std::optional<T5Layers> t5 = t5_layers(job);
  if (t5 && t5->decoder > 0) r.pattern_layers = t5->decoder;
  r.dims = job.recipe ? job.recipe->dims : nullptr;
  r.megatron_lm = job.dialect == Dialect::MegatronLM;
  MemoryModel m;
  // --hybrid-layer-pattern (Megatron-Core 0.17+), --hybrid-override-pattern (earlier), or the recipe's model.
  std::optional<std::string> pattern;
  if (std::optional<HybridPatternSetting> hybrid = hybrid_layer_pattern(job)) pattern = hybrid->text;
  std::optional<HybridPattern> parsed;
  if (!pattern && r.flag("model.is_hybrid_model").value_or(false)) {
    if (why_not) *why_not = "hybrid (Mamba) models: a stack built from layer ratios without a pattern is not modelled";
    return std::nullopt;
  }
  if (pattern) {
    parsed = parse_hybrid(*pattern, why_not);
    if (!parsed) return std::nullopt;
    for (const std::string& segment : parsed->segments) r.pattern_layers += static_cast<int64_t>(segment.size());
  }
  if (!read_shape(r, m, why_not) || !read_parallel(r, m, why_not)) return std::nullopt;
  if (m.dsv4 && !dsv4_supported(m, why_not)) return std::nullopt;
  if (parsed && (!read_mamba_dims(r, m, why_not) || !split_hybrid(r, parsed->segments, m, why_not) ||
                 !read_hybrid_mtp(r, *parsed, m, why_not))) {
    return std::nullopt;
  }
  if (parsed) m.hybrid_segments = parsed->segments;
  // PEFT: a `peft` section (or a PEFT recipe) trains LoRA adapters only.
  const ConfigValue* peft = config_node(job, "peft");
  bool peft_recipe = job.recipe && std::string_view(job.recipe->task) == "peft";
  if ((peft && !peft->is_null()) || (peft_recipe && !(peft && peft->is_null()))) {
    m.lora_rank = r.integer("peft.dim").value_or(32);
    if (!r.integer("peft.dim")) {
      assumptions.push_back(m.gdn_pattern.empty() ? "PEFT: LoRA rank 32 (LoRA's default dim) on every linear layer"
                                                  : "PEFT: LoRA rank 32 (LoRA's default dim) on its target modules");
    }
    // On a GDN model the targets decide which blocks get adapters (Bridge's
    // defaults match no GDN projection): estimate_peft.cpp.
    if (!m.gdn_pattern.empty() && !read_lora_targets(job, m.lora_targets, why_not)) return std::nullopt;
  }
  const char* dit = r.dims && r.dims->dit && *r.dims->dit ? r.dims->dit : nullptr;
  size_t assumed_before = r.assumptions.size();
  m.vocab = dit ? 0 : vocab_size(r, m.tp);
  m.vocab_assumed = r.assumptions.size() > assumed_before;
  read_precision(r, m);
  read_activation_settings(r, m);
  // A diffusion transformer (estimate_dit.cpp) sets its blocks and tokens
  // before the blocks are split over the stages.
  if (dit) {
    std::optional<DitLoad> load = read_dit(job, dit, m, assumptions, why_not);
    if (!load) return std::nullopt;
    m.dit = std::move(*load);
  }
  // pretrain_vlm.py's LLaVA sets the language model's sequence and layers
  // (estimate_llava.cpp) before they are split over the stages.
  std::optional<EncoderLoad> encoder =
      t5 ? read_t5(job, m, assumptions, why_not) : read_llava(job, m, assumptions, why_not);
  if (!encoder) return std::nullopt;
  m.encoder = *encoder;
  read_uncounted(job, m);
  if (!pattern) split_layers(r, m);
  if (m.dit.present) dit_stages(m, m.dit);
  // DeepSeek V4 from a Bridge recipe: Bridge writes its own even layout
  // (estimate_dsv4_stage.h) unless the job writes one.
  if (m.dsv4 && !r.megatron_lm && !derived.pipeline_layout && !derived.first_stage_layers.value &&
      !derived.last_stage_layers.value) {
    dsv4_bridge_split(m);
  }
  std::optional<VisionLoad> vision = read_vision_load(job, m, why_not);
  if (!vision) return std::nullopt;
  m.vision = *vision;
  if (m.vision.dims) assumptions.push_back(vision_assumption(m.vision));
  if (derived.gpu) {
    m.gpu = derived.gpu->display;
    m.capacity_gib = derived.gpu->memory_gib;
  }
  return m;
}

std::optional<MemoryEstimate> estimate_memory(const Job& job, const Derived& derived, std::string* why_not) {
  std::vector<std::string> assumptions;
  auto model = read_memory_model(job, derived, assumptions, why_not);
  if (!model) return std::nullopt;
  MemoryEstimate e = estimate_model(*model);
  e.assumptions = std::move(assumptions);
  e.uncounted = model->uncounted;
  e.vocab_assumed = model->vocab_assumed;
  return e;
}

// read_memory_model states the tower's bound in one line (vision_assumption)
// exactly when the estimate has a tower.
size_t activation_only_assumptions(const MemoryEstimate& e) { return e.vision ? 1 : 0; }

}  // namespace mblint
