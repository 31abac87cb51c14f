// Every option Megatron-LM's argument parser accepts, per release, generated
// from upstream source by tools/gen_megatron_lm_flags.py: the parser of
// megatron/training/arguments.py (argparse with allow_abbrev=False, so an
// abbreviation is unrecognized) plus what each entry script's
// extra_args_provider adds. A command line of a known entry script with a flag
// the parser does not accept stops with "unrecognized arguments"; an entry
// script mblint does not know may add flags of its own, so its unknown flags
// are only listed in a note.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lint/base/diagnostic.h"
#include "lint/base/source.h"
#include "lint/base/version.h"
#include "lint/load/dialects/megatron_lm_args.h"

namespace mblint {

struct MegatronLmRelease {
  Version version;
  const char* label;  // "core_v0.19.0", or "main d98e8a64dd" for the development tree
};

// Bit i of a `releases` mask is kMegatronLmReleases[i].
struct MegatronLmKnownFlag {
  std::string_view flag;
  uint32_t releases;
  bool takes_value;
};

struct MegatronLmEntryScript {
  std::string_view path;  // in the repository: "pretrain_gpt.py", "examples/t5/pretrain_t5.py"
  uint32_t releases;
};

struct MegatronLmEntryFlag {
  std::string_view script;
  std::string_view flag;
  uint32_t releases;
  bool takes_value;
};

// A functional-test family (tests/test_utils/recipes `spec.model`) and a
// script its recipes run.
struct MegatronLmTestFamily {
  std::string_view family;
  std::string_view script;
  uint32_t releases;
};

std::span<const MegatronLmRelease> megatron_lm_releases();
std::span<const MegatronLmKnownFlag> megatron_lm_base_flags();

// Which parser reads a command line.
struct FlagParser {
  // False: the entry script is not one mblint knows; its flags are not checked.
  bool known = false;
  // The scripts whose extra flags count: the entry script, or every script
  // the functional-test harness may run for a test family.
  std::vector<std::string_view> scripts;
  std::string entry;  // how the messages name it: "pretrain_gpt.py", "the test's script (gpt family)"
};

// Whether the flags are Megatron-DeepSpeed's (--deepspeed*, --zero-stage):
// its pretrain_gpt.py has Megatron-LM's name and a parser of its own.
bool megatron_deepspeed_argv(const MegatronArgv& argv);

// The entry script a launch runs (`/opt/megatron-lm/pretrain_gpt.py`),
// matched by its path in the repository, the longest match first.
FlagParser parser_for_program(std::string_view program);

// A functional-test config: the family is the directory under
// tests/functional_tests/test_cases/ in `path`; any known script when the path
// does not say (or for a bare file of flags).
FlagParser parser_for_test_config(std::string_view path);

struct FlagCheckOptions {
  Version version = kNewestMegatronCore;
  bool version_given = false;  // --megatron-core-version, not mblint's default
};

struct FlagCheck {
  std::vector<Diagnostic> diagnostics;  // unknown-flag
  // Flags the unrecognized ones were most likely meant to be (the
  // did-you-mean), with where the misspelling is: the job never sees their
  // values, so mblint does not assume Megatron-LM's default for them either.
  struct Intended {
    std::string flag;
    Span at;
  };
  std::vector<Intended> intended;
  // A flag no Megatron-LM release has, and no misspelling of one: the
  // script most likely runs a fork, whose validate_args may differ.
  bool fork_flags = false;
};

// Check one command line. `sources` is read to offer a rename only where the
// flag is written verbatim; `program` locates the note for an unknown script.
FlagCheck check_megatron_lm_flags(const MegatronArgv& argv, const FlagParser& parser, const FlagCheckOptions& options,
                                  const SourceSet& sources, Span program);

}  // namespace mblint
