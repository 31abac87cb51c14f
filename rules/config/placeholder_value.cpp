// Template values left in a config that is launched: OmegaConf's MISSING
// marker `???`, `<path to ...>`-style placeholders and `your_...` names.
// Megatron Bridge does not treat any of them specially: `???` survives
// OmegaConf.to_container as the literal string, and the run uses it.
#include <cctype>

#include "rules/support/config_support.h"
#include "lint/base/text.h"

namespace mblint {

extern const RuleInfo kPlaceholderValue;

namespace {

// Tokens that are written in angle brackets on purpose.
bool special_token(std::string_view inner) {
  static constexpr std::string_view kTokens[] = {"s",     "/s",    "pad",   "eos",  "bos",    "unk",
                                                 "mask",  "cls",   "sep",   "eod",  "think",  "/think",
                                                 "image", "video", "audio", "img",  "tool_call", "answer"};
  for (std::string_view token : kTokens) {
    if (inner == token) return true;
  }
  return false;
}

// `<path to data>`, `<name>`, `<HF_TOKEN>`: the whole text in angle brackets.
bool angle_placeholder(std::string_view text) {
  if (text.size() < 3 || text.front() != '<' || text.back() != '>') return false;
  std::string_view inner = text.substr(1, text.size() - 2);
  if (inner.find_first_of("<>|{}") != std::string_view::npos) return false;
  if (!std::isalpha(static_cast<unsigned char>(inner.front()))) return false;
  return inner.find(' ') != std::string_view::npos || !special_token(inner);
}

bool template_word(std::string_view segment) {
  return starts_with(segment, "your_") || starts_with(segment, "your-") || starts_with(segment, "YOUR_") ||
         starts_with(segment, "YOUR-") || segment == "your" || angle_placeholder(segment);
}

// The kind of placeholder, "" when the value looks real.
std::string placeholder_kind(std::string_view text) {
  if (text == "???") return "OmegaConf's MISSING marker";
  if (text.find('\n') != std::string_view::npos || text.find("{%") != std::string_view::npos) return "";
  if (angle_placeholder(text)) return "a placeholder";
  if (starts_with(text, "/path/to/") || starts_with(text, "path/to/")) return "a placeholder path";
  size_t start = 0;
  while (start <= text.size()) {
    size_t slash = text.find('/', start);
    std::string_view segment = text.substr(start, slash == std::string_view::npos ? std::string_view::npos
                                                                                  : slash - start);
    if (template_word(segment)) return "a placeholder";
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return "";
}

// Keys whose last segment names a token or a template: angle brackets are content there.
bool token_key(std::string_view path) {
  size_t dot = path.rfind('.');
  std::string_view last = dot == std::string_view::npos ? path : path.substr(dot + 1);
  return last.find("template") != std::string_view::npos || last.find("special") != std::string_view::npos ||
         (last.size() > 6 && last.substr(last.size() - 6) == "_token") ||
         (last.size() > 7 && last.substr(last.size() - 7) == "_tokens");
}

struct Consequence {
  bool fatal;
  std::string what;
};

// What the run does with a placeholder at `path`: paths Bridge opens for
// reading fail at start-up or at the first batch; the rest are used as is.
Consequence consequence(std::string_view path) {
  if (path == "checkpoint.pretrained_checkpoint") {
    return {true, "CheckpointConfig.finalize() asserts that the pretrained checkpoint exists, so start-up fails"};
  }
  if (starts_with(path, "tokenizer.")) return {true, "the tokenizer is built from it at start-up and fails"};
  if (starts_with(path, "dataset.") && path != "dataset.path_to_cache") {
    return {true, "the datasets are built from it and fail to open it"};
  }
  if (path == "checkpoint.load") {
    return {false, "no checkpoint is found there, so training silently starts from scratch"};
  }
  if (path == "checkpoint.save" || path == "dataset.path_to_cache" ||
      (path.size() > 4 && path.substr(path.size() - 4) == "_dir")) {
    return {false, "Megatron Bridge writes into a directory of that literal name"};
  }
  return {false, "Megatron Bridge uses the literal string"};
}

void visit(const RuleContext& context, const ConfigValue& value, std::string& path, std::vector<Diagnostic>& out) {
  if (value.is_map() || value.is_list()) {
    size_t size = path.size();
    if (value.is_map()) {
      for (const MapEntry& entry : value.entries) {
        if (is_serialization_key(entry.key)) continue;
        if (!path.empty()) path += '.';
        path += entry.key;
        visit(context, entry.value, path, out);
        path.resize(size);
      }
    } else {
      for (size_t i = 0; i < value.items.size(); ++i) {
        path += '.';
        path += std::to_string(i);
        visit(context, value.items[i], path, out);
        path.resize(size);
      }
    }
    return;
  }
  if (value.kind != ValueKind::String || !written_by_user(value.where) || token_key(path)) return;
  std::string kind = placeholder_kind(value.text);
  if (kind.empty()) return;
  // A list item's path ends in its index; what matters is the key above it.
  std::string key = path;
  while (!key.empty() && std::isdigit(static_cast<unsigned char>(key.back()))) {
    size_t dot = key.rfind('.');
    if (dot == std::string::npos) break;
    key.resize(dot);
  }
  Consequence effect = consequence(key);
  Diagnostic diag = make_diagnostic(kPlaceholderValue,
                                    fmt::format("{} is '{}' ({}, left from a template): {}", path, value.text, kind,
                                                effect.what),
                                    primary_span(value.where));
  diag.severity = effect.fatal ? Severity::Error : Severity::Warning;
  report(out, std::move(diag),
         value.text == "???" ? fmt::format("set {} to a real value, or remove the key to keep the recipe's", key)
                             : fmt::format("replace the placeholder in {} with a real value", key));
}

void check(const RuleContext& context, std::vector<Diagnostic>& out) {
  if (!is_bridge_job(context.job)) return;
  std::string path;
  const ConfigValue& config = context.job.config;
  if (!config.is_map()) {
    visit(context, config, path, out);
    return;
  }
  for (const MapEntry& entry : config.entries) {
    if (is_serialization_key(entry.key) || !in_scope(context, entry.key)) continue;
    path = entry.key;
    visit(context, entry.value, path, out);
  }
}

}  // namespace

extern const RuleInfo kPlaceholderValue = {
    .code = "MB014",
    .name = "placeholder-value",
    .group = RuleGroup::Config,
    .severity = Severity::Error,
    .summary = "a template placeholder (???, <path ...>, your_...) left in a config that is launched",
    .doc = R"md(The example override files of Megatron Bridge ship with placeholders to fill in:
`checkpoint.save: ???`, `video_root_path: ???`, `pretrained_checkpoint: <path to the quantized
checkpoint>`, and the docs' commands add `logger.wandb_project=<name>`. Nothing in Megatron Bridge
catches them. `???` is OmegaConf's MISSING marker, but Bridge converts the merged config with
`OmegaConf.to_container(resolve=True)`, which does not raise on MISSING: the value stays the
literal string `"???"` and is copied onto the dataclass. Angle-bracket and `your_...`
placeholders are ordinary strings.

What happens then depends on the key, and sets the severity:

* **error**: paths Bridge opens for reading. `checkpoint.pretrained_checkpoint` is asserted to
  exist in `CheckpointConfig.finalize()` ("Pretrained checkpoint ... does not exist"); tokenizer
  models and dataset paths fail when the tokenizer and the datasets are built.
* **warning**: everything else runs with the literal value: `checkpoint.save: ???` writes the
  checkpoints into a directory named `???`, `checkpoint.load` finds no checkpoint there and
  silently starts from scratch, a W&B project is named `<name>`.

Recognized: the whole value `???`; a value, or a `/`-separated part of it, in angle brackets
(`<path to data>`, `$SAVE_DIR/<exp>`) other than special tokens such as `<s>` or `<pad>`; parts
starting with `your_`/`YOUR_`; paths starting with `/path/to/`. Keys that hold tokens or templates
(`*_token`, `*template*`, `*special*`) are not checked. Only values the user wrote are checked.)md",
    .bad = {"override.yaml", "checkpoint:\n  pretrained_checkpoint: <path to the quantized checkpoint>\n",
     "override.yaml --recipe qwen3_8b_pretrain_config --nodes 2 --gpus-per-node 8"},
    .good = {.content = "checkpoint:\n  pretrained_checkpoint: /lustre/ckpts/qwen3_8b_quantized\n"},
    .check = check,
    .checks = "",
    .scope = RuleScope::Section,
};

}  // namespace mblint
