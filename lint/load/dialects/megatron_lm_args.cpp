#include "lint/base/input_rules.h"
#include "lint/base/text.h"
#include "lint/load/dialects/megatron_lm_args.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cctype>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "lint/base/python_number.h"
#include "lint/model/hybrid_pattern.h"
#include "lint/model/pipeline_layout.h"

namespace mblint {

namespace {

// --- the flag table ---------------------------------------------------------------

constexpr MegatronLmFlag value(std::string_view flag, ArgType type, std::string_view path,
                               std::string_view also = {}) {
  return MegatronLmFlag{flag, type, path, also, {}, {}};
}

constexpr MegatronLmFlag choice(std::string_view flag, std::string_view path, std::string_view choices) {
  return MegatronLmFlag{flag, ArgType::String, path, {}, {}, choices};
}

// A flag without a value: store_true ("true"), store_false ("false") or a
// constant it stands for.
constexpr MegatronLmFlag set(std::string_view flag, std::string_view path, std::string_view constant = "true",
                             std::string_view also = {}) {
  return MegatronLmFlag{flag, ArgType::Flag, path, also, constant, {}};
}

using T = ArgType;

// Flags and types as Megatron-LM's parser declares them at d98e8a64. The
// paths are Megatron Bridge ConfigContainer fields.
constexpr std::array kFlags = {
    // Parallel layout.
    value("--tensor-model-parallel-size", T::Int, "model.tensor_model_parallel_size"),
    value("--pipeline-model-parallel-size", T::Int, "model.pipeline_model_parallel_size"),
    value("--context-parallel-size", T::Int, "model.context_parallel_size"),
    value("--expert-model-parallel-size", T::Int, "model.expert_model_parallel_size"),
    value("--expert-tensor-parallel-size", T::Int, "model.expert_tensor_parallel_size"),
    set("--sequence-parallel", "model.sequence_parallel"),
    value("--num-layers-per-virtual-pipeline-stage", T::Int, ""),  // VPP = (L / PP) / this
    value("--num-virtual-stages-per-pipeline-rank", T::Int, ""),   // VPP itself
    value("--pipeline-model-parallel-layout", T::String, "model.pipeline_model_parallel_layout"),
    value("--decoder-first-pipeline-num-layers", T::Int, "model.num_layers_in_first_pipeline_stage"),
    value("--decoder-last-pipeline-num-layers", T::Int, "model.num_layers_in_last_pipeline_stage"),
    set("--account-for-embedding-in-pipeline-split", "model.account_for_embedding_in_pipeline_split"),
    set("--account-for-loss-in-pipeline-split", "model.account_for_loss_in_pipeline_split"),
    value("--hierarchical-context-parallel-sizes", T::IntList, "model.hierarchical_context_parallel_sizes"),
    value("--cp-comm-type", T::StringList, "model.cp_comm_type"),
    set("--hybrid-context-parallel", "model.hybrid_context_parallel"),
    value("--max-seqlen-per-dp-cp-rank", T::Int, "model.max_seqlen_per_dp_cp_rank"),
    set("--use-tp-pp-dp-mapping", "dist.use_tp_pp_dp_mapping"),
    value("--num-distributed-optimizer-instances", T::Int, "ddp.num_distributed_optimizer_instances"),
    value("--tensor-parallel-num-weight-shards", T::Int, "model.tensor_parallel_num_weight_shards"),
    value("--expert-tensor-parallel-num-weight-shards", T::Int, "model.expert_tensor_parallel_num_weight_shards"),
    choice("--pipeline-model-parallel-comm-backend", "model.pipeline_model_parallel_comm_backend", "nccl|ucc"),
    value("--microbatch-group-size-per-virtual-pipeline-stage", T::Int, "model.microbatch_group_size_per_vp_stage"),
    set("--no-overlap-p2p-communication", "model.overlap_p2p_comm", "false"),
    set("--overlap-p2p-communication-warmup-flush", "model.overlap_p2p_comm_warmup_flush"),
    set("--use-ring-exchange-p2p", "model.use_ring_exchange_p2p"),

    // Model shape.
    value("--num-layers", T::Int, "model.num_layers"),
    value("--encoder-num-layers", T::Int, ""),  // T5: no single layer count (see kEstimateFlags)
    value("--decoder-num-layers", T::Int, ""),
    value("--hidden-size", T::Int, "model.hidden_size"),
    value("--ffn-hidden-size", T::Int, "model.ffn_hidden_size"),
    value("--num-attention-heads", T::Int, "model.num_attention_heads"),
    set("--group-query-attention", ""),  // makes --num-query-groups count
    value("--num-query-groups", T::Int, "model.num_query_groups"),
    value("--kv-channels", T::Int, "model.kv_channels"),
    value("--seq-length", T::Int, "model.seq_length", "dataset.seq_length"),
    value("--encoder-seq-length", T::Int, ""),  // stands for --seq-length when that is absent
    value("--decoder-seq-length", T::Int, ""),
    value("--max-position-embeddings", T::Int, ""),  // Bridge's GPT providers have no such field (see kEstimateFlags)
    set("--swiglu", "model.gated_linear_unit"),
    set("--untie-embeddings-and-output-weights", "model.share_embeddings_and_output_weights", "false"),
    value("--vocab-size", T::Int, "model.vocab_size"),
    value("--tokenizer-type", T::String, "tokenizer.tokenizer_type"),
    value("--attention-dropout", T::Float, "model.attention_dropout"),
    value("--hidden-dropout", T::Float, "model.hidden_dropout"),
    set("--cross-entropy-loss-fusion", "model.cross_entropy_loss_fusion"),
    choice("--cross-entropy-fusion-impl", "model.cross_entropy_fusion_impl", "native|te"),
    value("--padded-vocab-size", T::Int, ""),
    value("--make-vocab-size-divisible-by", T::Int, "model.make_vocab_size_divisible_by"),
    choice("--position-embedding-type", "model.position_embedding_type",
           "learned_absolute|rope|yarn|mrope|relative|none"),
    set("--use-rotary-position-embeddings", "model.position_embedding_type", "rope"),
    choice("--normalization", "model.normalization", "LayerNorm|RMSNorm"),
    set("--apply-layernorm-1p", "model.layernorm_zero_centered_gamma"),
    set("--disable-bias-linear", "model.add_bias_linear", "false"),
    set("--add-qkv-bias", "model.add_qkv_bias"),
    set("--qk-layernorm", "model.qk_layernorm"),
    set("--multi-latent-attention", "model.multi_latent_attention"),
    value("--q-lora-rank", T::Int, "model.q_lora_rank"),
    value("--kv-lora-rank", T::Int, "model.kv_lora_rank"),
    value("--qk-head-dim", T::Int, "model.qk_head_dim"),
    value("--qk-pos-emb-head-dim", T::Int, "model.qk_pos_emb_head_dim"),
    value("--v-head-dim", T::Int, "model.v_head_dim"),
    choice("--experimental-attention-variant", "model.experimental_attention_variant",
           "gdn|gdn2|dsa|gated_delta_net"),
    value("--linear-num-key-heads", T::Int, "model.linear_num_key_heads"),
    value("--linear-num-value-heads", T::Int, "model.linear_num_value_heads"),
    value("--hybrid-layer-pattern", T::String, "model.hybrid_layer_pattern"),
    value("--hybrid-override-pattern", T::String, "model.hybrid_override_pattern"),
    set("--is-hybrid-model", "model.is_hybrid_model"),
    value("--mamba-num-heads", T::Int, "model.mamba_num_heads"),
    value("--mamba-num-groups", T::Int, "model.mamba_num_groups"),
    value("--mamba-head-dim", T::Int, "model.mamba_head_dim"),
    value("--mamba-state-dim", T::Int, "model.mamba_state_dim"),
    set("--disable-mamba-mem-eff-path", "model.use_mamba_mem_eff_path", "false"),
    choice("--transformer-impl", "model.transformer_impl", "local|transformer_engine|inference_optimized"),
    choice("--attention-backend", "model.attention_backend", "flash|fused|unfused|local|auto"),

    // Batch and schedule.
    value("--micro-batch-size", T::Int, "train.micro_batch_size"),
    value("--global-batch-size", T::Int, "train.global_batch_size"),
    value("--rampup-batch-size", T::IntList, "train.rampup_batch_size"),
    value("--step-batch-size-schedule", T::String, "train.step_batch_size_schedule"),
    set("--decrease-batch-size-if-needed", "train.decrease_batch_size_if_needed"),
    value("--train-iters", T::Int, "train.train_iters"),
    value("--train-samples", T::Int, "train.train_samples"),
    choice("--empty-unused-memory-level", "train.empty_unused_memory_level", "0|1|2"),
    set("--calculate-per-token-loss", "model.calculate_per_token_loss"),

    // Mixture of experts and multi-token prediction.
    value("--num-experts", T::Int, "model.num_moe_experts"),
    value("--moe-layer-freq", T::LayerFreq, "model.moe_layer_freq"),
    value("--moe-router-topk", T::Int, "model.moe_router_topk"),
    value("--moe-ffn-hidden-size", T::Int, "model.moe_ffn_hidden_size"),
    value("--moe-shared-expert-intermediate-size", T::Int, "model.moe_shared_expert_intermediate_size"),
    set("--moe-shared-expert-overlap", "model.moe_shared_expert_overlap"),
    choice("--moe-token-dispatcher-type", "model.moe_token_dispatcher_type", "allgather|alltoall|flex"),
    choice("--moe-flex-dispatcher-backend", "model.moe_flex_dispatcher_backend", "deepep|hybridep|ncclep"),
    set("--moe-enable-deepep", "model.moe_enable_deepep"),
    set("--moe-grouped-gemm", "model.moe_grouped_gemm"),
    value("--moe-router-load-balancing-type", T::StringList, "model.moe_router_load_balancing_type"),
    value("--moe-expert-capacity-factor", T::Float, "model.moe_expert_capacity_factor"),
    set("--moe-pad-expert-input-to-capacity", "model.moe_pad_expert_input_to_capacity"),
    value("--moe-router-num-groups", T::Int, "model.moe_router_num_groups"),
    value("--moe-router-group-topk", T::Int, "model.moe_router_group_topk"),
    set("--moe-router-pre-softmax", "model.moe_router_pre_softmax"),
    choice("--moe-router-score-function", "model.moe_router_score_function", "softmax|sigmoid|sqrtsoftplus"),
    choice("--moe-router-dtype", "model.moe_router_dtype", "fp32|fp64"),
    set("--moe-router-enable-expert-bias", "model.moe_router_enable_expert_bias"),
    value("--moe-router-topk-scaling-factor", T::Float, "model.moe_router_topk_scaling_factor"),
    set("--moe-router-padding-for-quantization", "model.moe_router_padding_for_quantization"),
    set("--moe-permute-fusion", "model.moe_permute_fusion"),
    set("--moe-layer-recompute", "model.moe_layer_recompute"),
    value("--moe-latent-size", T::Int, "model.moe_latent_size"),
    set("--overlap-moe-expert-parallel-comm", "model.overlap_moe_expert_parallel_comm"),
    value("--mtp-num-layers", T::Int, "model.mtp_num_layers"),
    set("--mtp-use-repeated-layer", "model.mtp_use_repeated_layer"),

    // Activation recompute and offloading.
    choice("--recompute-granularity", "model.recompute_granularity", "full|selective"),
    choice("--recompute-method", "model.recompute_method", "uniform|block"),
    value("--recompute-num-layers", T::Int, "model.recompute_num_layers"),
    value("--recompute-modules", T::StringList, "model.recompute_modules"),
    set("--recompute-activations", ""),  // validate_args: granularity "selective", whatever else says
    set("--distribute-saved-activations", "model.distribute_saved_activations"),
    set("--fine-grained-activation-offloading", "model.fine_grained_activation_offloading"),
    value("--offload-modules", T::StringList, "model.offload_modules"),
    value("--cpu-offloading-num-layers", T::Int, "model.cpu_offloading_num_layers"),

    // Precision.
    set("--bf16", "model.bf16", "true", "optimizer.bf16"),
    set("--fp16", "model.fp16", "true", "optimizer.fp16"),
    choice("--fp8-format", "model.fp8", "e4m3|hybrid"),
    choice("--fp8-recipe", "model.fp8_recipe", "tensorwise|delayed|mxfp8|blockwise|custom"),
    set("--fp8-param-gather", "ddp.fp8_param_gather", "true", "model.fp8_param"),
    value("--fp8-amax-history-len", T::Int, "model.fp8_amax_history_len"),
    choice("--fp8-amax-compute-algo", "model.fp8_amax_compute_algo", "most_recent|max"),
    choice("--fp4-format", "model.fp4", "e2m1"),
    choice("--fp4-recipe", "model.fp4_recipe", "nvfp4|custom"),
    set("--fp4-param-gather", "ddp.fp4_param_gather", "true", "model.fp4_param"),
    set("--first-last-layers-bf16", "model.first_last_layers_bf16"),
    value("--num-layers-at-start-in-bf16", T::Int, "model.num_layers_at_start_in_bf16"),
    value("--num-layers-at-end-in-bf16", T::Int, "model.num_layers_at_end_in_bf16"),
    set("--accumulate-allreduce-grads-in-fp32", "ddp.grad_reduce_in_fp32"),
    set("--grad-reduce-in-bf16", "ddp.grad_reduce_in_fp32", "false"),
    value("--loss-scale", T::Float, "optimizer.loss_scale"),

    // Optimizer, data-parallel sharding and communication overlap.
    choice("--optimizer", "optimizer.optimizer", "adam|sgd|muon|dist_muon|lion|soap|adaptive_muon"),
    set("--use-distributed-optimizer", "ddp.use_distributed_optimizer", "true", "optimizer.use_distributed_optimizer"),
    set("--overlap-grad-reduce", "ddp.overlap_grad_reduce"),
    set("--overlap-param-gather", "ddp.overlap_param_gather"),
    set("--overlap-param-gather-with-optimizer-step", "optimizer.overlap_param_gather_with_optimizer_step"),
    set("--no-align-param-gather", "ddp.align_param_gather", "false"),
    value("--ddp-num-buckets", T::Int, "ddp.num_buckets"),
    value("--ddp-bucket-size", T::Int, "ddp.bucket_size"),
    set("--ddp-average-in-collective", "ddp.average_in_collective"),
    set("--ddp-pad-buckets-for-high-nccl-busbw", "ddp.pad_buckets_for_high_nccl_busbw"),
    set("--use-nccl-ub", "ddp.nccl_ub"),
    set("--use-torch-fsdp2", "dist.use_torch_fsdp2"),
    set("--use-megatron-fsdp", "dist.use_megatron_fsdp", "true", "ddp.use_megatron_fsdp"),
    choice("--data-parallel-sharding-strategy", "ddp.data_parallel_sharding_strategy",
           "no_shard|optim|optim_grads|optim_grads_params"),
    choice("--outer-dp-sharding-strategy", "ddp.outer_dp_sharding_strategy", "no_shard|optim"),
    set("--use-precision-aware-optimizer", "optimizer.use_precision_aware_optimizer"),
    choice("--main-grads-dtype", "optimizer.main_grads_dtype", "fp32|bf16"),
    choice("--main-params-dtype", "optimizer.main_params_dtype", "fp32|fp16"),
    choice("--exp-avg-dtype", "optimizer.exp_avg_dtype", "fp32|fp16|bf16|fp8"),
    choice("--exp-avg-sq-dtype", "optimizer.exp_avg_sq_dtype", "fp32|fp16|bf16|fp8"),
    set("--optimizer-cpu-offload", "optimizer.optimizer_cpu_offload"),
    value("--optimizer-offload-fraction", T::Float, "optimizer.optimizer_offload_fraction"),
    set("--tp-comm-overlap", "model.tp_comm_overlap"),
    value("--tp-comm-overlap-cfg", T::String, "model.tp_comm_overlap_cfg"),
    set("--defer-embedding-wgrad-compute", "model.defer_embedding_wgrad_compute"),
    value("--wgrad-deferral-limit", T::Int, "model.wgrad_deferral_limit"),
    set("--delay-wgrad-compute", "model.delay_wgrad_compute"),
    set("--no-gradient-accumulation-fusion", "model.gradient_accumulation_fusion", "false"),
    choice("--cuda-graph-impl", "model.cuda_graph_impl", "none|local|transformer_engine|full_iteration"),
    set("--enable-cuda-graph", "model.enable_cuda_graph"),
    set("--deterministic-mode", "model.deterministic_mode"),

    // Distributed set-up and checkpoints.
    choice("--distributed-backend", "dist.distributed_backend", "nccl|gloo"),
    value("--distributed-timeout-minutes", T::Int, "dist.distributed_timeout_minutes"),
    set("--use-checkpoint-args", "checkpoint.use_checkpoint_args"),
    set("--use-mp-args-from-checkpoint-args", "checkpoint.use_mp_args_from_checkpoint_args"),
    value("--load", T::String, "checkpoint.load"),
    value("--save", T::String, "checkpoint.save"),
    value("--save-interval", T::Int, "checkpoint.save_interval"),
    value("--persistent-save-interval", T::Int, "checkpoint.save_interval"),
    value("--pretrained-checkpoint", T::String, "checkpoint.pretrained_checkpoint"),
    set("--finetune", "checkpoint.finetune"),
    choice("--ckpt-format", "checkpoint.ckpt_format", "torch|torch_dist|torch_dcp|fsdp_dtensor"),
    set("--async-save", "checkpoint.async_save"),
    value("--num-workers", T::Int, "dataset.num_workers"),
};

// Flags the memory estimate reads that have no Megatron Bridge field
// (lint/facts/estimate_llava.cpp, estimate_t5.cpp): T5's encoder and decoder,
// pretrain_vlm.py's image and tower (its add_vlm_extra_args and
// arguments.py's vision group), examples/mimo/train.py's model (add_mimo_args),
// and what the estimate names without counting it; and flags rules read: --sft, whose packed
// batches rules/batch/packed_sequences_unfused_mamba.cpp reads, and those below. Kept apart from kFlags,
// whose paths are Bridge's fields and whose flags every script accepts.
constexpr std::array kEstimateFlags = {
    value("--encoder-num-layers", T::Int, "model.encoder_num_layers"),
    value("--decoder-num-layers", T::Int, "model.decoder_num_layers"),
    value("--decoder-seq-length", T::Int, "model.decoder_seq_length"),
    // Required by validate_args, and at least the sequence length
    // (rules/tensor/megatron_lm_required_arguments.cpp,
    // max_position_embeddings_below_seq_length.cpp).
    value("--max-position-embeddings", T::Int, "model.max_position_embeddings"),
    value("--img-h", T::Int, "model.img_h"),
    value("--img-w", T::Int, "model.img_w"),
    value("--patch-dim", T::Int, "model.patch_dim"),
    value("--dataloader-seq-length", T::Int, "model.dataloader_seq_length"),
    set("--disable-vision-class-token", "model.disable_vision_class_token"),
    set("--freeze-LM", "model.freeze_language_model"),
    set("--freeze-ViT", "model.freeze_vision_model"),
    value("--vision-model-type", T::String, "model.vision_model_type"),
    value("--model-provider", T::String, "model.model_provider"),
    value("--total-seq-length", T::Int, "model.total_seq_length"),
    value("--packing-buffer-size", T::Int, "model.packing_buffer_size"),
    value("--language-model-checkpoint", T::String, "checkpoint.language_model_checkpoint"),
    set("--perform-rl-step", "rl.perform_rl_step"),
    value("--inference-dynamic-batching-buffer-size-gb", T::Float, "rl.inference_buffer_size_gb"),
    set("--rl-training-cuda-graphs", "rl.training_cuda_graphs"),
    value("--export-kd-teacher-load", T::String, "model.kd_teacher_load"),
    // args.bias_swiglu_fusion, which core_transformer_config_from_args makes
    // bias_activation_fusion only with --swiglu (argument_utils.py, d98e8a64).
    set("--no-bias-swiglu-fusion", "model.bias_swiglu_fusion", "false"),
    // args.sft: pretrain_mamba.py / pretrain_hybrid.py then read packed
    // batches (cu_seqlens) and pass packed_seq_params to the model.
    set("--sft", "dataset.sft"),
    // What rules/tensor/megatron_lm_exclusive_arguments.cpp compares: the
    // activations core_transformer_config_from_args asserts against --swiglu,
    // and the module spec --attention-backend local needs (nargs='*').
    set("--squared-relu", "model.squared_relu"),
    set("--quick-geglu", "model.quick_geglu"),
    value("--spec", T::StringList, "model.spec"),
    // An experimental YAML that replaces every argument (parse_args's
    // load_yaml): the command line's flags are then not what runs.
    value("--yaml-cfg", T::String, "megatron_lm.yaml_cfg"),
    // Retro (up to core_r0.15): load_retro_args overrides the sequence length,
    // the position range and the global batch from the project's config.json.
    value("--retro-project-dir", T::String, "megatron_lm.retro_project_dir"),
    // Replaced long ago but still parsed, so that validate_args can stop the
    // job with the new name (rules/config/megatron_lm_removed_arguments.cpp).
    value("--batch-size", T::Int, "megatron_lm.batch_size"),
    value("--warmup", T::Int, "megatron_lm.warmup"),
    value("--model-parallel-size", T::Int, "megatron_lm.model_parallel_size"),
    set("--checkpoint-activations", "megatron_lm.checkpoint_activations"),
    // validate_args's checks of saving (rules/config/megatron_lm_save_settings.cpp).
    value("--save-retain-interval", T::Int, "megatron_lm.save_retain_interval"),
    value("--save-params-interval", T::Int, "megatron_lm.save_params_interval"),
};

const MegatronLmFlag* find_estimate_flag(std::string_view flag) {
  for (const MegatronLmFlag& f : kEstimateFlags) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

// --- values ------------------------------------------------------------------------

bool in_choices(std::string_view value, std::string_view choices) {
  while (!choices.empty()) {
    size_t bar = choices.find('|');
    if (choices.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return false;
}

std::string choices_display(std::string_view choices) {
  std::string out;
  while (!choices.empty()) {
    size_t bar = choices.find('|');
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}'", choices.substr(0, bar));
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return out;
}

// --- --moe-layer-freq expressions ------------------------------------------------------

// A tiny evaluator for what Megatron-LM's pattern check admits (digits,
// commas, brackets, parentheses, `+`, `*`), with Python's meaning: `+`
// adds ints and concatenates lists, `*` multiplies ints and repeats lists.
class PatternEvaluator {
 public:
  explicit PatternEvaluator(std::string_view text) : text_(text) {}

  std::optional<std::vector<int64_t>> list() {
    auto result = expression();
    if (!result || at_ != text_.size() || !result->is_list) return std::nullopt;
    return result->items;
  }

 private:
  static constexpr size_t kMaxItems = 1 << 20;

  struct Value {
    bool is_list = false;
    int64_t number = 0;
    std::vector<int64_t> items;
  };

  bool eat(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  std::optional<Value> expression() {
    auto left = term();
    while (left && eat('+')) {
      auto right = term();
      if (!right || left->is_list != right->is_list) return std::nullopt;
      if (left->is_list) {
        if (left->items.size() + right->items.size() > kMaxItems) return std::nullopt;
        left->items.insert(left->items.end(), right->items.begin(), right->items.end());
      } else {
        left->number += right->number;
      }
    }
    return left;
  }

  std::optional<Value> term() {
    auto left = factor();
    while (left && eat('*')) {
      auto right = factor();
      if (!right || (left->is_list && right->is_list)) return std::nullopt;
      if (!left->is_list && !right->is_list) {
        left->number *= right->number;
        continue;
      }
      Value& list = left->is_list ? *left : *right;
      int64_t times = left->is_list ? right->number : left->number;
      if (times < 0) times = 0;
      if (!list.items.empty() && static_cast<size_t>(times) > kMaxItems / list.items.size()) return std::nullopt;
      Value repeated;
      repeated.is_list = true;
      for (int64_t i = 0; i < times; ++i) {
        repeated.items.insert(repeated.items.end(), list.items.begin(), list.items.end());
      }
      left = std::move(repeated);
    }
    return left;
  }

  std::optional<Value> factor() {
    if (eat('(')) {
      auto inner = expression();
      if (!inner || !eat(')')) return std::nullopt;
      return inner;
    }
    if (eat('[')) {
      Value list;
      list.is_list = true;
      if (eat(']')) return list;
      do {
        auto item = expression();
        if (!item || item->is_list) return std::nullopt;
        list.items.push_back(item->number);
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
      return list;
    }
    size_t start = at_;
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    if (start == at_ || at_ - start > 9) return std::nullopt;
    Value number;
    std::from_chars(text_.data() + start, text_.data() + at_, number.number);
    return number;
  }

  std::string_view text_;
  size_t at_ = 0;
};

// --- reading the argv --------------------------------------------------------------------

// One flag as written, with the words that are its values.
struct Occurrence {
  const MegatronLmFlag* spec = nullptr;
  MappedString flag;  // the `--name` part of the word
  std::vector<MappedString> values;
  Span statement;
};

bool is_flag_word(const MappedString& word) {
  return word.text.size() > 2 && starts_with(word.text, "--") && !has_unknown(word, 0, 2);
}

Span join_spans(Span a, Span b) {
  if (!a.valid()) return b;
  if (!b.valid() || a.file != b.file) return a;
  return Span{a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

Diagnostic argument_problem(std::string message, Span where, std::string help) {
  return input_finding(input_rule::kEntryPointArgument, std::move(message), where, std::move(help));
}

constexpr std::array<std::string_view, 4> kRequiredPaths = {
    "model.num_layers", "model.hidden_size", "model.num_attention_heads", "model.max_position_embeddings"};

class ArgvReader {
 public:
  explicit ArgvReader(const MegatronArgv& argv) : argv_(argv) {}

  MegatronLmArgs read() {
    result_.config = make_map();
    size_t i = 0;
    while (i < argv_.words.size()) i = read_word(i);
    hide_defaults_behind_opaque_word();
    hide_required_behind_outside_word();
    derive_virtual_pipeline();
    derive_query_groups();
    derive_sequence_length();
    derive_hybrid_layers();
    derive_encoder_layers();
    derive_recompute_activations();
    return std::move(result_);
  }

 private:
  Span entry_of(size_t index) const {
    return index < argv_.entries.size() ? argv_.entries[index] : Span{};
  }

  Span word_span(const MappedString& word) const { return span_of(word, 0, word.text.size()); }

  // Words up to the next flag are values of the option before them.
  size_t skip_values(size_t i) const {
    while (i < argv_.words.size() && !is_flag_word(argv_.words[i])) ++i;
    return i;
  }

  // A word standing alone among the flags whose value the script set but
  // mblint cannot know (`${options}` after branches that build it
  // differently): it may hold any flag, so what it may set is not defaulted.
  static bool opaque_script_word(const MappedString& word) {
    if (word.text.empty() || !has_unknown(word, 0, 1)) return false;
    return std::any_of(word.expansions.begin(), word.expansions.end(), [](const Expansion& e) {
      return !e.known && e.begin == 0 && e.definition.valid();
    });
  }

  // A word the script's arguments or environment give (no definition in the
  // script): `"$@"`, `$EXTRA_ARGS`.
  static bool outside_script_word(const MappedString& word) {
    if (word.text.empty() || !has_unknown(word, 0, 1)) return false;
    return std::any_of(word.expansions.begin(), word.expansions.end(), [](const Expansion& e) {
      return !e.known && e.begin == 0 && !e.definition.valid();
    });
  }

  // `${VP_SIZE:+--num-layers-per-virtual-pipeline-stage "$VP_SIZE"}`: the
  // flags the word holds when it holds anything. nullopt: any flag.
  static std::optional<std::vector<std::string_view>> flags_of_alternate(std::string_view text) {
    size_t plus = text.find('+');
    if (!starts_with(text, "${") || !text.ends_with("}") || plus == std::string_view::npos) return std::nullopt;
    std::string_view name = text.substr(2, plus - 2);
    if (name.ends_with(":")) name.remove_suffix(1);
    if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                            std::string_view::npos)
      return std::nullopt;
    std::string_view operand = text.substr(plus + 1, text.size() - plus - 2);
    // Flags written out, and values that are one word each (quoted, or a
    // literal without expansions): nothing else can hold a flag.
    std::vector<std::string_view> flags;
    size_t at = 0;
    while (at < operand.size()) {
      size_t end = operand.find(' ', at);
      if (end == std::string_view::npos) end = operand.size();
      std::string_view word = operand.substr(at, end - at);
      bool quoted = word.size() >= 2 && word.front() == '"' && word.back() == '"';
      if (word.find_first_of("$`'\\") != std::string_view::npos && !quoted) return std::nullopt;
      if (starts_with(word, "--")) flags.push_back(word.substr(0, word.find('=')));
      at = end + 1;
    }
    return flags;
  }

  // Whether one of `flags` may set `path`.
  static bool may_write(const std::vector<std::string_view>& flags, std::string_view path) {
    for (std::string_view flag : flags) {
      const MegatronLmFlag* spec = find_megatron_lm_flag(flag);
      if (!spec) return true;  // not one mblint maps: assume it may
      if (spec->path == path || spec->also == path) return true;
      bool virtual_stages = flag == "--num-layers-per-virtual-pipeline-stage" ||
                            flag == "--num-virtual-stages-per-pipeline-rank" ||
                            flag == "--pipeline-model-parallel-layout";
      if (virtual_stages && path == "model.virtual_pipeline_model_parallel_size") return true;
      if (flag == "--group-query-attention" && path == "model.num_query_groups") return true;
    }
    return false;
  }

  // The settings Megatron-LM would default when no flag sets them.
  void hide_defaults_behind_opaque_word() {
    if (!opaque_word_) return;
    std::optional<std::vector<std::string_view>> flags = flags_of_alternate(opaque_word_->text);
    Provenance where;
    where.layer = argv_.layer;
    where.value = word_span(*opaque_word_);
    where.statement = where.value;
    where.via = definitions_in(*opaque_word_, 0, opaque_word_->text.size());
    where.origin = fmt::format("`{}` is not known here and may set it", opaque_word_->text);
    for (std::string_view path :
         {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size", "model.context_parallel_size",
          "model.expert_model_parallel_size", "model.virtual_pipeline_model_parallel_size",
          "model.sequence_parallel", "model.num_moe_experts", "model.num_query_groups", "train.global_batch_size"}) {
      if (flags && !may_write(*flags, path)) continue;
      if (!find_path(result_.config, path))
        assign_path(result_.config, split_path(path), make_unknown(opaque_word_->text, where));
    }
    hide_required_behind(*opaque_word_, where, flags);
  }

  // What validate_args requires (and --save-interval, required with --save)
  // is not known to be missing behind a word that may hold any flag.
  void hide_required_behind(const MappedString& word, const Provenance& where,
                            const std::optional<std::vector<std::string_view>>& flags) {
    auto hide = [&](std::string_view path) {
      if (flags && !may_write(*flags, path)) return;
      if (!find_path(result_.config, path)) assign_path(result_.config, split_path(path), make_unknown(word.text, where));
    };
    for (std::string_view path : kRequiredPaths) hide(path);
    hide("checkpoint.save_interval");
  }

  // Behind `"$@"` the settings Megatron-LM defaults keep their defaults (as
  // bash reads it when the script gets no arguments); those it requires
  // (validate_args's required_args) are not known to be missing.
  void hide_required_behind_outside_word() {
    if (!result_.outside_word || opaque_word_) return;
    const MappedString& word = *result_.outside_word;
    Provenance where;
    where.layer = argv_.layer;
    where.value = word_span(word);
    where.statement = where.value;
    where.origin = fmt::format("`{}` is not known here and may set it", word.text);
    hide_required_behind(word, where, std::nullopt);
  }

  size_t read_word(size_t i) {
    const MappedString& word = argv_.words[i];
    if (!is_flag_word(word)) {  // a value of a flag mblint does not know
      if (!opaque_word_ && opaque_script_word(word)) opaque_word_ = word;
      else if (!result_.outside_word && outside_script_word(word)) result_.outside_word = word;
      return i + 1;
    }
    size_t eq = word.text.find('=');
    std::string_view name = std::string_view(word.text).substr(0, eq);
    const MegatronLmFlag* spec = megatron_lm_flag_kept(name);
    if (!spec) return skip_values(i + 1);
    if (has_unknown(word, 0, name.size())) return skip_values(i + 1);
    Occurrence occurrence;
    occurrence.spec = spec;
    occurrence.flag = substring(word, 0, name.size());
    Span statement = entry_of(i).valid() ? entry_of(i) : word_span(word);
    size_t next = i + 1;
    if (eq != std::string::npos) {
      occurrence.values.push_back(substring(word, eq + 1, word.text.size()));
    } else if (spec->type != ArgType::Flag) {
      next = take_values(i + 1, *spec, occurrence.values);
    }
    if (!entry_of(i).valid()) {
      for (const MappedString& v : occurrence.values) statement = join_spans(statement, word_span(v));
    }
    occurrence.statement = statement;
    if (!check_arity(occurrence, i)) return next;
    if (spec->type == ArgType::Flag) next = reject_stray_words(next, occurrence);
    store(occurrence);
    return next;
  }

  size_t take_values(size_t i, const MegatronLmFlag& spec, std::vector<MappedString>& values) const {
    bool list = spec.type == ArgType::IntList || spec.type == ArgType::StringList;
    size_t limit = spec.flag == "--rampup-batch-size" ? 3 : (list ? SIZE_MAX : 1);
    while (i < argv_.words.size() && values.size() < limit && !is_flag_word(argv_.words[i])) {
      values.push_back(argv_.words[i++]);
    }
    return i;
  }

  bool check_arity(const Occurrence& o, size_t index) {
    const MegatronLmFlag& spec = *o.spec;
    Span at = entry_of(index).valid() ? entry_of(index) : word_span(o.flag);
    if (spec.type == ArgType::Flag && !o.values.empty()) {
      result_.problems.push_back(argument_problem(
          fmt::format("argument {}: ignored explicit argument '{}'", spec.flag, o.values.front().text), at,
          fmt::format("{} takes no value: write it alone", spec.flag)));
      return false;
    }
    // --spec is nargs='*': it may stand alone.
    size_t wanted = spec.flag == "--rampup-batch-size" ? 3 : spec.flag == "--spec" ? 0 : 1;
    if (spec.type != ArgType::Flag && o.values.size() < wanted) {
      std::string expected = wanted == 3                                  ? "expected 3 arguments"
                             : spec.type == ArgType::IntList ||
                                     spec.type == ArgType::StringList    ? "expected at least one argument"
                                                                          : "expected one argument";
      result_.problems.push_back(argument_problem(fmt::format("argument {}: {}", spec.flag, expected), at,
                                                  fmt::format("give {} a value", spec.flag)));
      return false;
    }
    return true;
  }

  // `--sequence-parallel false`: argparse stops with "unrecognized
  // arguments" (the flag takes no value). A functional-test config with a
  // `false` value produces exactly this.
  size_t reject_stray_words(size_t i, const Occurrence& o) {
    if (i >= argv_.words.size() || is_flag_word(argv_.words[i]) || has_unknown(argv_.words[i])) return i;
    const MappedString& stray = argv_.words[i];
    Span at = entry_of(i).valid() ? entry_of(i) : word_span(stray);
    result_.problems.push_back(argument_problem(
        fmt::format("Megatron-LM rejects `{}` after {} (\"unrecognized arguments\"): the flag takes no value",
                    stray.text, o.spec->flag),
        at, fmt::format("write {} alone to enable it, or leave it out to disable it", o.spec->flag)));
    return skip_values(i);
  }

  Provenance provenance(const Occurrence& o) const {
    Provenance where;
    where.layer = argv_.layer;
    where.key = word_span(o.flag);
    where.statement = o.statement;
    for (const MappedString& v : o.values) {
      where.value = join_spans(where.value, word_span(v));
      for (const Span& d : definitions_in(v, 0, v.text.size())) {
        if (std::find(where.via.begin(), where.via.end(), d) == where.via.end()) where.via.push_back(d);
      }
    }
    return where;
  }

  std::optional<ConfigValue> scalar(const Occurrence& o, const MappedString& word, const Provenance& where) {
    const MegatronLmFlag& spec = *o.spec;
    if (has_unknown(word)) return make_unknown(word.text, where);
    Span at = word_span(word);
    auto invalid = [&](std::string_view kind) {
      result_.problems.push_back(argument_problem(
          fmt::format("argument {}: invalid {} value: '{}'", spec.flag, kind, word.text), at,
          fmt::format("{} takes {}", spec.flag, kind == "int" ? "an integer" : "a number")));
      return std::nullopt;
    };
    switch (spec.type) {
      case ArgType::Int:
      case ArgType::IntList:
        if (auto v = python_int(word.text)) return make_int(*v, where);
        return invalid("int");
      case ArgType::Float:
        if (auto v = python_float(word.text)) return make_float(*v, where);
        return invalid("float");
      default: break;
    }
    if (!spec.choices.empty() && !in_choices(word.text, spec.choices)) {
      if (argv_.own_choices) return make_unknown(word.text, where);
      result_.problems.push_back(argument_problem(
          fmt::format("argument {}: invalid choice: '{}' (choose from {})", spec.flag, word.text,
                      choices_display(spec.choices)),
          at, fmt::format("use one of {}", choices_display(spec.choices))));
      return std::nullopt;
    }
    return make_string(word.text, where);
  }

  std::optional<ConfigValue> layer_freq(const Occurrence& o, const MappedString& word, const Provenance& where) {
    if (has_unknown(word)) return make_unknown(word.text, where);
    const std::string& text = word.text;
    if (text.find('[') == std::string::npos) {
      if (auto v = python_int(text)) return make_int(*v, where);
    } else if (text.find_first_not_of("0123456789,[]()+*") == std::string::npos) {
      if (auto items = evaluate_layer_pattern(text)) {
        ConfigValue list = make_list(where);
        for (int64_t item : *items) list.items.push_back(make_int(item, where));
        return list;
      }
      return make_unknown(text, where);
    }
    result_.problems.push_back(argument_problem(
        fmt::format("argument {}: invalid moe_freq_type value: '{}'", o.spec->flag, text), word_span(word),
        "give an integer N, or a list expression of 0/1 such as ([0]*3+[1]*29) (no spaces)"));
    return std::nullopt;
  }

  std::optional<ConfigValue> convert(const Occurrence& o) {
    const MegatronLmFlag& spec = *o.spec;
    Provenance where = provenance(o);
    if (spec.type == ArgType::Flag) {
      if (spec.constant == "true") return make_bool(true, where);
      if (spec.constant == "false") return make_bool(false, where);
      return make_string(std::string(spec.constant), where);
    }
    if (spec.type == ArgType::LayerFreq) return layer_freq(o, o.values.front(), where);
    if (spec.type != ArgType::IntList && spec.type != ArgType::StringList) {
      return scalar(o, o.values.front(), where);
    }
    ConfigValue list = make_list(where);
    for (const MappedString& word : o.values) {
      if (has_unknown(word)) {
        std::string words;
        for (const MappedString& w : o.values) words += (words.empty() ? "" : " ") + w.text;
        return make_unknown(words, where);
      }
      Provenance item_where = where;
      item_where.value = word_span(word);
      auto item = scalar(o, word, item_where);
      if (!item) return std::nullopt;
      list.items.push_back(std::move(*item));
    }
    return list;
  }

  void store(const Occurrence& o) {
    seen_[o.spec->flag] = o;
    if (o.spec->path.empty()) {
      convert(o);  // still type-checked, as argparse does
      return;
    }
    auto converted = convert(o);
    if (!converted) return;
    assign_path(result_.config, split_path(o.spec->path), *converted);
    if (!o.spec->also.empty()) assign_path(result_.config, split_path(o.spec->also), *converted);
  }

  const Occurrence* seen(std::string_view flag) const {
    auto it = seen_.find(flag);
    return it == seen_.end() ? nullptr : &it->second;
  }

  std::optional<int64_t> seen_int(std::string_view flag) const {
    const Occurrence* o = seen(flag);
    if (!o || o->values.empty() || has_unknown(o->values.front())) return std::nullopt;
    return python_int(o->values.front().text);
  }

  std::optional<int64_t> config_int_at(std::string_view path, int64_t absent) const {
    const ConfigValue* node = find_path(result_.config, path);
    if (!node) return absent;
    return as_int(node);
  }

  // A value validate_args computes from a flag: it is located at that flag,
  // never offered for an edit there (the flag holds something else).
  Provenance derived_at(const Occurrence& o, std::string origin) const {
    Provenance where;
    where.layer = Layer::Rewrite;
    where.statement = o.statement;
    where.key = word_span(o.flag);
    where.origin = std::move(origin);
    return where;
  }

  void set_virtual_pipeline(ConfigValue value) {
    assign_path(result_.config, {"model", "virtual_pipeline_model_parallel_size"}, std::move(value));
  }

  void derive_virtual_pipeline() {
    const Occurrence* per_stage = seen("--num-layers-per-virtual-pipeline-stage");
    const Occurrence* stages = seen("--num-virtual-stages-per-pipeline-rank");
    const Occurrence* layout = seen("--pipeline-model-parallel-layout");
    int given = (per_stage ? 1 : 0) + (stages ? 1 : 0) + (layout ? 1 : 0);
    if (given == 0) return;
    const Occurrence& source = layout ? *layout : stages ? *stages : *per_stage;
    if (given > 1) {  // Megatron-LM asserts; which one would win is moot
      set_virtual_pipeline(make_unknown("more than one way of setting virtual pipeline stages",
                                        derived_at(source, "")));
      return;
    }
    std::optional<int64_t> pp = config_int_at("model.pipeline_model_parallel_size", 1);
    std::optional<int64_t> vpp;
    std::string how;
    if (layout && !layout->values.empty() && !has_unknown(layout->values.front()) && pp && *pp > 0) {
      int64_t count = layout_stage_count(layout->values.front().text);
      if (count > 0 && count % *pp == 0) vpp = count / *pp;
      how = fmt::format("the layout has {} stages over pipeline_model_parallel_size {}", count, *pp);
    } else if (stages) {
      vpp = seen_int("--num-virtual-stages-per-pipeline-rank");
      how = "set by --num-virtual-stages-per-pipeline-rank";
      keep_flag_value(*stages, "num_virtual_stages_per_pipeline_rank");
    } else if (per_stage) {
      vpp = virtual_stages_from_layers_per_stage(how);
      keep_layers_per_virtual_stage(*per_stage);
    }
    if (!vpp || *vpp <= 0) {
      set_virtual_pipeline(make_unknown(source.values.empty() ? "" : source.values.front().text,
                                        derived_at(source, how)));
      return;
    }
    std::string origin = fmt::format("virtual_pipeline_model_parallel_size is {}: {}", *vpp, how);
    Provenance where = derived_at(source, origin);
    set_virtual_pipeline(*vpp == 1 ? make_null(where) : make_int(*vpp, where));
  }

  // The flag's value under Megatron-LM's own name (no Bridge field), for
  // layers-divisible-by-pp: validate_args asserts that it divides the layers
  // per stage.
  void keep_layers_per_virtual_stage(const Occurrence& o) { keep_flag_value(o, "num_layers_per_virtual_pipeline_stage"); }

  // A virtual-stage flag's value under its Megatron-LM name (model.<name>),
  // for the rules that judge the flag itself (hybrid-pipeline-segments:
  // validate_args asserts both off with --hybrid-layer-pattern).
  void keep_flag_value(const Occurrence& o, const char* name) {
    if (o.values.empty() || has_unknown(o.values.front())) return;
    std::optional<int64_t> value = python_int(o.values.front().text);
    if (!value) return;
    assign_path(result_.config, {"model", name}, make_int(*value, provenance(o)));
  }

  // VPP = (layers / PP) / layers-per-virtual-stage, counting the embedding
  // and the loss as layers when asked to. Not whole: Megatron-LM asserts,
  // and the stage count stays unknown.
  std::optional<int64_t> virtual_stages_from_layers_per_stage(std::string& how) const {
    std::optional<int64_t> per_virtual = seen_int("--num-layers-per-virtual-pipeline-stage");
    std::optional<int64_t> layers = config_int_at("model.num_layers", -1);
    std::optional<int64_t> pp = config_int_at("model.pipeline_model_parallel_size", 1);
    if (!per_virtual || !layers || *layers < 0 || !pp || *pp <= 0 || *per_virtual <= 0) return std::nullopt;
    int64_t units = *layers;
    if (seen("--account-for-embedding-in-pipeline-split")) ++units;
    if (seen("--account-for-loss-in-pipeline-split")) ++units;
    how = fmt::format("--num-layers-per-virtual-pipeline-stage {} with {} layers over pipeline_model_parallel_size {}",
                      *per_virtual, units, *pp);
    if (units % *pp != 0 || (units / *pp) % *per_virtual != 0) return std::nullopt;
    return units / *pp / *per_virtual;
  }

  // Stages of a layout string such as "Et*3|(tt|)*6mL"; 0 when Megatron-Core
  // would reject it or it is too large to expand.
  static int64_t layout_stage_count(std::string_view layout) {
    std::optional<ExpandedLayout> expanded = expand_layout(layout);
    if (!expanded || !expanded->error.empty()) return 0;
    return static_cast<int64_t>(expanded->stages.size());
  }

  // Without --group-query-attention the query groups are ignored (multi-head
  // attention); with it and no --num-query-groups there is one group.
  void derive_query_groups() {
    const Occurrence* gqa = seen("--group-query-attention");
    const Occurrence* groups = seen("--num-query-groups");
    if (!gqa && groups) {
      Provenance where = derived_at(*groups, "Megatron-LM ignores --num-query-groups without "
                                             "--group-query-attention: multi-head attention");
      assign_path(result_.config, {"model", "num_query_groups"}, make_null(where));
    } else if (gqa && !groups) {
      Provenance where = derived_at(*gqa, "num_query_groups is 1: the Megatron-LM default with "
                                          "--group-query-attention");
      where.layer = Layer::SchemaDefault;
      assign_path(result_.config, {"model", "num_query_groups"}, make_int(1, where));
    }
  }

  void derive_sequence_length() {
    const Occurrence* encoder = seen("--encoder-seq-length");
    if (!encoder || find_path(result_.config, "model.seq_length")) return;
    Provenance where = provenance(*encoder);
    auto value = scalar(*encoder, encoder->values.front(), where);
    if (!value) return;
    assign_path(result_.config, {"model", "seq_length"}, *value);
    assign_path(result_.config, {"dataset", "seq_length"}, *value);
  }

  // validate_args: without --num-layers, num_layers is --encoder-num-layers
  // (T5's encoder, pretrain_vlm.py's vision tower).
  void derive_encoder_layers() {
    const Occurrence* encoder = seen("--encoder-num-layers");
    if (!encoder || find_path(result_.config, "model.num_layers")) return;
    Provenance where = provenance(*encoder);
    where.layer = Layer::Rewrite;  // validate_args's, not a flag of the command line
    where.origin = "--num-layers is unset: validate_args takes --encoder-num-layers";
    if (auto value = scalar(*encoder, encoder->values.front(), where)) {
      assign_path(result_.config, {"model", "num_layers"}, *value);
    }
  }

  // A hybrid (Mamba) layer pattern fixes the layer count and places the
  // layers on the pipeline itself; --num-layers is ignored.
  // validate_args (arguments.py, core_v0.17.0 onward): num_layers is the
  // pattern's main-stack layer count, whatever --num-layers says, and '|'
  // segments beyond PP are the virtual pipeline (segments / PP, which must be
  // whole). A pattern the script does not spell out leaves both unknown.
  void derive_hybrid_layers() {
    const Occurrence* pattern = seen("--hybrid-layer-pattern");
    if (!pattern) pattern = seen("--hybrid-override-pattern");
    if (!pattern) return;
    if (pattern->values.empty() || has_unknown(pattern->values.front())) {
      std::string how = "the layer count and pipeline split come from the hybrid layer pattern";
      assign_path(result_.config, {"model", "num_layers"}, make_unknown("the hybrid layer pattern", derived_at(*pattern, how)));
      bool pipes = !pattern->values.empty() && pattern->values.front().text.find('|') != std::string::npos;
      if (pipes) set_virtual_pipeline(make_unknown("the hybrid layer pattern", derived_at(*pattern, how)));
      return;
    }
    HybridPatternParts parts = split_hybrid_pattern(pattern->values.front().text);
    int64_t layers = parts.layers();
    assign_path(result_.config, {"model", "num_layers"},
                make_int(layers, derived_at(*pattern, fmt::format("num_layers is {}: the layers of the hybrid layer pattern", layers))));
    if (parts.segments.size() == 1) return;
    auto segments = static_cast<int64_t>(parts.segments.size());
    std::optional<int64_t> pp = config_int_at("model.pipeline_model_parallel_size", 1);
    if (!pp || *pp <= 0 || segments % *pp != 0) {
      std::string how = pp ? fmt::format("the hybrid layer pattern's {} pipeline segments do not divide over "
                                         "pipeline_model_parallel_size {}", segments, *pp)
                           : "the virtual pipeline comes from the hybrid layer pattern's pipeline segments";
      set_virtual_pipeline(make_unknown("the hybrid layer pattern", derived_at(*pattern, how)));
      return;
    }
    int64_t vpp = segments / *pp;
    Provenance where = derived_at(*pattern, fmt::format("virtual_pipeline_model_parallel_size is {}: the hybrid layer "
                                                        "pattern's {} pipeline segments over pipeline_model_parallel_size {}",
                                                        vpp, segments, *pp));
    set_virtual_pipeline(vpp == 1 ? make_null(where) : make_int(vpp, where));
  }

  void derive_recompute_activations() {
    const Occurrence* legacy = seen("--recompute-activations");
    if (!legacy) return;
    Provenance where = provenance(*legacy);
    where.origin = "--recompute-activations means recompute_granularity selective";
    assign_path(result_.config, {"model", "recompute_granularity"}, make_string("selective", where));
  }

  const MegatronArgv& argv_;
  MegatronLmArgs result_;
  std::optional<MappedString> opaque_word_;
  std::map<std::string_view, Occurrence> seen_;
};

// --- defaults ---------------------------------------------------------------------------

// Model fields --use-checkpoint-args takes from the checkpoint even when the
// command line sets them (load_args_from_checkpoint with force=True).
constexpr std::array<std::string_view, 14> kForcedFromCheckpoint = {
    "model.num_query_groups", "model.num_moe_experts", "model.moe_layer_freq", "model.moe_ffn_hidden_size",
    "model.moe_router_topk", "model.moe_shared_expert_intermediate_size", "model.mtp_num_layers",
    "model.gated_linear_unit", "model.share_embeddings_and_output_weights", "model.position_embedding_type",
    "model.add_bias_linear", "model.normalization", "model.squared_relu", "model.spec"};

// ...and those it fills only when the command line leaves them out.
constexpr std::array<std::string_view, 7> kFilledFromCheckpoint = {
    "model.num_layers", "model.hidden_size", "model.ffn_hidden_size", "model.seq_length",
    "model.num_attention_heads", "model.kv_channels", "model.max_position_embeddings"};

constexpr std::array<std::string_view, 4> kParallelFromCheckpoint = {
    "model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
    "model.virtual_pipeline_model_parallel_size", "model.expert_model_parallel_size"};

bool flag_on(const Job& job, std::string_view path) {
  return as_bool(find_path(job.config, path)).value_or(false);
}

void mark_from_checkpoint(Job& job, std::string_view path, bool force, const Provenance& flag_where) {
  const ConfigValue* node = find_path(job.config, path);
  if (node && (!force || node->where.layer == Layer::CommandLine)) return;
  Provenance where = flag_where;
  where.layer = Layer::Rewrite;
  where.value = {};
  where.origin = "taken from the checkpoint (--use-checkpoint-args)";
  assign_path(job.config, split_path(path), make_unknown("the checkpoint's value", where));
}

void apply_checkpoint_args(Job& job) {
  if (!flag_on(job, "checkpoint.use_checkpoint_args")) return;
  Provenance flag_where = find_path(job.config, "checkpoint.use_checkpoint_args")->where;
  for (std::string_view path : kForcedFromCheckpoint) mark_from_checkpoint(job, path, true, flag_where);
  for (std::string_view path : kFilledFromCheckpoint) mark_from_checkpoint(job, path, false, flag_where);
  if (flag_on(job, "checkpoint.use_mp_args_from_checkpoint_args")) {
    for (std::string_view path : kParallelFromCheckpoint) mark_from_checkpoint(job, path, true, flag_where);
  }
}

// validate_args's load_retro_args (megatron/training/arguments.py, core_v0.6
// to core_r0.15): with --retro-project-dir the project's config.json sets
// these, whatever the command line says.
void apply_retro_args(Job& job) {
  const ConfigValue* dir = find_path(job.config, "megatron_lm.retro_project_dir");
  if (!dir) return;
  Provenance where = dir->where;
  where.layer = Layer::Rewrite;
  where.value = {};
  where.origin = "taken from the Retro project's config.json (--retro-project-dir)";
  for (std::string_view path : {"model.seq_length", "dataset.seq_length", "model.max_position_embeddings",
                                "train.global_batch_size"}) {
    assign_path(job.config, split_path(path), make_unknown("the Retro project's value", where));
  }
}

Provenance default_where(std::string origin) {
  Provenance where;
  where.layer = Layer::SchemaDefault;
  where.origin = std::move(origin);
  return where;
}

void default_if_absent(Job& job, std::string_view path, ConfigValue value) {
  if (find_path(job.config, path)) return;
  assign_path(job.config, split_path(path), std::move(value));
}

std::optional<int64_t> world_size(const Cluster& cluster) {
  if (cluster.world_size.value) return cluster.world_size.value;
  if (cluster.nodes.value && cluster.gpus_per_node.value) return *cluster.nodes.value * *cluster.gpus_per_node.value;
  return std::nullopt;
}

// validate_args: no --global-batch-size means one micro batch per
// data-parallel rank and step. Needs the world size; a step schedule sets
// the batch itself.
void default_global_batch(Job& job) {
  if (find_path(job.config, "train.global_batch_size") || find_path(job.config, "train.step_batch_size_schedule")) {
    return;
  }
  auto mbs = as_int(find_path(job.config, "train.micro_batch_size"));
  auto tp = as_int(find_path(job.config, "model.tensor_model_parallel_size"));
  auto pp = as_int(find_path(job.config, "model.pipeline_model_parallel_size"));
  auto cp = as_int(find_path(job.config, "model.context_parallel_size"));
  auto world = world_size(job.cluster);
  if (!mbs || !tp || !pp || !cp || !world || *tp <= 0 || *pp <= 0 || *cp <= 0) return;
  int64_t model = *tp * *pp * *cp;
  if (*world % model != 0) return;
  int64_t dp = *world / model;
  Provenance where = default_where(fmt::format(
      "global_batch_size is unset: Megatron-LM uses micro_batch_size {} x data-parallel size {} = {}", *mbs, dp,
      *mbs * dp));
  where.layer = Layer::Rewrite;
  assign_path(job.config, {"train", "global_batch_size"}, make_int(*mbs * dp, where));
}

}  // namespace

std::span<const MegatronLmFlag> megatron_lm_flags() { return kFlags; }
std::span<const MegatronLmFlag> megatron_lm_extra_flags() { return kEstimateFlags; }

namespace {

// kFlags by flag and by the paths they write, built once and read-only after:
// the job builder asks per argument word and the rules per setting.
struct FlagIndex {
  std::unordered_map<std::string_view, const MegatronLmFlag*> by_flag;  // the first spec of each flag
  std::unordered_set<std::string_view> paths;                            // every path and `also`
};

const FlagIndex& flag_index() {
  static const FlagIndex index = [] {
    FlagIndex built;
    for (const MegatronLmFlag& spec : kFlags) {
      built.by_flag.emplace(spec.flag, &spec);
      if (!spec.path.empty()) built.paths.insert(spec.path);
      if (!spec.also.empty()) built.paths.insert(spec.also);
    }
    for (const MegatronLmFlag& spec : kEstimateFlags) built.paths.insert(spec.path);
    return built;
  }();
  return index;
}

}  // namespace

const MegatronLmFlag* find_megatron_lm_flag(std::string_view flag) {
  const FlagIndex& index = flag_index();
  auto it = index.by_flag.find(flag);
  return it == index.by_flag.end() ? nullptr : it->second;
}

const MegatronLmFlag* megatron_lm_flag_kept(std::string_view flag) {
  const MegatronLmFlag* spec = find_megatron_lm_flag(flag);
  const MegatronLmFlag* estimate = find_estimate_flag(flag);
  return spec && (!spec->path.empty() || !estimate) ? spec : estimate;
}

std::span<const std::string_view> megatron_lm_required_paths() { return kRequiredPaths; }

bool megatron_lm_flag_writes(std::string_view path) {
  return !path.empty() && flag_index().paths.count(path) > 0;
}

MegatronLmArgs read_megatron_lm_args(const MegatronArgv& argv) { return ArgvReader(argv).read(); }

std::optional<std::vector<int64_t>> evaluate_layer_pattern(std::string_view expression) {
  return PatternEvaluator(expression).list();
}

void apply_megatron_lm_defaults(Job& job) {
  apply_checkpoint_args(job);
  apply_retro_args(job);
  const std::string kDefault = "the Megatron-LM default";
  for (std::string_view path : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                                "model.context_parallel_size", "model.expert_model_parallel_size"}) {
    default_if_absent(job, path, make_int(1, default_where(kDefault)));
  }
  default_if_absent(job, "model.sequence_parallel", make_bool(false, default_where(kDefault)));
  default_if_absent(job, "model.virtual_pipeline_model_parallel_size",
                    make_null(default_where("no virtual pipeline: the Megatron-LM default")));
  default_if_absent(job, "model.num_moe_experts", make_null(default_where("no --num-experts: a dense model")));
  default_if_absent(job, "model.num_query_groups",
                    make_null(default_where("no --group-query-attention: multi-head attention")));
  if (auto tp = as_int(find_path(job.config, "model.tensor_model_parallel_size"))) {
    default_if_absent(job, "model.expert_tensor_parallel_size",
                      make_int(*tp, default_where(fmt::format("expert_tensor_parallel_size is unset: Megatron-LM "
                                                              "uses tensor_model_parallel_size ({})",
                                                              *tp))));
  }
  default_global_batch(job);
}

}  // namespace mblint
