// Hover on a config key or override: the effective value after all layers
// and where each layer set it; on a parallel size or batch size, the layout
// it yields (world size, data-parallel sizes, microbatches, minimum GPUs,
// pipeline bubble); on any setting the memory estimate reads, the per-GPU
// memory of the most loaded rank (computed on hover from the last lint's
// job, never on every change).
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lint/facts/coverage.h"
#include "lint/facts/derived.h"
#include "lint/facts/estimate.h"
#include "lint/facts/speed_model.h"
#include "lint/lsp/lsp_server.h"
#include "lint/model/catalog.h"
#include "lint/report/resolved_settings.h"

namespace mblint::lsp {

namespace {

struct Found {
  size_t job = 0;
  std::string path;
  const ConfigValue* value = nullptr;
  Span hit;  // the span under the cursor
};

bool contains(Span span, FileId file, uint32_t offset) {
  return span.valid() && span.file == file && span.begin <= offset && offset <= std::max(span.begin, span.end) &&
         span.end > span.begin;
}

// The span of `where` under the cursor: the key, the value or the whole override.
Span hit_of(const Provenance& where, FileId file, uint32_t offset) {
  for (Span span : {where.key, where.value, where.statement}) {
    if (contains(span, file, offset)) return span;
  }
  return {};
}

// The narrowest config leaf (of any job) set, or once set, at `offset`.
std::optional<Found> find_setting(const LintResult& result, FileId file, uint32_t offset) {
  std::optional<Found> best;
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    std::string path;
    for_each_leaf(result.jobs[j].config, path, [&](const std::string& leaf_path, const ConfigValue& value) {
      std::vector<const Provenance*> layers{&value.where};
      for (const Provenance& earlier : value.earlier) layers.push_back(&earlier);
      for (const Provenance* where : layers) {
        Span hit = hit_of(*where, file, offset);
        if (hit.valid() && (!best || hit.end - hit.begin < best->hit.end - best->hit.begin)) {
          best = Found{j, leaf_path, &value, hit};
        }
      }
    });
  }
  return best;
}

std::string location(const LintSnapshot& snapshot, Span span) {
  if (!span.valid()) return "";
  const SourceFile& file = snapshot.sources.files[span.file];
  LineCol at = line_col(file, span.begin);
  return fmt::format("{}:{}:{}", file.path, at.line, at.column);
}

std::string source_text(const LintSnapshot& snapshot, Span span) {
  if (!span.valid()) return "";
  const std::string& text = snapshot.sources.files[span.file].text;
  return text.substr(span.begin, std::min<size_t>(span.end - std::min(span.begin, span.end), 80));
}

std::string code(std::string_view text) {
  std::string escaped(text);
  for (char& c : escaped) {
    if (c == '`' || c == '\n' || c == '|') c = ' ';
  }
  return "`" + escaped + "`";
}

// One line per layer, lowest first, the effective one last; layers named as
// `mblint resolve` names them.
std::string layers(const LintSnapshot& snapshot, const Job* job, const ConfigValue& value) {
  std::string out = "| layer | value | set at |\n|---|---|---|\n";
  auto row = [&](const Provenance& where, const std::string& shown, bool effective) {
    std::string at = location(snapshot, primary_span(where));
    if (!where.origin.empty()) at += (at.empty() ? "" : " — ") + where.origin;
    for (Span via : where.via) at += fmt::format(" (via {})", location(snapshot, via));
    std::string layer = job ? resolved_layer(*job, where) : std::string(layer_name(where.layer));
    out += fmt::format("| {}{} | {} | {} |\n", layer, effective ? " (effective)" : "",
                       shown.empty() ? "" : code(shown), at.empty() ? "not written anywhere" : at);
  };
  for (const Provenance& earlier : value.earlier) row(earlier, source_text(snapshot, earlier.value), false);
  row(value.where, to_display(value), true);
  return out;
}

// What the job runs with when that is not the value written (a default or a
// start-up rewrite of an unset value), or that mblint does not know it: the
// resolution `mblint resolve` prints.
std::string runs_with(const LintSnapshot& snapshot, const Job& job, const Derived& derived, const std::string& path,
                      const ConfigValue& written) {
  ResolvedJob resolved = resolve_job(job, derived, snapshot.sources);
  const ResolvedSetting* setting = find_setting(resolved, path);
  if (!setting) return "\nThe value this job runs with is not known (see `mblint resolve`).\n";
  if (written.kind != ValueKind::Unknown && to_display(setting->value) == to_display(written)) return "";
  std::string why = setting->origin.empty() ? setting->layer : fmt::format("{}: {}", setting->layer, setting->origin);
  return fmt::format("\nRuns with {} ({}).\n", code(to_display(setting->value)), why);
}

std::string quantity_line(std::string_view label, const Quantity& q) {
  std::string value = q.known() ? (!q.display.empty() ? q.display : std::to_string(*q.value)) : "unknown";
  return fmt::format("- {}: **{}**{}\n", label, value, q.how.empty() ? "" : " — " + q.how);
}

std::string_view leaf_key(std::string_view path) {
  size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

bool has_word(std::string_view key, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return key.find(w) != std::string_view::npos; });
}

