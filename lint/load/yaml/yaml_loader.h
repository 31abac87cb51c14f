// YAML files -> ConfigValue trees where every key and value keeps its span.
// Built on yaml-cpp's event parser so that duplicate keys, anchors, aliases
// and merge keys are seen as written (yaml-cpp's node API hides them).
#pragma once

#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/base/yaml_scalar.h"

namespace mblint {

struct YamlLimits {
  size_t max_nodes = 2'000'000;  // after alias expansion: stops "billion laughs"
  size_t max_depth = 512;        // nesting of mappings and sequences
};

struct YamlDocument {
  bool ok = false;  // false: syntax error before the first node completed
  ConfigValue root;  // Null for an empty file
  // yaml-syntax and duplicate-key problems. Code is filled in later.
  std::vector<Diagnostic> problems;
};

// Parse the first YAML document of `file`. Values are typed by `flavor`;
// duplicate keys are an error under OmegaConf (it refuses the file) and a
// warning under PyYAML and yq (the last value silently wins).
YamlDocument load_yaml(const SourceSet& sources, FileId file, YamlFlavor flavor,
                       Layer layer, const YamlLimits& limits = {});

// The same for `source`, which is file `file` of the run (its spans name
// `file`). Reads nothing but `source`: safe on another thread while the
// SourceSet grows.
YamlDocument load_yaml(const SourceFile& source, FileId file, YamlFlavor flavor, Layer layer,
                       const YamlLimits& limits = {});

}  // namespace mblint
