// A training job as it will run: every setting with its effective value and
// the layer and place it came from, the allocation, the derived sizes, and
// what mblint could not resolve. Built from the same Job and Derived that
// `check` lints; `mblint resolve` renders it (lint/cli/cli_resolve.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/source.h"

namespace mblint {

struct Job;
struct Derived;

struct ResolvedSetting {
  std::string key;     // Bridge's dotted name: "model.tensor_model_parallel_size"
  ConfigValue value;   // known: never Unknown, and no Unknown inside a list
  std::string layer;   // "recipe", "config file", "override", "Megatron-LM flag", "default", ...
  Span where;          // invalid when the value was written nowhere (a default)
  std::string origin;  // free text from the loader: "default of recipe ...", "" when none
  std::vector<Span> via;  // where an expanded value came from: the `TP=4` behind `$TP`
};

struct ResolvedSize {
  std::string name;  // "data_parallel_size"
  std::optional<int64_t> integer;
  std::optional<double> real;  // the pipeline bubble
  std::string how;   // how it came about, "" when plain
};

struct ResolvedUnknown {
  std::string what;    // "recipe unknown", "model.foo"
  std::string why;
  std::string supply;  // how to give it; "" when there is nothing to say
  Span where;          // invalid: written nowhere
  std::vector<std::string> unknown;  // the settings it leaves unknown ("TP", "global batch")
};

struct ResolvedJob {
  Span where;  // the launch command, or the start of the job's file
  std::string launcher;  // "torchrun", "srun", ""
  std::string entry;     // "pretrain_gpt.py", "run_recipe.py", ...
  std::string dialect;   // "bridge", "megatron-lm", "nemo"
  std::string recipe;    // as named; "" when none
  std::optional<int64_t> nodes, gpus_per_node, world_size;
  std::vector<ResolvedSetting> settings;  // sorted by key
  std::vector<ResolvedSize> derived;
  std::vector<ResolvedUnknown> unresolved;
};

// Whether `resolve` shows the job: a config, or a launch of an entry point
// mblint reads (the jobs `check` checks), that trains (not an inference,
// text-generation or checkpoint-conversion run, which `check` still checks).
bool is_resolved_job(const Job& job);

ResolvedJob resolve_job(const Job& job, const Derived& derived, const SourceSet& sources);

// The layer a written value came from, as resolve names it ("Megatron-LM
// flag" for a Megatron-LM command line, else layer_name).
std::string resolved_layer(const Job& job, const Provenance& where);

// The setting `key` of a resolved job; null when mblint does not know it.
const ResolvedSetting* find_setting(const ResolvedJob& job, std::string_view key);

}  // namespace mblint
