#include "lint/base/input_rules.h"
#include "lint/base/text.h"
#include "lint/load/dialects/megatron_lm_test_config.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace mblint {

namespace {

std::string_view source_text(const SourceSet& sources, Span span) {
  if (!span.valid() || span.file >= static_cast<FileId>(sources.files.size())) return {};
  const std::string& text = sources.files[span.file].text;
  if (span.end > text.size() || span.begin > span.end) return {};
  return std::string_view(text).substr(span.begin, span.end - span.begin);
}

std::string trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

// What `yq '.value | tostring'` prints for an entry's value, after the
// harness turned boolean true into "true" and `xargs` trimmed it; nullopt
// for an empty string (yq's `select(.value != "")` drops the entry).
std::optional<std::string> harness_text(const SourceSet& sources, const ConfigValue& value) {
  std::string text;
  switch (value.kind) {
    case ValueKind::Bool:
      text = value.boolean ? "true" : std::string(source_text(sources, value.where.value));
      break;
    case ValueKind::String: text = value.text; break;
    case ValueKind::Null: text = "null"; break;
    case ValueKind::Int:
    case ValueKind::Float: text = std::string(source_text(sources, value.where.value)); break;
    case ValueKind::List: {
      text = "[";
      for (const ConfigValue& item : value.items) {
        if (text.size() > 1) text += ", ";
        auto item_text = harness_text(sources, item);
        text += item_text.value_or("");
      }
      text += "]";
      break;
    }
    default: text = to_display(value); break;
  }
  if (value.kind == ValueKind::String && value.text.empty()) return std::nullopt;
  if (text.empty()) text = to_display(value);
  return trim(text);
}

// `${NAME}` and `$NAME` are envsubst placeholders the CI fills in from its
// environment: unknown here.
void mark_placeholders(MappedString& word, Span whole) {
  const std::string& text = word.text;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$') continue;
    size_t end = i + 1;
    std::string name;
    if (text[end] == '{') {
      size_t close = text.find('}', end);
      if (close == std::string::npos) continue;
      name = text.substr(end + 1, close - end - 1);
      end = close + 1;
    } else {
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      name = text.substr(i + 1, end - i - 1);
    }
    if (name.empty()) continue;
    Expansion expansion;
    expansion.begin = i;
    expansion.end = end;
    expansion.expression = span_of(word, i, end);
    expansion.name = name;
    expansion.known = false;
    if (!expansion.expression.valid()) expansion.expression = whole;
    word.expansions.push_back(std::move(expansion));
    i = end - 1;
  }
}

// text[begin, end) of a value's harness text as a word located in the YAML:
// character by character when the text is written verbatim there, else
// every character at the whole value.
MappedString located_word(const SourceSet& sources, const ConfigValue& value, const std::string& text,
                          size_t begin, size_t end) {
  std::string piece = text.substr(begin, end - begin);
  Span span = value.where.value;
  std::string_view written = source_text(sources, span);
  size_t at = written.find(text);
  MappedString word;
  if (at != std::string_view::npos) {
    word = mapped_verbatim(span.file, static_cast<uint32_t>(span.begin + at + begin), piece);
  } else {
    word.file = span.file;
    for (char c : piece) append_char(word, c, span.begin, span.end);
  }
  mark_placeholders(word, span);
  return word;
}

