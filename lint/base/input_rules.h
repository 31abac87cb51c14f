// The rules whose findings the loaders and the job builder make, before any
// rule runs: each one's name and declared severity, in one table. Their
// documentation lives with the other rules (rules/input/, and rules/config/
// for unknown-flag, project-config and the interpolation rules), whose
// RuleInfo takes its name and severity from here: a loader finding has the
// level `mblint rules` lists, unless its call site demotes it, which it does
// by name (demoted(), with the reason at the call site).
#pragma once

#include <string>
#include <string_view>

#include "lint/base/diagnostic.h"

namespace mblint {

struct InputRule {
  std::string_view name;
  Severity severity;
};

namespace input_rule {

inline constexpr InputRule kUnreadableFile{"unreadable-file", Severity::Error};
inline constexpr InputRule kYamlSyntax{"yaml-syntax", Severity::Error};
inline constexpr InputRule kDuplicateKey{"duplicate-key", Severity::Error};
inline constexpr InputRule kScriptSyntax{"script-syntax", Severity::Error};
inline constexpr InputRule kOverrideSyntax{"override-syntax", Severity::Error};
inline constexpr InputRule kEntryPointArgument{"entry-point-argument", Severity::Error};
inline constexpr InputRule kUnknownFlag{"unknown-flag", Severity::Error};
inline constexpr InputRule kUnknownRecipe{"unknown-recipe", Severity::Warning};
inline constexpr InputRule kNoTrainingJob{"no-training-job", Severity::Note};
inline constexpr InputRule kProjectConfig{"project-config", Severity::Error};
inline constexpr InputRule kInterpolationCycle{"interpolation-cycle", Severity::Error};
inline constexpr InputRule kInterpolationMissingKey{"interpolation-missing-key", Severity::Error};

// Every rule above (tests/ checks each is registered with this severity).
inline constexpr InputRule kAll[] = {
    kUnreadableFile, kYamlSyntax,  kDuplicateKey,   kScriptSyntax,  kOverrideSyntax,     kEntryPointArgument,
    kUnknownFlag,    kUnknownRecipe, kNoTrainingJob, kProjectConfig, kInterpolationCycle, kInterpolationMissingKey,
};

}  // namespace input_rule

// A finding of `rule` at its declared severity.
Diagnostic input_finding(const InputRule& rule, std::string message, Span where = {}, std::string help = {});

// The finding one level or more below its rule's declared severity: for a
// case the rule's declaration does not cover with certainty (a flag that
// may exist in another version, a duplicate key only OmegaConf refuses),
// or that is information rather than a fault (a skipped file). Never
// raises the level.
Diagnostic demoted(Diagnostic finding, Severity level);

}  // namespace mblint
