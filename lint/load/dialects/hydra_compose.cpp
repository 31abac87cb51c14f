#include "lint/load/dialects/hydra_compose.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "lint/base/file_reader.h"
#include "lint/load/yaml/interpolation.h"

namespace fs = std::filesystem;

namespace mblint {

namespace {

constexpr int kMaxComposeDepth = 8;

// One entry of a defaults list, as written.
struct DefaultsEntry {
  bool self = false;
  bool optional = false;
  std::string group;    // "" for a config of the same directory
  std::string package;  // dotted; "" is the root
  std::string option;   // the config's or option's name
  bool known = true;    // the option holds no interpolation
  Span where;
};

std::optional<DefaultsEntry> read_entry(const ConfigValue& item) {
  DefaultsEntry entry;
  entry.where = primary_span(item.where);
  if (item.kind == ValueKind::String) {
    entry.self = item.text == "_self_";
    entry.option = item.text;
    entry.known = !has_interpolation(item.text);
    return entry;
  }
  if (!item.is_map() || item.entries.size() != 1) return std::nullopt;
  const MapEntry& choice = item.entries.front();
  std::string_view key = choice.key;
  for (std::string_view word : {"optional ", "override "}) {
    while (key.starts_with(word)) {
      if (word == "optional ") entry.optional = true;
      key.remove_prefix(word.size());
    }
  }
  size_t at = key.find('@');
  entry.group = std::string(key.substr(0, at));
  std::string package = at == std::string_view::npos ? entry.group : std::string(key.substr(at + 1));
  std::replace(package.begin(), package.end(), '/', '.');
  entry.package = package == "_global_" ? "" : package;
  if (choice.value.kind == ValueKind::Null) return std::nullopt;  // `group: null` chooses nothing
  entry.option = choice.value.kind == ValueKind::String ? choice.value.text : to_display(choice.value);
  entry.known = choice.value.kind != ValueKind::Unknown && !has_interpolation(entry.option);
  entry.where = primary_span(choice.value.where);
  return entry;
}

// Every leaf of `node` unknown: a file composed after them may have set it.
void make_leaves_unknown(ConfigValue& node, const std::string& why) {
  if (node.is_map()) {
    for (MapEntry& entry : node.entries) make_leaves_unknown(entry.value, why);
    return;
  }
  Provenance where = node.where;
  where.origin = why;
  node = make_unknown(node.kind == ValueKind::String ? node.text : to_display(node), where);
}

ConfigValue placed(ConfigValue value, const std::string& package) {
  if (package.empty()) return value;
  ConfigValue root = make_map();
  ensure_path(root, split_path(package)) = std::move(value);
  return root;
}

struct Composer {
  const fs::path& dir;
  const HydraReader& read;
  HydraComposition& out;

  void skip(const DefaultsEntry& entry, std::string why, ConfigValue& into) {
    std::string name = entry.group.empty() ? entry.option : fmt::format("{}: {}", entry.group, entry.option);
    out.not_read.push_back(HydraComposition::Skipped{name, why, entry.where, entry.package.empty()});
    std::string unknown = fmt::format("may be set by `{}`, which mblint did not read ({})", name, why);
    if (entry.package.empty()) {
      out.complete = false;
      make_leaves_unknown(into, unknown);
      return;
    }
    Provenance where;
    where.value = entry.where;
    where.origin = unknown;
    ensure_path(into, split_path(entry.package)) = make_unknown(entry.package, where);
  }

  void compose(const ConfigValue& config, ConfigValue& into, int depth) {
    ConfigValue self = config;
    std::vector<ConfigValue> defaults;
    auto& entries = self.entries;
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->key == "defaults" && it->value.is_list()) {
        defaults = it->value.items;
        it = entries.erase(it);
      } else if (it->key == "hydra") {
        it = entries.erase(it);
      } else {
        ++it;
      }
    }
    bool self_named = std::any_of(defaults.begin(), defaults.end(), [](const ConfigValue& item) {
      return item.kind == ValueKind::String && item.text == "_self_";
    });
    if (!self_named) defaults.push_back(make_string("_self_"));
    for (const ConfigValue& item : defaults) {
      std::optional<DefaultsEntry> entry = read_entry(item);
      if (!entry) continue;
      if (entry->self) {
        merge_into(into, self);
        continue;
      }
      if (entry->group.starts_with("hydra") || entry->option.starts_with("hydra/")) continue;
      if (!entry->known) {
        skip(*entry, "its name comes from an interpolation", into);
        continue;
      }
      fs::path file = (entry->group.empty() ? dir : dir / entry->group) / (entry->option + ".yaml");
      std::optional<ConfigValue> loaded = depth < kMaxComposeDepth ? read(file) : std::nullopt;
      if (!loaded || !loaded->is_map()) {
        if (!entry->optional) skip(*entry, fmt::format("there is no {} beside the config", file.filename().string()), into);
        continue;
      }
      ConfigValue composed = make_map();
      compose(*loaded, composed, depth + 1);
      merge_into(into, placed(std::move(composed), entry->package));
    }
  }
};

}  // namespace

HydraComposition compose_hydra_config(const ConfigValue& primary, const fs::path& config_dir,
                                      const HydraReader& read) {
  HydraComposition out;
  out.root = make_map();
  Composer composer{config_dir, read, out};
  composer.compose(primary, out.root, 0);
  return out;
}

std::vector<fs::path> root_hydra_configs(const fs::path& config_dir, const HydraReader& read,
                                         const std::map<fs::path, std::string>* overlay) {
  std::vector<fs::path> configs = list_source_files(config_dir, overlay);
  std::erase_if(configs, [](const fs::path& path) { return path.extension() != ".yaml"; });
  std::set<std::string> named;
  for (const fs::path& path : configs) {
    std::optional<ConfigValue> config = read(path);
    const ConfigValue* defaults = config ? find_child(*config, "defaults") : nullptr;
    if (!defaults) continue;
    for (const ConfigValue& item : defaults->items) {
      if (item.kind == ValueKind::String) named.insert(item.text);
    }
  }
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [&](const fs::path& path) { return named.count(path.stem().string()) > 0; }),
                configs.end());
  return configs;
}

}  // namespace mblint
