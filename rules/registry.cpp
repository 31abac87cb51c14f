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
extern const RuleInfo kNoTrainingJob;
extern const RuleInfo kUncheckedJob;
// == declarations: config keys and values ==
extern const RuleInfo kUnknownKey;
extern const RuleInfo kValueTypeMismatch;
extern const RuleInfo kFlatKeyOnBuilderModel;
extern const RuleInfo kPrecisionOverriddenByMixedPrecision;
extern const RuleInfo kNullSectionWithoutTarget;
extern const RuleInfo kPlaceholderValue;
extern const RuleInfo kDistributedOptimizerSettingsSync;
extern const RuleInfo kOptimizerPrecisionMismatch;
extern const RuleInfo kMxfp8ParamGatherBufferReuse;
extern const RuleInfo kMegatronFsdpWithTorchFsdp2;
extern const RuleInfo kMegatronFsdpOptions;
extern const RuleInfo kMegatronFsdpV2Unsupported;
extern const RuleInfo kFsdpDtensorWithoutMegatronFsdp;
extern const RuleInfo kAsyncSaveRequirements;
extern const RuleInfo kDecentralizedPgWithGloo;
extern const RuleInfo kPeftWithoutPretrainedCheckpoint;
extern const RuleInfo kHfCheckpointExport;
extern const RuleInfo kDeterministicModeRequirements;
extern const RuleInfo kFullIterationCudaGraphNanCheck;
extern const RuleInfo kLocalCudaGraphScope;
extern const RuleInfo kModeloptGradientAccumulationFusion;
extern const RuleInfo kCheckpointLoadSettings;
extern const RuleInfo kLoggerRunNameMissing;
extern const RuleInfo kProfilerSettings;
extern const RuleInfo kDatasetSettings;
extern const RuleInfo kUnusedSuppression;
extern const RuleInfo kSuppressionWithoutReason;
extern const RuleInfo kProjectConfig;
extern const RuleInfo kUnknownFlag;
extern const RuleInfo kInterpolationMissingKey;
extern const RuleInfo kInterpolationCycle;
// == declarations: world size and process groups ==
extern const RuleInfo kWorldSizeDivisibility;
extern const RuleInfo kExpertWorldSizeDivisibility;
extern const RuleInfo kTpPpDpMappingDpMismatch;
extern const RuleInfo kDistributedOptimizerInstancesDivisibility;
extern const RuleInfo kTpWeightShardsInvalid;
extern const RuleInfo kSharpGroupInvalid;
extern const RuleInfo kPipelineCommBackendInvalid;
extern const RuleInfo kExpertTensorParallelUnset;
// == declarations: tensor parallelism and model shape ==
extern const RuleInfo kHeadsDivisibleByTp;
extern const RuleInfo kQueryGroupsDivisibleByTp;
extern const RuleInfo kTpCrossesNvlinkDomain;
extern const RuleInfo kHeadsDivisibleByQueryGroups;
extern const RuleInfo kHeadDimNotWhole;
extern const RuleInfo kFfnSizeDivisibleByTp;
extern const RuleInfo kMlaIncompatibleOptions;
extern const RuleInfo kLinearAttentionHeadsDivisibility;
extern const RuleInfo kPreferTpOverPpInNvlinkDomain;
// == declarations: sequence parallelism ==
extern const RuleInfo kSequenceParallelWithoutTp;
extern const RuleInfo kMoeTpRequiresSequenceParallel;
extern const RuleInfo kTpCommOverlapWithoutSequenceParallel;
extern const RuleInfo kDistributeSavedActivationsWithSequenceParallel;
extern const RuleInfo kTpWithoutSequenceParallel;
// == declarations: context parallelism ==
extern const RuleInfo kCpSeqLengthDivisibility;
extern const RuleInfo kCpSequenceParallelDivisibility;
extern const RuleInfo kHierarchicalCpSizesMissing;
extern const RuleInfo kHierarchicalCpSizesProduct;
extern const RuleInfo kCpCommTypeInvalid;
extern const RuleInfo kCpA2aHeadsDivisibility;
extern const RuleInfo kCpUnsupportedAttention;
extern const RuleInfo kHybridContextParallelUnsupported;
extern const RuleInfo kCpFinetuningNeedsPerTokenLoss;
extern const RuleInfo kModelDatasetSeqLengthMismatch;
extern const RuleInfo kHierarchicalCpWithDecentralizedPg;
extern const RuleInfo kLongSequenceWithoutContextParallel;
extern const RuleInfo kEvalCpSeqLengthDivisibility;
// == declarations: pipeline parallelism ==
extern const RuleInfo kLayersDivisibleByPp;
extern const RuleInfo kPipelineBubble;
extern const RuleInfo kPipelineLayoutInvalid;
extern const RuleInfo kPipelineLayoutMismatch;
extern const RuleInfo kPipelineSplitOptionsConflict;
extern const RuleInfo kVirtualPipelineNeedsPp;
extern const RuleInfo kPipelineP2pCommConflict;
extern const RuleInfo kDeferEmbeddingWgradInvalid;
// == declarations: batch ==
extern const RuleInfo kGlobalBatchDivisibility;
extern const RuleInfo kInterleavedMicrobatchCount;
extern const RuleInfo kBatchSizeNotPositive;
extern const RuleInfo kNoMicrobatches;
extern const RuleInfo kEvalBatchDivisibility;
extern const RuleInfo kBatchSizeRampup;
extern const RuleInfo kStepBatchSizeSchedule;
extern const RuleInfo kTrainingLengthInvalid;
extern const RuleInfo kSchedulerUnitsMismatch;
extern const RuleInfo kSchedulerStepsInvalid;
extern const RuleInfo kLrWarmupExceedsDecay;
extern const RuleInfo kWeightDecayScheduleInvalid;
extern const RuleInfo kSchedulerCheckpointConflict;
extern const RuleInfo kNumEpochsUnsupported;
extern const RuleInfo kPackedSequenceMicroBatch;
extern const RuleInfo kSequencePackingConflict;
// == declarations: mixture of experts ==
extern const RuleInfo kEpDividesExperts;
extern const RuleInfo kEpOnDenseModel;
extern const RuleInfo kMoeNumExpertsNotPositive;
extern const RuleInfo kMoeFfnHiddenSizeWithoutExperts;
extern const RuleInfo kMoeLinearBiasUnsupported;
extern const RuleInfo kMoeRouterTopkInvalid;
extern const RuleInfo kMoeGroupLimitedRoutingInvalid;
extern const RuleInfo kMoeCapacityFactorInvalid;
extern const RuleInfo kMoeSharedExpertOverlapInvalid;
extern const RuleInfo kMoeExpertBiasScoreFunction;
extern const RuleInfo kMoeLoadBalancingInvalid;
extern const RuleInfo kMoeRouterPaddingInvalid;
extern const RuleInfo kMoeRouterDtypeNotFp32;
extern const RuleInfo kAllgatherDispatcherVariableSeqLengths;
extern const RuleInfo kFlexDispatcherInvalid;
extern const RuleInfo kMoePrecisionUnsupported;
extern const RuleInfo kMoeLayerFreqInvalid;
extern const RuleInfo kMoeLatentSizeInvalid;
extern const RuleInfo kMoeGroupedWeightsRequireGroupedGemm;
extern const RuleInfo kInferenceOptimizedMoeUnsupported;
extern const RuleInfo kMtpPositionEmbeddingUnsupported;
extern const RuleInfo kMtpWithContextParallel;
extern const RuleInfo kEpOverlapPrerequisites;
extern const RuleInfo kDelayWgradWithoutEpOverlap;
extern const RuleInfo kEpOverlapOptionConflict;
extern const RuleInfo kFlexBackendWithoutFlexDispatcher;
extern const RuleInfo kFlexBackendUnsupportedGpu;
extern const RuleInfo kHybridepNvlinkDomainEnv;
extern const RuleInfo kEpCrossesNvlinkDomain;
// == declarations: recompute, offloading, precision ==
extern const RuleInfo kRecomputeSettings;
extern const RuleInfo kRecomputeMethodWithSelective;
extern const RuleInfo kRecomputeNumLayersRange;
extern const RuleInfo kDistributeSavedActivations;
extern const RuleInfo kRecomputeModulesUnknown;
extern const RuleInfo kRecomputeModulePrerequisites;
extern const RuleInfo kFp8RecomputeModules;
extern const RuleInfo kRecomputeModulesIgnored;
extern const RuleInfo kMoeLayerRecompute;
extern const RuleInfo kCpuOffloadingConstraints;
extern const RuleInfo kFineGrainedActivationOffloading;
extern const RuleInfo kCudaGraphsWithRecompute;
extern const RuleInfo kCudaGraphRngTracker;
extern const RuleInfo kCudaGraphScope;
extern const RuleInfo kFp16AndBf16;
extern const RuleInfo kPrecisionFlagWithoutPrecision;
extern const RuleInfo kFp4WithFp8;
extern const RuleInfo kFp8ParamSettings;
extern const RuleInfo kFirstLastLayersBf16;
extern const RuleInfo kFp8RecipeOptions;
extern const RuleInfo kFp8GemmShape;
// == declarations: optimizer, overlap, environment ==
extern const RuleInfo kLauncherGpuMismatch;
extern const RuleInfo kCudaDeviceMaxConnections;
extern const RuleInfo kCudaGraphNcclGraphRegister;
extern const RuleInfo kQkLayerScalingEnvMismatch;
extern const RuleInfo kDeterministicAttentionEnv;
extern const RuleInfo kOptimizerPrecisionSettings;
extern const RuleInfo kOptimizerCpuOffload;
extern const RuleInfo kOverlapParamGatherPrerequisites;
extern const RuleInfo kOverlapParamGatherWithOptimizerStep;
extern const RuleInfo kTorchFsdp2Restrictions;
extern const RuleInfo kMegatronFsdpRestrictions;
extern const RuleInfo kGlooGroupsRequired;
extern const RuleInfo kEmergingOptimizerDistributed;
extern const RuleInfo kDdpNumBuckets;
extern const RuleInfo kDdpBucketSizeUnits;
extern const RuleInfo kCommOverlapOverridesDdp;
extern const RuleInfo kExpandableSegmentsWithNcclUb;
// == declarations: memory ==
extern const RuleInfo kEstimatedOom;
extern const RuleInfo kMemoryHeadroom;
extern const RuleInfo kDistributedOptimizerOff;

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
    &kNoTrainingJob,
    &kUncheckedJob,
    // == list: config keys and values ==
    &kUnknownKey,
    &kValueTypeMismatch,
    &kFlatKeyOnBuilderModel,
    &kPrecisionOverriddenByMixedPrecision,
    &kNullSectionWithoutTarget,
    &kPlaceholderValue,
    &kDistributedOptimizerSettingsSync,
    &kOptimizerPrecisionMismatch,
    &kMxfp8ParamGatherBufferReuse,
    &kMegatronFsdpWithTorchFsdp2,
    &kMegatronFsdpOptions,
    &kMegatronFsdpV2Unsupported,
    &kFsdpDtensorWithoutMegatronFsdp,
    &kAsyncSaveRequirements,
    &kDecentralizedPgWithGloo,
    &kPeftWithoutPretrainedCheckpoint,
    &kHfCheckpointExport,
    &kDeterministicModeRequirements,
    &kFullIterationCudaGraphNanCheck,
    &kLocalCudaGraphScope,
    &kModeloptGradientAccumulationFusion,
    &kCheckpointLoadSettings,
    &kLoggerRunNameMissing,
    &kProfilerSettings,
    &kDatasetSettings,
    &kUnusedSuppression,
    &kSuppressionWithoutReason,
    &kProjectConfig,
    &kUnknownFlag,
    &kInterpolationMissingKey,
    &kInterpolationCycle,
    // == list: world size and process groups ==
    &kWorldSizeDivisibility,
    &kExpertWorldSizeDivisibility,
    &kTpPpDpMappingDpMismatch,
    &kDistributedOptimizerInstancesDivisibility,
    &kTpWeightShardsInvalid,
    &kSharpGroupInvalid,
    &kPipelineCommBackendInvalid,
    &kExpertTensorParallelUnset,
    // == list: tensor parallelism and model shape ==
    &kHeadsDivisibleByTp,
    &kQueryGroupsDivisibleByTp,
    &kTpCrossesNvlinkDomain,
    &kHeadsDivisibleByQueryGroups,
    &kHeadDimNotWhole,
    &kFfnSizeDivisibleByTp,
    &kMlaIncompatibleOptions,
    &kLinearAttentionHeadsDivisibility,
    &kPreferTpOverPpInNvlinkDomain,
    // == list: sequence parallelism ==
    &kSequenceParallelWithoutTp,
    &kMoeTpRequiresSequenceParallel,
    &kTpCommOverlapWithoutSequenceParallel,
    &kDistributeSavedActivationsWithSequenceParallel,
    &kTpWithoutSequenceParallel,
    // == list: context parallelism ==
    &kCpSeqLengthDivisibility,
    &kCpSequenceParallelDivisibility,
    &kHierarchicalCpSizesMissing,
    &kHierarchicalCpSizesProduct,
    &kCpCommTypeInvalid,
    &kCpA2aHeadsDivisibility,
    &kCpUnsupportedAttention,
    &kHybridContextParallelUnsupported,
    &kCpFinetuningNeedsPerTokenLoss,
    &kModelDatasetSeqLengthMismatch,
    &kHierarchicalCpWithDecentralizedPg,
    &kLongSequenceWithoutContextParallel,
    &kEvalCpSeqLengthDivisibility,
    // == list: pipeline parallelism ==
    &kLayersDivisibleByPp,
    &kPipelineBubble,
    &kPipelineLayoutInvalid,
    &kPipelineLayoutMismatch,
    &kPipelineSplitOptionsConflict,
    &kVirtualPipelineNeedsPp,
    &kPipelineP2pCommConflict,
    &kDeferEmbeddingWgradInvalid,
    // == list: batch ==
    &kGlobalBatchDivisibility,
    &kInterleavedMicrobatchCount,
    &kBatchSizeNotPositive,
    &kNoMicrobatches,
    &kEvalBatchDivisibility,
    &kBatchSizeRampup,
    &kStepBatchSizeSchedule,
    &kTrainingLengthInvalid,
    &kSchedulerUnitsMismatch,
    &kSchedulerStepsInvalid,
    &kLrWarmupExceedsDecay,
    &kWeightDecayScheduleInvalid,
    &kSchedulerCheckpointConflict,
    &kNumEpochsUnsupported,
    &kPackedSequenceMicroBatch,
    &kSequencePackingConflict,
    // == list: mixture of experts ==
    &kEpDividesExperts,
    &kEpOnDenseModel,
    &kMoeNumExpertsNotPositive,
    &kMoeFfnHiddenSizeWithoutExperts,
    &kMoeLinearBiasUnsupported,
    &kMoeRouterTopkInvalid,
    &kMoeGroupLimitedRoutingInvalid,
    &kMoeCapacityFactorInvalid,
    &kMoeSharedExpertOverlapInvalid,
    &kMoeExpertBiasScoreFunction,
    &kMoeLoadBalancingInvalid,
    &kMoeRouterPaddingInvalid,
    &kMoeRouterDtypeNotFp32,
    &kAllgatherDispatcherVariableSeqLengths,
    &kFlexDispatcherInvalid,
    &kMoePrecisionUnsupported,
    &kMoeLayerFreqInvalid,
    &kMoeLatentSizeInvalid,
    &kMoeGroupedWeightsRequireGroupedGemm,
    &kInferenceOptimizedMoeUnsupported,
    &kMtpPositionEmbeddingUnsupported,
    &kMtpWithContextParallel,
    &kEpOverlapPrerequisites,
    &kDelayWgradWithoutEpOverlap,
    &kEpOverlapOptionConflict,
    &kFlexBackendWithoutFlexDispatcher,
    &kFlexBackendUnsupportedGpu,
    &kHybridepNvlinkDomainEnv,
    &kEpCrossesNvlinkDomain,
    // == list: recompute, offloading, precision ==
    &kRecomputeSettings,
    &kRecomputeMethodWithSelective,
    &kRecomputeNumLayersRange,
    &kDistributeSavedActivations,
    &kRecomputeModulesUnknown,
    &kRecomputeModulePrerequisites,
    &kFp8RecomputeModules,
    &kRecomputeModulesIgnored,
    &kMoeLayerRecompute,
    &kCpuOffloadingConstraints,
    &kFineGrainedActivationOffloading,
    &kCudaGraphsWithRecompute,
    &kCudaGraphRngTracker,
    &kCudaGraphScope,
    &kFp16AndBf16,
    &kPrecisionFlagWithoutPrecision,
    &kFp4WithFp8,
    &kFp8ParamSettings,
    &kFirstLastLayersBf16,
    &kFp8RecipeOptions,
    &kFp8GemmShape,
    // == list: optimizer, overlap, environment ==
    &kLauncherGpuMismatch,
    &kCudaDeviceMaxConnections,
    &kCudaGraphNcclGraphRegister,
    &kQkLayerScalingEnvMismatch,
    &kDeterministicAttentionEnv,
    &kOptimizerPrecisionSettings,
    &kOptimizerCpuOffload,
    &kOverlapParamGatherPrerequisites,
    &kOverlapParamGatherWithOptimizerStep,
    &kTorchFsdp2Restrictions,
    &kMegatronFsdpRestrictions,
    &kGlooGroupsRequired,
    &kEmergingOptimizerDistributed,
    &kDdpNumBuckets,
    &kDdpBucketSizeUnits,
    &kCommOverlapOverridesDdp,
    &kExpandableSegmentsWithNcclUb,
    // == list: memory ==
    &kEstimatedOom,
    &kMemoryHeadroom,
    &kDistributedOptimizerOff,
};

}  // namespace

RuleSet all_rules() { return RuleSet(kRules.data(), kRules.size()); }

}  // namespace mblint
