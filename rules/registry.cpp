#include "rules/registry.h"

#include <array>

namespace mblint {

// Each group has a declarations block and a list block below; keep both in
// the same order (the order `mblint rules` prints).

// == declarations: input problems (found by the loaders) ==
extern const RuleInfo kYamlSyntax;
extern const RuleInfo kOverrideSyntax;
extern const RuleInfo kDuplicateKey;
extern const RuleInfo kUnreadableFile;
extern const RuleInfo kScriptSyntax;
extern const RuleInfo kEntryPointArgument;
extern const RuleInfo kUnknownRecipe;
// == declarations: config keys and values ==
// == declarations: world size and process groups ==
extern const RuleInfo kWorldSizeDivisibility;
extern const RuleInfo kExpertWorldSizeDivisibility;
// == declarations: tensor parallelism and model shape ==
extern const RuleInfo kHeadsDivisibleByTp;
extern const RuleInfo kQueryGroupsDivisibleByTp;
extern const RuleInfo kTpCrossesNvlinkDomain;
// == declarations: sequence parallelism ==
extern const RuleInfo kSequenceParallelWithoutTp;
extern const RuleInfo kMoeTpRequiresSequenceParallel;
// == declarations: context parallelism ==
extern const RuleInfo kCpSeqLengthDivisibility;
extern const RuleInfo kCpSequenceParallelDivisibility;
// == declarations: pipeline parallelism ==
extern const RuleInfo kLayersDivisibleByPp;
extern const RuleInfo kPipelineBubble;
// == declarations: batch ==
extern const RuleInfo kGlobalBatchDivisibility;
// == declarations: mixture of experts ==
extern const RuleInfo kEpDividesExperts;
extern const RuleInfo kEpOnDenseModel;
// == declarations: recompute, offloading, precision ==
// == declarations: optimizer, overlap, environment ==
// == declarations: memory ==

namespace {

const std::array kRules = {
    // == list: input problems ==
    &kYamlSyntax,
    &kOverrideSyntax,
    &kDuplicateKey,
    &kUnreadableFile,
    &kScriptSyntax,
    &kEntryPointArgument,
    &kUnknownRecipe,
    // == list: config keys and values ==
    // == list: world size and process groups ==
    &kWorldSizeDivisibility,
    &kExpertWorldSizeDivisibility,
    // == list: tensor parallelism and model shape ==
    &kHeadsDivisibleByTp,
    &kQueryGroupsDivisibleByTp,
    &kTpCrossesNvlinkDomain,
    // == list: sequence parallelism ==
    &kSequenceParallelWithoutTp,
    &kMoeTpRequiresSequenceParallel,
    // == list: context parallelism ==
    &kCpSeqLengthDivisibility,
    &kCpSequenceParallelDivisibility,
    // == list: pipeline parallelism ==
    &kLayersDivisibleByPp,
    &kPipelineBubble,
    // == list: batch ==
    &kGlobalBatchDivisibility,
    // == list: mixture of experts ==
    &kEpDividesExperts,
    &kEpOnDenseModel,
    // == list: recompute, offloading, precision ==
    // == list: optimizer, overlap, environment ==
    // == list: memory ==
};

}  // namespace

RuleSet all_rules() { return RuleSet(kRules.data(), kRules.size()); }

}  // namespace mblint
