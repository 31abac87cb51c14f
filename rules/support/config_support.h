// Helpers shared by the config-key, environment and Megatron Bridge runtime
// rules: values as the run will see them (written, or a default mblint can
// vouch for), the environment the training processes get, the precision
// mixed_precision writes at start-up, and where keys were written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/support/rule_support.h"

namespace mblint {

// Megatron Bridge validates this job (ConfigContainer.validate and the
// finalize() methods), not Megatron-LM's argparse or NeMo.
bool is_bridge_job(const Job& job);

// _target_, _call_, _partial_, _args_, _name_, _builder_: serialization, not fields.
bool is_serialization_key(std::string_view key);

// Of several values behind one finding, the one the user most likely just
// wrote (the highest layer that has a location).
const Resolved& most_specific(std::initializer_list<const Resolved*> values);

// A diagnostic of `rule` at the most specific of `values`, with a note at
// each of the others.
Diagnostic finding(const RuleInfo& rule, std::string message, std::initializer_list<const Resolved*> values);

// --- settings Megatron Bridge refuses together ----------------------------
// "A and B both on -> report" (ShellCheck's and ruff's small-rule style): a
// rule whose finding is only that two switches are on together declares a
// row, and check_both_on reports it. The finding is at the more specific of
// the two (`first` on a tie), with a note at the other.
struct BothOn {
  std::string_view first;    // "dist.use_torch_fsdp2"
  std::string_view second;   // "dist.use_megatron_fsdp"
  std::string_view message;  // what Bridge asserts
  std::string_view help;     // which one to turn off
};

void check_both_on(const Job& job, const RuleInfo& rule, const BothOn& row, std::vector<Diagnostic>& out);

// Whether a value was written by the user (a file, an override, a flag),
// not taken from the recipe catalog, a default or Bridge's rewrites.
bool written_by_user(const Provenance& where);

// The first located span in a value or its children (for maps created by
// nested overrides, which have no location of their own).
Span first_span(const ConfigValue& value);

// --- the environment of the training processes -----------------------------

enum class EnvState { Set, Unset, Unknown };

struct EnvLookup {
  EnvState state = EnvState::Unknown;
  std::optional<std::string> value;  // Set and known
  Provenance where;                  // where it was set
  bool from_config = false;          // from the config's env_vars section
};

// mblint read everything that sets the training processes' environment: a
// launch script read whole. A YAML alone has no launch environment, and a
// Megatron-LM functional-test config's ENV_VARS are set on top of the CI
// runner's own environment, which mblint does not see.
bool has_launch_environment(const Job& job);

// The one reading of an environment variable, as the training processes see
// it: an export of the launch (or a test config's ENV_VARS) wins; Megatron
// Bridge then applies env_vars with os.environ.setdefault, so an env_vars
// entry is the value unless the shell exports another. Unset only when
// nothing else can set it: the launch environment is known and, for Bridge,
// so is all of env_vars (a dump lists all of it, and the catalog records each
// recipe's); Megatron-LM has no env_vars at all. Unknown otherwise.
EnvLookup lookup_env(const Job& job, std::string_view name);

// lookup_env where mblint read the launch whole, Unknown elsewhere: for rules
// whose verdict turns on what the shell exports, which stay silent for a YAML
// alone (its env_vars apply only where the shell sets nothing).
EnvLookup lookup_launch_env(const Job& job, std::string_view name);

// The value as a whole number (NVLINK_DOMAIN_SIZE=8); nullopt otherwise.
std::optional<int64_t> env_int(const EnvLookup& env);

// Where the value comes from, for a message: "exported", "env_vars", or
// "env_vars of recipe NAME".
std::string env_source(const Job& job, const EnvLookup& env);

Note note_for(const EnvLookup& env, std::string_view name);

// --- precision ------------------------------------------------------------

// What mixed_precision will copy onto model/optimizer/ddp for `field` at
// start-up. nullopt when mixed_precision is unset, null, unknown, or does not
// pin that field down. `where` is set to the mixed_precision value.
std::optional<ConfigValue> mixed_precision_value(const Job& job, std::string_view field, Provenance* where = nullptr,
                                                 std::string* preset = nullptr);

// Whether a preset name is registered in Megatron Bridge's mixed_precision.py
// ('-' and '_' both accepted).
bool is_mixed_precision_preset(std::string_view name);

// model.transformer_impl: as written, else "transformer_engine" — the
// default of Megatron-Core and Megatron-LM, and what every catalog recipe but
// Gemma 4's (which uses "local") sets. nullopt when unknown.
std::optional<std::string> transformer_impl(const Job& job);

// --- key spelling -----------------------------------------------------------

// The model of the job is a builder-backed GPTModelConfig (Llama recipes of
// Megatron Bridge after 0.6, or a dump whose model _target_ says so).
bool builder_backed_model(const Job& job);

// A GPTModelConfig field (not proxied to model.transformer).
bool is_builder_outer_field(std::string_view name);

// A field some variant of `section` declares: the schema's, or one of the
// model-specific providers, dataset providers and PEFT variants.
bool is_known_field(const Job& job, std::string_view section, std::string_view name);

}  // namespace mblint
