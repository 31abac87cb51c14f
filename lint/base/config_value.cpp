#include "lint/base/config_value.h"

#include <unordered_map>

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace mblint {

std::string_view layer_name(Layer layer) {
  switch (layer) {
    case Layer::SchemaDefault: return "default";
    case Layer::Recipe: return "recipe";
    case Layer::ConfigFile: return "config file";
    case Layer::ConvenienceFlag: return "flag";
    case Layer::Override: return "override";
    case Layer::CommandLine: return "command line";
    case Layer::Rewrite: return "rewrite";
    case Layer::Launcher: return "launcher";
  }
  return "config file";
}

Span primary_span(const Provenance& where) {
  if (where.statement.valid()) return where.statement;
  if (where.value.valid()) return where.value;
  return where.key;
}

namespace {

// An empty value of `kind`; the constructors below fill in its payload.
ConfigValue value_of_kind(ValueKind kind, Provenance where) {
  ConfigValue value;
  value.kind = kind;
  value.where = std::move(where);
  return value;
}

}  // namespace

ConfigValue make_null(Provenance where) { return value_of_kind(ValueKind::Null, std::move(where)); }

ConfigValue make_bool(bool b, Provenance where) {
  ConfigValue value = value_of_kind(ValueKind::Bool, std::move(where));
  value.boolean = b;
  return value;
}

ConfigValue make_int(int64_t i, Provenance where) {
  ConfigValue value = value_of_kind(ValueKind::Int, std::move(where));
  value.integer = i;
  return value;
}

ConfigValue make_float(double f, Provenance where) {
  ConfigValue value = value_of_kind(ValueKind::Float, std::move(where));
  value.real = f;
  return value;
}

ConfigValue make_string(std::string s, Provenance where) {
  ConfigValue value = value_of_kind(ValueKind::String, std::move(where));
  value.text = std::move(s);
  return value;
}

ConfigValue make_unknown(std::string expression, Provenance where) {
  ConfigValue value = value_of_kind(ValueKind::Unknown, std::move(where));
  value.text = std::move(expression);
  return value;
}

ConfigValue make_map(Provenance where) { return value_of_kind(ValueKind::Map, std::move(where)); }

ConfigValue make_list(Provenance where) { return value_of_kind(ValueKind::List, std::move(where)); }

std::vector<std::string> split_path(std::string_view dotted) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) {
      segments.emplace_back(dotted.substr(start));
      break;
    }
    segments.emplace_back(dotted.substr(start, dot - start));
    start = dot + 1;
  }
  return segments;
}

std::string join_path(const std::vector<std::string>& segments, size_t count) {
  std::string path;
  for (size_t i = 0; i < segments.size() && i < count; ++i) {
    if (i) path += '.';
    path += segments[i];
  }
  return path;
}

namespace {

std::optional<size_t> parse_index(std::string_view key) {
  if (key.empty() || key.size() > 9) return std::nullopt;
  size_t index = 0;
  auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
  if (ec != std::errc() || ptr != key.data() + key.size()) return std::nullopt;
  return index;
}

}  // namespace

const ConfigValue* find_child(const ConfigValue& node, std::string_view key) {
  if (node.kind == ValueKind::Map) {
    for (const MapEntry& entry : node.entries) {
      if (entry.key == key) return &entry.value;
    }
    return nullptr;
  }
  if (node.kind == ValueKind::List) {
    auto index = parse_index(key);
    if (index && *index < node.items.size()) return &node.items[*index];
  }
  return nullptr;
}

ConfigValue* find_child(ConfigValue& node, std::string_view key) {
  return const_cast<ConfigValue*>(find_child(static_cast<const ConfigValue&>(node), key));
}

const ConfigValue* find_path(const ConfigValue& root, const std::vector<std::string>& segments) {
  const ConfigValue* node = &root;
  for (const std::string& segment : segments) {
    node = find_child(*node, segment);
    if (!node) return nullptr;
  }
  return node;
}

