#include "rules/registry.h"

#include <array>

namespace mblint {

// Input problems (found by the loaders).
extern const RuleInfo kYamlSyntax;
extern const RuleInfo kOverrideSyntax;
extern const RuleInfo kDuplicateKey;
extern const RuleInfo kUnreadableFile;
extern const RuleInfo kScriptSyntax;
extern const RuleInfo kEntryPointArgument;
extern const RuleInfo kUnknownRecipe;
// World size and process groups.
extern const RuleInfo kWorldSizeDivisibility;
extern const RuleInfo kExpertWorldSizeDivisibility;
// Tensor parallelism and model shape.
extern const RuleInfo kHeadsDivisibleByTp;
extern const RuleInfo kQueryGroupsDivisibleByTp;
extern const RuleInfo kTpCrossesNvlinkDomain;
// Sequence parallelism.
extern const RuleInfo kSequenceParallelWithoutTp;
extern const RuleInfo kMoeTpRequiresSequenceParallel;
// Context parallelism.
extern const RuleInfo kCpSeqLengthDivisibility;
extern const RuleInfo kCpSequenceParallelDivisibility;
// Pipeline parallelism.
extern const RuleInfo kLayersDivisibleByPp;
extern const RuleInfo kPipelineBubble;
// Batch.
extern const RuleInfo kGlobalBatchDivisibility;
// Mixture of experts.
extern const RuleInfo kEpDividesExperts;
extern const RuleInfo kEpOnDenseModel;

namespace {

const std::array kRules = {
    &kYamlSyntax,
    &kOverrideSyntax,
    &kDuplicateKey,
    &kUnreadableFile,
    &kScriptSyntax,
    &kEntryPointArgument,
    &kUnknownRecipe,
    &kWorldSizeDivisibility,
    &kExpertWorldSizeDivisibility,
    &kHeadsDivisibleByTp,
    &kQueryGroupsDivisibleByTp,
    &kTpCrossesNvlinkDomain,
    &kSequenceParallelWithoutTp,
    &kMoeTpRequiresSequenceParallel,
    &kCpSeqLengthDivisibility,
    &kCpSequenceParallelDivisibility,
    &kLayersDivisibleByPp,
    &kPipelineBubble,
    &kGlobalBatchDivisibility,
    &kEpDividesExperts,
    &kEpOnDenseModel,
};

}  // namespace

RuleSet all_rules() { return RuleSet(kRules.data(), kRules.size()); }

}  // namespace mblint
