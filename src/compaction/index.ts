export { CompactionRequest } from './CompactionRequest.js';
export { CompactionResult, type StrategySkipReason } from './CompactionResult.js';
export { verifyCoverage, coveredIds, METADATA_COVERED_EVENT_IDS, METADATA_MASKED_FROM, type CoverageReport } from './coverage.js';
export {
  toCompactionTrigger,
  type CompactionTrigger,
  type CompactionTriggerFunction,
  type CompactionTriggerLike,
} from './CompactionTrigger.js';
export {
  toCompactionStrategy,
  type CompactionStrategy,
  type CompactionStrategyFunction,
  type CompactionStrategyLike,
  type StrategyPreview,
} from './CompactionStrategy.js';
export { snapToTurnStart } from './snapToTurnStart.js';
export { TurnCountTrigger } from './triggers/TurnCountTrigger.js';
export { TokenCountTrigger, type TokenCountTriggerOptions } from './triggers/TokenCountTrigger.js';
export { CompositeCompactionTrigger } from './triggers/CompositeCompactionTrigger.js';
export {
  SlidingWindowCompactionStrategy,
  type SlidingWindowCompactionStrategyOptions,
} from './strategies/SlidingWindowCompactionStrategy.js';
export {
  TurnWindowCompactionStrategy,
  type TurnWindowCompactionStrategyOptions,
} from './strategies/TurnWindowCompactionStrategy.js';
export {
  TokenCountCompactionStrategy,
  type TokenCountCompactionStrategyOptions,
} from './strategies/TokenCountCompactionStrategy.js';
export {
  SummarizingCompactionStrategy,
  type SummarizingStrategyOptions,
  type SummaryOutcome,
} from './strategies/SummarizingCompactionStrategy.js';
export {
  RecursiveSummarizationCompactionStrategy,
  RECURSIVE_SUMMARIZATION_SOURCE,
  type RecursiveSummarizationCompactionStrategyOptions,
} from './strategies/RecursiveSummarizationCompactionStrategy.js';
export {
  AdditiveSummarizationCompactionStrategy,
  ADDITIVE_SUMMARIZATION_SOURCE,
  type AdditiveSummarizationCompactionStrategyOptions,
} from './strategies/AdditiveSummarizationCompactionStrategy.js';
export {
  SUMMARY_FAILURE_MODES,
  SUMMARY_METADATA,
  type SummaryFailureMode,
  type SummarizationFailureListener,
} from './strategies/summaryEvents.js';
export {
  toolPairSafeCut,
  agentSafeCut,
  stepStarts,
  isStepStart,
  cutAt,
  CUT_WITHIN_TURN_MODES,
  DEFAULT_CUT_WITHIN_TURN,
  type CutWithinTurn,
} from './cutWithinTurn.js';
export { originalIdOf } from './strategies/replaceInPlace.js';
export {
  ObservationMaskingCompactionStrategy,
  maskExcerpt,
  OBSERVATION_MASKING_SOURCE,
  type ObservationMaskingCompactionStrategyOptions,
} from './strategies/ObservationMaskingCompactionStrategy.js';
export {
  ContentPolicyCompactionStrategy,
  defaultToolStatus,
  strippedResponse,
  strippedArguments,
  CONTENT_POLICY_SOURCE,
  type ContentPolicyCompactionStrategyOptions,
  type KeepOrStrip,
  type ToolCallPolicy,
  type ToolStatus,
} from './strategies/ContentPolicyCompactionStrategy.js';
export {
  CompactionPipeline,
  type CompactionPipelineOptions,
  type PipelineRun,
  type PipelineStageReport,
} from './strategies/CompactionPipeline.js';
export {
  BUILT_IN_MODEL_CONTEXT_WINDOWS,
  contextWindowOf,
  registerModelContextWindows,
  clearRegisteredModelContextWindows,
} from './modelContextWindows.js';
export { ContextWindowTrigger, type ContextWindowTriggerOptions } from './triggers/ContextWindowTrigger.js';
export { IdleTimeTrigger, type IdleTimeTriggerOptions } from './triggers/IdleTimeTrigger.js';
export { CacheAwareTrigger, type CacheAwareTriggerOptions } from './triggers/CacheAwareTrigger.js';
export { TokenGrowthTrigger, type TokenGrowthTriggerOptions } from './triggers/TokenGrowthTrigger.js';
export {
  cacheAwareCompaction,
  type CacheAwareCompactionOptions,
  type CacheAwareCompactionProfile,
} from './cacheAwareCompaction.js';