// A parallel size, a pipeline split or a batch size: what the layout reads.
bool is_layout_setting(const std::string& path) {
  std::string_view key = leaf_key(path);
  return has_word(key, {"parallel_size", "pipeline_stage", "pipeline_model_parallel_layout"}) ||
         key == "global_batch_size" || key == "micro_batch_size";
}

// What else the memory estimate reads (lint/facts/estimate_read.cpp): the
// sequence, the model shape, precision, optimizer sharding, recompute and
// offloading.
bool is_memory_setting(const std::string& path) {
  static constexpr std::string_view kShape[] = {
      "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups", "kv_channels",
      "num_moe_experts", "moe_ffn_hidden_size", "moe_router_topk", "moe_shared_expert_intermediate_size",
      "moe_expert_capacity_factor", "moe_pad_expert_input_to_capacity", "moe_token_dispatcher_type",
      "moe_layer_freq", "mtp_num_layers", "vocab_size", "padded_vocab_size", "make_vocab_size_divisible_by",
      "multi_latent_attention", "q_lora_rank", "kv_lora_rank", "gated_linear_unit",
      "share_embeddings_and_output_weights", "bf16", "fp16", "fp8", "fp8_param", "params_dtype",
      "main_params_dtype", "main_grads_dtype", "exp_avg_dtype", "exp_avg_sq_dtype", "dim",
      "microbatch_group_size_per_vp_stage", "attention_backend", "cross_entropy_loss_fusion"};
  std::string_view key = leaf_key(path);
  if (is_layout_setting(path)) return true;
  if (has_word(key, {"parallel", "seq_length", "recompute", "offload", "distributed_optimizer", "fsdp",
                     "precision", "optimizer_instances"})) {
    return true;
  }
  return std::find(std::begin(kShape), std::end(kShape), key) != std::end(kShape);
}

std::string layout(const Derived& d) {
  std::string out = "**Parallel layout**\n\n";
  out += quantity_line("world size", d.world_size);
  out += fmt::format("- TP {} · PP {} · CP {} · EP {} · ETP {}\n",
                     d.tensor_parallel.known() ? std::to_string(*d.tensor_parallel) : "?",
                     d.pipeline_parallel.known() ? std::to_string(*d.pipeline_parallel) : "?",
                     d.context_parallel.known() ? std::to_string(*d.context_parallel) : "?",
                     d.expert_parallel.known() ? std::to_string(*d.expert_parallel) : "?",
                     d.expert_tensor_parallel.known() ? std::to_string(*d.expert_tensor_parallel) : "?");
  out += quantity_line("data parallel (DP)", d.data_parallel);
  out += quantity_line("expert data parallel", d.expert_data_parallel);
  out += quantity_line("microbatches per step", d.microbatches);
  out += quantity_line("minimum GPUs", d.min_gpus);
  out += d.bubble ? fmt::format("- pipeline bubble: **{:.1f}%** of the step idle — (PP−1) / (VPP · microbatches + "
                                "PP−1)\n",
                                *d.bubble * 100)
                  : std::string("- pipeline bubble: unknown\n");
  return out;
}

std::string gib(double value) { return fmt::format("{:.1f} GiB", value); }

// The per-GPU memory of the most loaded rank, as `mblint estimate` computes
// it; or why there is none.
std::string memory(const Job& job, const Derived& d) {
  std::string out = "**Memory per GPU (estimate)**\n\n";
  if (!job.trains) return out + "- not estimated: the job does not train (inference only)\n";
  std::string why_not;
  std::optional<MemoryEstimate> e = estimate_memory(job, d, &why_not);
  if (!e) return out + fmt::format("- not estimated: {}\n", why_not);
  out += fmt::format("- most loaded rank: {}\n", e->rank);
  if (e->capacity > 0) {
    double left = e->capacity - e->total;
    std::string gpu = d.gpu ? fmt::format(", {}", d.gpu->display) : "";
    out += fmt::format("- total: **{}** of {} ({:.0f}%{}) — {}\n", gib(e->total), gib(e->capacity),
                       100 * e->total / e->capacity, gpu,
                       left >= 0 ? fmt::format("headroom {}", gib(left)) : fmt::format("**over by {}**", gib(-left)));
  } else {
    out += fmt::format("- total: **{}** — GPU type unknown, no capacity to compare (give --gpu)\n", gib(e->total));
  }
  out += fmt::format("- weights {} · gradients {} · optimizer states {} · activations {}\n", gib(e->weights),
                     gib(e->gradients), gib(e->optimizer), gib(e->activations));
  out += fmt::format("- other {} · CUDA context, NCCL and fragmentation {}\n", gib(e->other), gib(e->overhead));
  // A recipe leaves recompute, offloading and FP8 parameters to provider
  // code mblint does not read (see rules/support/memory_support.cpp).
  if (job.dialect != Dialect::MegatronLM && !job.config_complete && job.recipe) {
    out += "- an upper bound: the recipe's own code may enable recompute or offloading mblint does not see\n";
  }
  for (const std::string& assumed : e->assumptions) out += fmt::format("- assumed: {}\n", assumed);
  return out;
}