const ConfigValue* find_path(const ConfigValue& root, std::string_view dotted) {
  const ConfigValue* node = &root;
  size_t start = 0;
  while (node) {
    size_t dot = dotted.find('.', start);
    std::string_view segment = dotted.substr(start, dot == std::string_view::npos ? dot : dot - start);
    node = find_child(*node, segment);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return node;
}

ConfigValue* find_path(ConfigValue& root, std::string_view dotted) {
  return const_cast<ConfigValue*>(find_path(static_cast<const ConfigValue&>(root), dotted));
}

ConfigValue& ensure_path(ConfigValue& root, const std::vector<std::string>& segments) {
  ConfigValue* node = &root;
  for (const std::string& segment : segments) {
    if (node->kind == ValueKind::List) {
      auto index = parse_index(segment);
      if (index && *index < node->items.size()) {
        node = &node->items[*index];
        continue;
      }
    }
    if (node->kind != ValueKind::Map) {
      Provenance where = node->where;
      *node = make_map(std::move(where));
    }
    ConfigValue* child = find_child(*node, segment);
    if (!child) {
      node->entries.push_back(MapEntry{segment, make_null()});
      child = &node->entries.back().value;
    }
    node = child;
  }
  return *node;
}

bool erase_path(ConfigValue& root, const std::vector<std::string>& segments) {
  if (segments.empty()) return false;
  std::vector<std::string> parent_path(segments.begin(), segments.end() - 1);
  ConfigValue* parent = parent_path.empty() ? &root : find_path(root, join_path(parent_path));
  if (!parent || parent->kind != ValueKind::Map) return false;
  for (auto it = parent->entries.begin(); it != parent->entries.end(); ++it) {
    if (it->key == segments.back()) {
      parent->entries.erase(it);
      return true;
    }
  }
  return false;
}

void assign_path(ConfigValue& root, const std::vector<std::string>& segments, ConfigValue value) {
  ConfigValue& slot = ensure_path(root, segments);
  std::vector<Provenance> history = std::move(slot.earlier);
  if (slot.where.value.valid() || slot.where.statement.valid() || !slot.where.origin.empty()) {
    history.push_back(slot.where);
  }
  slot = std::move(value);
  history.insert(history.end(), slot.earlier.begin(), slot.earlier.end());
  slot.earlier = std::move(history);
}

namespace {

// A map made on the way to a path (ensure_path: a recipe setting peft.dim
// makes `peft`) has no place of its own.
bool has_place(const Provenance& where) {
  return where.value.valid() || where.key.valid() || where.statement.valid() || !where.origin.empty();
}

}  // namespace

void merge_into(ConfigValue& base, const ConfigValue& overlay) {
  // Such a map is where the overlay writes it.
  if (base.kind == ValueKind::Map && overlay.kind == ValueKind::Map && !has_place(base.where)) base.where = overlay.where;
  if (base.kind == ValueKind::Map && overlay.kind == ValueKind::Map &&
      base.entries.size() * overlay.entries.size() <= 256) {
    for (const MapEntry& entry : overlay.entries) {
      if (ConfigValue* existing = find_child(base, entry.key)) {
        merge_into(*existing, entry.value);
      } else {
        base.entries.push_back(entry);
      }
    }
    return;
  }
  if (base.kind == ValueKind::Map && overlay.kind == ValueKind::Map) {
    // Wide maps: keys -> entry index, so that merging stays linear.
    // Reserve first: the index holds views of the keys, and a short key's
    // characters live inside its entry, so the entries must not move after.
    base.entries.reserve(base.entries.size() + overlay.entries.size());
    std::unordered_map<std::string_view, size_t> index;
    index.reserve(base.entries.size() + overlay.entries.size());
    for (size_t i = 0; i < base.entries.size(); ++i) index.emplace(base.entries[i].key, i);
    for (const MapEntry& entry : overlay.entries) {
      auto found = index.find(entry.key);
      if (found != index.end()) {
        merge_into(base.entries[found->second].value, entry.value);
      } else {
        base.entries.push_back(entry);
        index.emplace(base.entries.back().key, base.entries.size() - 1);
      }
    }
    return;
  }
  std::vector<Provenance> history = std::move(base.earlier);
  history.push_back(base.where);
  base = overlay;
  history.insert(history.end(), overlay.earlier.begin(), overlay.earlier.end());
  base.earlier = std::move(history);
}

std::optional<int64_t> as_int(const ConfigValue* value) {
  if (!value) return std::nullopt;
  if (value->kind == ValueKind::Int) return value->integer;
  if (value->kind == ValueKind::Float && std::isfinite(value->real) &&
      value->real == std::floor(value->real) && std::fabs(value->real) < 9.0e15) {
    return static_cast<int64_t>(value->real);
  }
  return std::nullopt;
}

std::optional<bool> as_bool(const ConfigValue* value) {
  if (!value || value->kind != ValueKind::Bool) return std::nullopt;
  return value->boolean;
}

std::optional<double> as_number(const ConfigValue* value) {
  if (!value) return std::nullopt;
  if (value->kind == ValueKind::Int) return static_cast<double>(value->integer);
  if (value->kind == ValueKind::Float) return value->real;
  return std::nullopt;
}

std::optional<std::string> as_string(const ConfigValue* value) {
  if (!value || value->kind != ValueKind::String) return std::nullopt;
  return value->text;
}

namespace {

std::string format_float(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{}", f);
  return text;
}

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    if (c == ' ' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == ':' ||
        c == '#' || c == '"' || c == '\'')
      return true;
  }
  return false;
}

}  // namespace

std::string to_display(const ConfigValue& value) {
  switch (value.kind) {
    case ValueKind::Null: return "null";
    case ValueKind::Bool: return value.boolean ? "true" : "false";
    case ValueKind::Int: return std::to_string(value.integer);
    case ValueKind::Float: return format_float(value.real);
    case ValueKind::String: return needs_quotes(value.text) || value.quoted ? fmt::format("\"{}\"", value.text) : value.text;
    case ValueKind::Unknown: return value.text;
    case ValueKind::List: {
      std::string out = "[";
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i) out += ", ";
        out += to_display(value.items[i]);
      }
      return out + "]";
    }
    case ValueKind::Map: {
      std::string out = "{";
      for (size_t i = 0; i < value.entries.size(); ++i) {
        if (i) out += ", ";
        out += value.entries[i].key + ": " + to_display(value.entries[i].value);
      }
      return out + "}";
    }
  }
  return "";
}

std::string last_segment(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return std::string(dot == std::string_view::npos ? dotted : dotted.substr(dot + 1));
}

}  // namespace mblint
