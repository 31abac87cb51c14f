// Megatron-LM's command line (`pretrain_gpt.py --tensor-model-parallel-size 4
// ...`), read statically and mapped onto Megatron Bridge's key space so the
// same rules apply. The flags and their types follow Megatron-LM's argparse
// parser (megatron/training/arguments.py and the flags it generates from the
// TransformerConfig / TrainingConfig dataclasses: a bool field that defaults
// to True becomes `--no-x` / `--disable-x`). Only flags that bear on
// parallelism, shape, batch and memory are mapped; others are skipped with
// their values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "lint/base/config_value.h"
#include "lint/base/diagnostic.h"
#include "lint/base/mapped_string.h"
#include "lint/model/job.h"

namespace mblint {

enum class ArgType : uint8_t {
  Int,
  Float,
  String,
  Flag,        // store_true / store_false / store_const: takes no value
  IntList,     // nargs='+': the words up to the next --flag
  StringList,  // nargs='+' (or '*')
  LayerFreq,   // an int, or a Python list expression of 0/1 (--moe-layer-freq)
};

struct MegatronLmFlag {
  std::string_view flag;  // "--tensor-model-parallel-size"
  ArgType type;
  // Where the value goes in Bridge's key space; empty when the flag only
  // feeds one of validate_args' derivations (virtual stages, GQA, ...) or has
  // no Bridge field (it is still type-checked).
  std::string_view path;
  std::string_view also = {};      // a second Bridge path that gets the same value
  std::string_view constant = {};  // Flag: what it stores ("true", "false", "selective", ...)
  std::string_view choices = {};   // "full|selective": argparse rejects anything else
};

// The mapped flags, in argparse's groups.
std::span<const MegatronLmFlag> megatron_lm_flags();
const MegatronLmFlag* find_megatron_lm_flag(std::string_view flag);
// Flags with no Megatron Bridge field whose values the estimate and the
// rules still read (--encoder-num-layers, --max-position-embeddings, ...).
std::span<const MegatronLmFlag> megatron_lm_extra_flags();
// The entry that says where a flag's value is kept: the mapped flag's, or,
// for a flag it only type-checks, that of the flags with no Megatron Bridge
// field that the estimate and the rules read (--encoder-num-layers,
// --max-position-embeddings under model.*); nullptr for a flag not read.
const MegatronLmFlag* megatron_lm_flag_kept(std::string_view flag);
// Some flag sets this config path (as its path or its `also`).
bool megatron_lm_flag_writes(std::string_view path);
// validate_args's required_args, in its order: argparse leaves them None and
// validate_args asserts each is given (megatron/training/arguments.py).
std::span<const std::string_view> megatron_lm_required_paths();

// The argument words of one Megatron-LM launch, each mapped to where it was
// written.
struct MegatronArgv {
  std::vector<MappedString> words;
  // Per word: the YAML entry (`--flag: value`) it was converted from, used as
  // the statement of every value it gives; empty when the words are a
  // script's (then the statement is the flag and its values).
  std::vector<Span> entries;
  Layer layer = Layer::Override;
  // The program's parser has choices of its own (Megatron-DeepSpeed's
  // --normalization rmsnorm): a value outside Megatron-LM's is unknown, not
  // an error.
  bool own_choices = false;
};

struct MegatronLmArgs {
  ConfigValue config;  // a Map in Bridge's key space
  std::vector<Diagnostic> problems;  // entry-point-argument: what argparse would reject
  // The first word among the flags that the script's arguments or its
  // environment fill (`"$@"`, `$EXTRA_ARGS` never set in the script): read as
  // empty, as bash does when they are, but it may hold flags.
  std::optional<MappedString> outside_word;
};

// Read an argv the way Megatron-LM's argparse does (allow_abbrev=False, the
// last occurrence wins, `--flag=value` and `--flag value`), then apply the
// validate_args derivations that only the flags themselves decide: virtual
// pipeline stages from --num-layers-per-virtual-pipeline-stage,
// --num-virtual-stages-per-pipeline-rank or --pipeline-model-parallel-layout;
// query groups ignored without --group-query-attention; --encoder-seq-length
// standing in for --seq-length; a hybrid layer pattern fixing the layer count.
MegatronLmArgs read_megatron_lm_args(const MegatronArgv& argv);

// --moe-layer-freq as Megatron-LM evaluates a pattern: `[0]*3+[1]*58`,
// `([1]*3+[0]*1)*2`, `[1,0,1]`. nullopt when it is not a list expression of
// integers built with `+` and `*` (that is never evaluated).
std::optional<std::vector<int64_t>> evaluate_layer_pattern(std::string_view expression);

// Megatron-LM's values for what the job leaves unset, applied after every
// layer (the script, --set, --nodes): TP, PP, CP and EP 1, sequence
// parallelism off, no virtual pipeline, no experts, ETP = TP, and (with a
// known world size and no step schedule) global batch = micro batch x DP.
// With --use-checkpoint-args the model shape is the checkpoint's: what the
// command line leaves out stays unknown.
void apply_megatron_lm_defaults(Job& job);

}  // namespace mblint