// The predicted step, as `mblint estimate` prints it (docs/speed-model.md).
std::string speed(const Job& job, const Derived& d) {
  std::string out = "**Step time (estimate)**\n\n";
  if (!job.trains) return out + "- not predicted: the job does not train (inference only)\n";
  std::string why_not;
  std::optional<SpeedEstimate> e = estimate_speed(job, d, &why_not);
  if (!e) return out + fmt::format("- not predicted: {}\n", why_not);
  const StepBreakdown& b = e->breakdown;
  double comm = b.tp + b.cp + b.ep + b.pp + b.dp;
  out += fmt::format("- **{:.0f} tokens/s/GPU**, {:.2f} s per step, {:.0f} model TFLOP/s/GPU, MFU {:.0f}%\n",
                     e->tokens_per_sec_per_gpu, e->step_time_s, e->model_tflops_per_gpu, 100 * e->mfu);
  out += fmt::format("- compute {:.0f}% · exposed communication {:.0f}% · bubble {:.0f}% · optimizer and other {:.0f}%\n",
                     100 * b.compute / e->step_time_s, 100 * comm / e->step_time_s, 100 * b.bubble / e->step_time_s,
                     100 * (b.optimizer + b.other) / e->step_time_s);
  return out;
}

// What mblint could not resolve for the job, as `check`'s unchecked-job note
// and `resolve` say it: a hover over a partly checked job must not read as a
// fully checked one.
std::string coverage(const Derived& d) {
  if (d.coverage.complete()) return {};
  std::string out = "**Checked partly**: what mblint could not resolve for this job\n\n";
  for (const CoverageGap& gap : d.coverage.gaps) {
    out += fmt::format("- {}", gap.what);
    if (!gap.why.empty()) out += fmt::format(": {}", gap.why);
    if (!gap.unknown.empty()) out += fmt::format(" (unknown: {})", fmt::join(gap.unknown, ", "));
    if (!gap.supply.empty()) out += fmt::format("; {}", gap.supply);
    out += '\n';
  }
  return out;
}

}  // namespace

Json hover(const Document& document, const Json& params) {
  const LintSnapshot& snapshot = *document.snapshot;
  FileId file = kNoFile;
  for (size_t i = 0; i < snapshot.uris.size(); ++i) {
    if (snapshot.uris[i] == document.uri) file = static_cast<FileId>(i);
  }
  if (file == kNoFile) return nullptr;
  const SourceFile& source = snapshot.sources.files[file];
  const Json& p = params.at("position");
  uint32_t offset = to_offset(source.text, source.line_starts,
                              Position{p.at("line").get<uint32_t>(), p.at("character").get<uint32_t>()});
  std::optional<Found> found = find_setting(snapshot.result, file, offset);
  if (!found) return nullptr;
  std::string text = fmt::format("**{}** = {}\n\n", found->path, code(to_display(*found->value)));
  bool derived_known = found->job < snapshot.result.derived.size();
  const Job* job_of = derived_known ? &snapshot.result.jobs[found->job] : nullptr;
  text += layers(snapshot, job_of, *found->value);
  if (derived_known) {
    const Job& job = snapshot.result.jobs[found->job];
    const Derived& derived = snapshot.result.derived[found->job];
    if (is_resolved_job(job)) text += runs_with(snapshot, job, derived, found->path, *found->value);
    if (is_layout_setting(found->path)) text += '\n' + layout(derived);
    if (is_memory_setting(found->path)) text += '\n' + memory(job, derived) + '\n' + speed(job, derived);
    if (std::string gaps = coverage(derived); !gaps.empty()) text += '\n' + gaps;
  }
  return Json{{"contents", {{"kind", "markdown"}, {"value", text}}}, {"range", range_of(snapshot, found->hit)}};
}

}  // namespace mblint::lsp
