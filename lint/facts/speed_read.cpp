// Reading the step-time model's settings from a resolved job: the GEMM
// precision, what overlaps, the dispatcher, CUDA graphs, the NVLink domain.
// The shape, parallel sizes, batch and recompute come from the memory
// model's reader (read_memory_model), not read twice.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "lint/facts/speed_model.h"

namespace mblint {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

// Bridge's mixed_precision presets name the recipe ("bf16_with_mxfp8_mixed",
// "fp8_cs", "nvfp4"); MixedPrecisionConfig.setup writes them over the
// model's fp8/fp4 fields, so a preset wins over those.
GemmPrecision read_gemm_precision(const Job& job, const MemoryModel& m) {
  if (m.fp4) return GemmPrecision::NVFP4;  // the memory model's reading of the preset or model.fp4
  std::optional<std::string> preset = config_text(job, "mixed_precision").value;
  if (!preset && job.recipe && job.dialect != Dialect::MegatronLM) preset = job.recipe->precision;
  if (preset && !preset->empty()) {
    std::string p = lower(*preset);
    if (p.find("mx") != std::string::npos) return GemmPrecision::MXFP8;
    if (p.find("fp8") != std::string::npos) return GemmPrecision::FP8;
    return GemmPrecision::BF16;
  }
  if (!m.fp8) return GemmPrecision::BF16;
  std::optional<std::string> recipe = config_text(job, "model.fp8_recipe").value;
  return recipe && lower(*recipe) == "mxfp8" ? GemmPrecision::MXFP8 : GemmPrecision::FP8;
}

std::optional<bool> flag(const Job& job, std::string_view path) { return config_bool(job, path).value; }

// A data-parallel overlap: ddp's own setting, else comm_overlap's, else
// Bridge's CommOverlapConfig turns it on for DP > 1 when the job has a
// comm_overlap section (_get_optimizer_overlap_cfgs); Megatron-LM's flags
// default to off.
bool dp_overlap(const Job& job, const MemoryModel& m, std::string_view field) {
  if (auto v = flag(job, fmt::format("ddp.{}", field))) return *v;
  if (auto v = flag(job, fmt::format("comm_overlap.{}", field))) return *v;
  const ConfigValue* section = config_node(job, "comm_overlap");
  return section && section->is_map() && m.dp * m.cp > 1 && (m.distributed_optimizer || !m.fsdp_sharding.empty());
}

}  // namespace

SpeedSettings read_speed_settings(const Job& job, const Derived& derived, const MemoryModel& m) {
  SpeedSettings s;
  s.precision = read_gemm_precision(job, m);
  if (derived.gpu) {
    int64_t per_node = derived.gpus_per_node.known() && *derived.gpus_per_node > 0 ? *derived.gpus_per_node
                                                                                    : derived.gpu->gpus_per_node;
    s.nvlink_domain = std::max<int64_t>(1, nvlink_domain_size(*derived.gpu, per_node));
  }
  // Bridge turns TP overlap off without sequence parallelism or with TP 1.
  bool tp_overlap = flag(job, "comm_overlap.tp_comm_overlap").value_or(flag(job, "model.tp_comm_overlap").value_or(false));
  s.tp_comm_overlap = tp_overlap && m.tp > 1 && m.sp;
  s.overlap_grad_reduce = dp_overlap(job, m, "overlap_grad_reduce");
  s.overlap_param_gather = dp_overlap(job, m, "overlap_param_gather");
  s.ep_overlap = flag(job, "comm_overlap.overlap_moe_expert_parallel_comm")
                     .value_or(flag(job, "model.overlap_moe_expert_parallel_comm").value_or(false));
  std::string dispatcher = config_text(job, "model.moe_token_dispatcher_type").value.value_or("");
  std::string backend = lower(config_text(job, "model.moe_flex_dispatcher_backend").value.value_or(""));
  s.deepep = (dispatcher == "flex" && (backend == "deepep" || backend == "hybridep")) ||
             flag(job, "model.moe_enable_deepep").value_or(false);
  std::string graphs = config_text(job, "model.cuda_graph_impl").value.value_or("none");
  s.cuda_graphs = graphs == "local" || graphs == "transformer_engine" || graphs == "full_iteration" ||
                  flag(job, "model.enable_cuda_graph").value_or(false);
  s.cp_a2a = m.cp > 1 && config_text(job, "model.cp_comm_type").value.value_or("p2p") == "a2a";
  return s;
}

std::optional<SpeedInputs> read_speed_inputs(const Job& job, const Derived& derived, std::string* why_not) {
  std::vector<std::string> assumptions;
  auto model = read_memory_model(job, derived, assumptions, why_not);
  if (!model) return std::nullopt;
  if (!derived.gpu) {
    if (why_not) *why_not = "the GPU type is not known (give --gpu)";
    return std::nullopt;
  }
  const GpuSpeed* gpu = find_gpu_speed(derived.gpu->name);
  if (!gpu) {
    if (why_not) *why_not = fmt::format("no published dense training figures for {} yet", derived.gpu->display);
    return std::nullopt;
  }
  if (model->lora_rank > 0) {
    if (why_not) *why_not = "PEFT (LoRA) steps are not modelled";
    return std::nullopt;
  }
  if (model->dit.present) {  // its blocks are not a language model's layers (estimate_dit.cpp)
    if (why_not) *why_not = "diffusion transformers (Wan, FLUX) are not modelled";
    return std::nullopt;
  }
  SpeedSettings settings = read_speed_settings(job, derived, *model);
  return SpeedInputs{std::move(*model), settings, gpu};
}

std::optional<SpeedEstimate> estimate_speed(const Job& job, const Derived& derived, std::string* why_not,
                                            const SpeedConstants* constants) {
  auto inputs = read_speed_inputs(job, derived, why_not);
  if (!inputs) return std::nullopt;
  return estimate_step(inputs->model, inputs->settings, *inputs->gpu,
                       constants ? *constants : default_speed_constants(), why_not);
}

}  // namespace mblint
