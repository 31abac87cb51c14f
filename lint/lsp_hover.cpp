// Hover on a config key or override: the effective value after all layers
// and where each layer set it; on a parallel size or batch size, the layout
// it yields (world size, data-parallel sizes, microbatches, minimum GPUs,
// pipeline bubble).
#include <fmt/format.h>

#include "lint/derived.h"
#include "lint/lsp_server.h"

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

// One line per layer, lowest first, the effective one last.
std::string layers(const LintSnapshot& snapshot, const ConfigValue& value) {
  std::string out = "| layer | value | set at |\n|---|---|---|\n";
  auto row = [&](const Provenance& where, const std::string& shown, bool effective) {
    std::string at = location(snapshot, primary_span(where));
    if (!where.origin.empty()) at += (at.empty() ? "" : " — ") + where.origin;
    for (Span via : where.via) at += fmt::format(" (via {})", location(snapshot, via));
    out += fmt::format("| {}{} | {} | {} |\n", layer_name(where.layer), effective ? " (effective)" : "",
                       shown.empty() ? "" : code(shown), at.empty() ? "not written anywhere" : at);
  };
  for (const Provenance& earlier : value.earlier) row(earlier, source_text(snapshot, earlier.value), false);
  row(value.where, to_display(value), true);
  return out;
}

std::string quantity_line(std::string_view label, const Quantity& q) {
  std::string value = q.known() ? (!q.display.empty() ? q.display : std::to_string(*q.value)) : "unknown";
  return fmt::format("- {}: **{}**{}\n", label, value, q.how.empty() ? "" : " — " + q.how);
}

bool is_layout_setting(const std::string& path) {
  static constexpr std::string_view kKeys[] = {
      "model.tensor_model_parallel_size",      "model.pipeline_model_parallel_size",
      "model.virtual_pipeline_model_parallel_size", "model.context_parallel_size",
      "model.expert_model_parallel_size",      "model.expert_tensor_parallel_size",
      "train.global_batch_size",               "train.micro_batch_size"};
  return std::find(std::begin(kKeys), std::end(kKeys), path) != std::end(kKeys);
}

std::string layout(const Job& job, const Derived& d) {
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
  out += d.bubble ? fmt::format("- pipeline bubble: **{:.1f}%** — (PP−1) / (VPP · microbatches)\n", *d.bubble * 100)
                  : std::string("- pipeline bubble: unknown\n");
  // INTEGRATION POINT (memory estimate): when lint/estimate.h's
  // estimate_memory(job, d) is implemented and linked, append its per-GPU
  // total, the GPU capacity and the most loaded rank here. Until then the
  // hover says nothing about memory rather than guessing.
  (void)job;
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
  text += layers(snapshot, *found->value);
  if (is_layout_setting(found->path) && found->job < snapshot.result.derived.size()) {
    text += '\n';
    text += layout(snapshot.result.jobs[found->job], snapshot.result.derived[found->job]);
  }
  return Json{{"contents", {{"kind", "markdown"}, {"value", text}}}, {"range", range_of(snapshot, found->hit)}};
}

}  // namespace mblint::lsp