Span join(Span a, Span b) {
  if (!a.valid()) return b;
  if (!b.valid() || a.file != b.file) return a;
  return Span{a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

bool wrapped(const std::string& text, char open, char close) {
  return text.size() >= 3 && text.front() == open && text.back() == close &&
         text.find(close) == text.size() - 1;
}

// One MODEL_ARGS entry as the harness's argv words.
void append_flag_entry(const SourceSet& sources, const MapEntry& entry, MegatronArgv& argv) {
  const ConfigValue& value = entry.value;
  auto text = harness_text(sources, value);
  if (!text) return;
  Span key_span = value.where.key.valid() ? value.where.key : value.where.value;
  Span entry_span = join(key_span, value.where.value);
  MappedString flag;
  if (source_text(sources, key_span) == entry.key) {
    flag = mapped_verbatim(key_span.file, key_span.begin, entry.key);
  } else {
    flag.file = key_span.file;
    for (char c : entry.key) append_char(flag, c, key_span.begin, key_span.end);
  }
  auto push = [&](MappedString word) {
    argv.words.push_back(std::move(word));
    argv.entries.push_back(entry_span);
  };
  push(flag);
  if (*text == "true") return;
  if (wrapped(*text, '[', ']') && !wrapped(*text, '(', ')')) {
    // Brackets stripped, the rest split at whitespace by the unquoted eval.
    size_t i = 1;
    while (i < text->size() - 1) {
      while (i < text->size() - 1 && std::isspace(static_cast<unsigned char>((*text)[i]))) ++i;
      size_t start = i;
      while (i < text->size() - 1 && !std::isspace(static_cast<unsigned char>((*text)[i]))) ++i;
      if (i > start) push(located_word(sources, value, *text, start, i));
    }
    return;
  }
  push(located_word(sources, value, *text, 0, text->size()));
}

// --- NeMo 2 dotted overrides (gpt-nemo tests) -------------------------------------------

struct NemoOverride {
  std::string_view key;
  std::string_view path;
};

constexpr NemoOverride kNemoOverrides[] = {
    {"trainer.strategy.tensor_model_parallel_size", "model.tensor_model_parallel_size"},
    {"trainer.strategy.pipeline_model_parallel_size", "model.pipeline_model_parallel_size"},
    {"trainer.strategy.virtual_pipeline_model_parallel_size", "model.virtual_pipeline_model_parallel_size"},
    {"trainer.strategy.context_parallel_size", "model.context_parallel_size"},
    {"trainer.strategy.expert_model_parallel_size", "model.expert_model_parallel_size"},
    {"trainer.strategy.expert_tensor_parallel_size", "model.expert_tensor_parallel_size"},
    {"trainer.strategy.sequence_parallel", "model.sequence_parallel"},
    {"data.global_batch_size", "train.global_batch_size"},
    {"data.micro_batch_size", "train.micro_batch_size"},
    {"data.seq_length", "model.seq_length"},
    {"data.seq_length", "dataset.seq_length"},
};

ConfigValue located_value(const ConfigValue& value) {
  if (value.kind == ValueKind::String && value.text.find('$') != std::string::npos) {
    return make_unknown(value.text, value.where);  // an envsubst placeholder
  }
  return value;
}

LocatedInt located_count(const ConfigValue& value, std::string_view what) {
  LocatedInt count;
  count.where = value.where;
  count.value = as_int(&value);
  if (count.value && *count.value <= 0) count.value.reset();
  if (!count.value) count.unknown_because = fmt::format("{} is `{}`, not a GPU count", what, to_display(value));
  return count;
}

void map_nemo_override(const MapEntry& entry, MegatronTestConfig& out) {
  const std::string& key = entry.key;
  if (key == "trainer.num_nodes") {
    out.cluster.nodes = located_count(entry.value, "trainer.num_nodes");
    return;
  }
  if (key == "trainer.devices") {
    out.cluster.gpus_per_node = located_count(entry.value, "trainer.devices");
    return;
  }
  if (starts_with(key, "model.config.")) {
    assign_path(out.nemo_config, {"model", key.substr(13)}, located_value(entry.value));
    return;
  }
  for (const NemoOverride& o : kNemoOverrides) {
    if (o.key == key) assign_path(out.nemo_config, split_path(o.path), located_value(entry.value));
  }
}

bool holds_nemo_overrides(const ConfigValue& args) {
  size_t flags = 0;
  size_t dotted = 0;
  for (const MapEntry& entry : args.entries) {
    if (starts_with(entry.key, "--")) {
      ++flags;
    } else if (entry.key.find('.') != std::string::npos) {
      ++dotted;
    }
  }
  return dotted > flags;
}

// --- the rest of the file ------------------------------------------------------------------

void read_env(const SourceSet& sources, const ConfigValue& root, MegatronTestConfig& out) {
  const ConfigValue* env = find_child(root, "ENV_VARS");
  if (!env || !env->is_map()) return;
  for (const MapEntry& entry : env->entries) {
    EnvSetting setting;
    setting.name = entry.key;
    auto text = harness_text(sources, entry.value);
    if (text && text->find('$') == std::string::npos) setting.value = *text;
    setting.where = entry.value.where;
    setting.where.statement = join(entry.value.where.key, entry.value.where.value);
    out.env.push_back(std::move(setting));
  }
}

void read_cluster(const ConfigValue& root, MegatronTestConfig& out) {
  if (const ConfigValue* gpus = find_path(root, "MODEL_ENV_VARS.MODEL_ARGS.GPUS_PER_NODE")) {
    out.cluster.gpus_per_node = located_count(*gpus, "MODEL_ENV_VARS GPUS_PER_NODE");
  }
  if (!out.cluster.nodes.value && out.cluster.nodes.unknown_because.empty()) {
    out.cluster.nodes.unknown_because =
        "a Megatron-LM test config does not say how many nodes it runs on: pass --nodes and --gpus-per-node";
  }
  if (!out.cluster.gpus_per_node.value && out.cluster.gpus_per_node.unknown_because.empty()) {
    out.cluster.gpus_per_node.unknown_because =
        "a Megatron-LM test config does not say how many GPUs a node runs: pass --gpus-per-node";
  }
}

// The harness uses MODEL_ARGS_<n> for the n-th run (after a checkpoint
// resume) when present; mblint checks the first run only.
void note_later_phases(const ConfigValue& root, MegatronTestConfig& out) {
  for (const MapEntry& entry : root.entries) {
    if (!starts_with(entry.key, "MODEL_ARGS_")) continue;
    std::string_view number = std::string_view(entry.key).substr(11);
    if (number.empty() || !std::all_of(number.begin(), number.end(), ::isdigit)) continue;
    // Read, only not checked: information about coverage, not a fault.
    out.problems.push_back(demoted(
        input_finding(input_rule::kUnreadableFile,
                      fmt::format("{} (the run after checkpoint resume number {}) is not checked: mblint checks "
                                  "MODEL_ARGS, the first run",
                                  entry.key, number),
                      entry.value.where.key,
                      "to check that run, copy its arguments into a file of their own under MODEL_ARGS"),
        Severity::Note));
  }
}

}  // namespace

bool is_megatron_lm_test_config(const ConfigValue& root) {
  const ConfigValue* args = root.is_map() ? find_child(root, "MODEL_ARGS") : nullptr;
  return args && args->is_map();
}

MegatronTestConfig read_megatron_lm_test_config(const SourceSet& sources, const ConfigValue& root,
                                                const ConfigValue& args_root) {
  MegatronTestConfig out;
  out.argv.layer = Layer::ConfigFile;
  out.nemo_config = make_map();
  out.nemo_overrides = holds_nemo_overrides(args_root);
  for (const MapEntry& entry : args_root.entries) {
    if (out.nemo_overrides) {
      map_nemo_override(entry, out);
    } else if (starts_with(entry.key, "--")) {
      append_flag_entry(sources, entry, out.argv);
    }
  }
  if (root.is_map()) {
    const ConfigValue* mode = find_child(root, "MODE");
    out.inference = mode && mode->kind == ValueKind::String && mode->text == "inference";
    read_env(sources, root, out);
    read_cluster(root, out);
    note_later_phases(root, out);
  }
  return out;
}

}  // namespace mblint
