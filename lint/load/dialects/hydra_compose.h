// Hydra's composition of a NeMo 1.x application's primary config from its
// `defaults:` list (Hydra 1.1+ semantics), read statically: `_self_` (the
// file's own keys; at the end when the list does not name it), a config of
// the same directory (`- custom`, composed with its own list) and a group's
// option (`- optim@model.optim: fused_adam`, conf/optim/fused_adam.yaml at
// package model.optim). `hydra/...` entries configure Hydra itself and are
// skipped. An entry mblint cannot read (a config found on Hydra's search
// path, an option chosen by `${oc.env:...}`) may set anything: the keys
// composed before it and the group's package become unknown, and the
// composition is incomplete. An `optional` entry whose option is known and
// whose file does not exist is skipped, as Hydra does.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"

namespace mblint {

struct HydraComposition {
  ConfigValue root;  // a Map
  // The entries not read, each with why and where it is written.
  struct Skipped {
    std::string entry;
    std::string why;
    Span where;
    bool root = false;  // at the root package: it may set any key
  };
  std::vector<Skipped> not_read;
  // Every entry at the root package was read: a key the composition does not
  // hold is one the application's defaults decide. (An entry of a group
  // package that is not read makes only that package unknown.)
  bool complete = true;
};

// `read(path)`: the YAML at `path` as loaded, nullopt when there is no such
// file (or it is not valid YAML; the reader reports that).
using HydraReader = std::function<std::optional<ConfigValue>(const std::filesystem::path&)>;

HydraComposition compose_hydra_config(const ConfigValue& primary, const std::filesystem::path& config_dir,
                                      const HydraReader& read);

// The configs of `config_dir` (its top-level `*.yaml`) that no other one's
// `defaults:` names: the candidates for the primary config of an application
// whose `config_name` mblint cannot read. The directory is listed through
// `overlay` (lint/base/file_reader.h): a git revision's files under `mblint diff`.
std::vector<std::filesystem::path> root_hydra_configs(const std::filesystem::path& config_dir, const HydraReader& read,
                                                      const std::map<std::filesystem::path, std::string>* overlay);

}  // namespace mblint
