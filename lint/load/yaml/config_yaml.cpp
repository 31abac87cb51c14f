#include "lint/base/input_rules.h"
#include "lint/load/yaml/config_yaml.h"

#include "lint/base/file_reader.h"
#include "lint/load/yaml/yaml_loader.h"
#include "lint/load/yaml/yaml_patch.h"

namespace mblint {

namespace {

// A line of the file starting with `key:` at column 1.
bool has_top_level_key(const std::string& text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    if (text.compare(at, key.size(), key) == 0 && at + key.size() < text.size() && text[at + key.size()] == ':') {
      return true;
    }
    at = text.find('\n', at);
    if (at == std::string::npos) break;
    ++at;
  }
  return false;
}

// Everything but the parse, which `parse(flavor)` does.
template <typename Parse>
LoadedYaml load_with(const SourceFile& source, FileId file, Parse&& parse) {
  LoadedYaml loaded;
  if (auto bad = first_invalid_utf8(source.text)) {
    loaded.problems.push_back(
        input_finding(input_rule::kYamlSyntax,
                      "invalid UTF-8: YAML files must be UTF-8 (PyYAML and OmegaConf refuse this file)",
                      make_span(file, *bad, *bad + 1), "save the file as UTF-8"));
    return loaded;
  }
  // The loader that will read the file decides the typing: PyYAML for dumps
  // (a top-level `_target_`), yq for Megatron-LM test configs (MODEL_ARGS),
  // OmegaConf for everything else.
  loaded.dump = has_top_level_key(source.text, "_target_");
  YamlFlavor flavor = loaded.dump ? YamlFlavor::PyYaml
                      : has_top_level_key(source.text, "MODEL_ARGS") ? YamlFlavor::Yaml12
                                                                      : YamlFlavor::OmegaConf;
  YamlDocument document = parse(flavor);
  loaded.ok = document.ok;
  loaded.root = std::move(document.root);
  loaded.problems = std::move(document.problems);
  return loaded;
}

}  // namespace

LoadedYaml load_config_yaml(const SourceSet& sources, FileId file, YamlCache* cache) {
  return load_with(sources.files[file], file, [&](YamlFlavor flavor) {
    return load_yaml_cached(cache, sources, file, flavor, Layer::ConfigFile);
  });
}

LoadedYaml load_config_yaml(const SourceFile& source, FileId file) {
  return load_with(source, file,
                   [&](YamlFlavor flavor) { return load_yaml(source, file, flavor, Layer::ConfigFile); });
}

}  // namespace mblint
