// A YAML file read as a training config: typed the way the program that
// loads it would type it (PyYAML for a dump, yq for a Megatron-LM test
// config, OmegaConf for everything else), refused when it is not UTF-8.
#pragma once

#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/source.h"

namespace mblint {

struct YamlCache;  // lint/load/yaml/yaml_patch.h

struct LoadedYaml {
  bool dump = false;  // a full ConfigContainer dump (a top-level `_target_`)
  bool ok = false;    // false: nothing usable was read (see problems)
  ConfigValue root;
  std::vector<Diagnostic> problems;  // yaml-syntax and duplicate-key findings
};

// `file` of the run, from the cache when one is given (the language server's).
LoadedYaml load_config_yaml(const SourceSet& sources, FileId file, YamlCache* cache);

// The same without a cache, reading nothing but `source` (which is `file` of
// the run): safe on a worker thread while the SourceSet grows.
LoadedYaml load_config_yaml(const SourceFile& source, FileId file);

}  // namespace mblint
