// 'session-compaction/spi': building blocks for implementing a repository, a trigger, a strategy, a summariser
// or a retriever of your own. Everything an application needs is in the package root.

// Model helpers
export { MESSAGE_TYPES, isMessageType, messageText, messageName, hasToolCalls, freezeMessage } from './session/Message.js';
export { type SessionEventInit } from './session/SessionEvent.js';
export { DEFAULT_TIME_TO_LIVE_MS, type SessionInit, type SessionLike } from './session/Session.js';
export { isTurnStart, splitTurns, countTurns, type TurnSplit } from './session/turns.js';
export { formatMessage, type FormatOptions } from './session/formatEvent.js';
export { type FromOpenAIOptions } from './providers/openai/OpenAIMessages.js';

// Repositories: filtering, encoding, the contract's helpers
export { applyEventWindow, isBranchVisible, type MatchMode } from './filter/EventFilter.js';
export { encodeEvent, decodeEvent, escapeLike, type StoredEvent } from './repository/eventCodec.js';
export { MAX_INDEXED_CHARACTERS } from './repository/eventSearch.js';
export { type PostgresPool } from './backends/postgres/PostgresSessionRepository.js';
// Repository capabilities: what a store can do beyond SessionRepository, each with one type guard.
export { type AtomicInsertRepository, isAtomicInsertRepository } from './repository/AtomicInsertRepository.js';
export {
  type MetadataUpdatingRepository,
  type SessionMetadataUpdate,
  isMetadataUpdatingRepository,
} from './repository/MetadataUpdatingRepository.js';
export {
  type EventLogStateRepository,
  type EventLogState,
  isEventLogStateRepository,
} from './repository/EventLogStateRepository.js';
export { type RedactionScopeRepository, isRedactionScopeRepository } from './repository/RedactionScopeRepository.js';
export { type CompactionRecordRepository, isCompactionRecordRepository } from './repository/CompactionRecordRepository.js';
export { type BatchAppendRepository, isBatchAppendRepository } from './repository/BatchAppendRepository.js';
export {
  type EnumerableRepository,
  type ListSessionIdsOptions,
  type SessionIdPage,
  isEnumerableRepository,
} from './repository/EnumerableRepository.js';
export {
  type SessionListingRepository,
  type ListSessionsOptions,
  type SessionListing,
  type SessionListingPage,
  isSessionListingRepository,
} from './repository/SessionListingRepository.js';
export {
  type SearchableRepository,
  type EventSearchOptions,
  type ScoredEvent,
  isSearchableRepository,
} from './repository/SearchableRepository.js';
export {
  type EventNeighbourhoodRepository,
  isEventNeighbourhoodRepository,
  MAX_NEIGHBOUR_RADIUS,
} from './repository/EventNeighbourhoodRepository.js';
export {
  type NeighbourSearchRepository,
  type ScoredEventsWithNeighbours,
  isNeighbourSearchRepository,
} from './repository/NeighbourSearchRepository.js';
export {
  type ErasureRepository,
  type EraseSessionOptions,
  type ErasedSession,
  type Tombstone,
  isErasureRepository,
  ownerHash,
  sessionDeletedError,
  TOMBSTONE_SCHEMA_VERSION,
} from './repository/ErasureRepository.js';
export {
  type ForkingRepository,
  type ForkRequest,
  type ForkOutcome,
  isForkingRepository,
} from './repository/ForkingRepository.js';
export {
  type UserErasureRepository,
  isUserErasureRepository,
  userErasureInProgressError,
  USER_ERASURE_SCHEMA_VERSION,
} from './repository/UserErasureRepository.js';
export { type EventRewritingRepository, isEventRewritingRepository } from './repository/EventRewritingRepository.js';
export {
  type RetentionRepository,
  type ArchivePurgeCriteria,
  type SessionActivity,
  type SessionActivityPage,
  isRetentionRepository,
} from './repository/RetentionRepository.js';
export { type StorageReclaimingRepository, isStorageReclaimingRepository } from './repository/StorageReclaimingRepository.js';
// What an erasure reports per kind of event, as the built-in repositories count it.
export { type EventKindCounts, countKinds } from './repository/eventKinds.js';
export { type SessionLifecycleOperations } from './repository/SessionRepository.js';
export type { MigrateOptions, MigrationStep, SchemaStatus } from './repository/schemaMigrations.js';
export { type MigratableRepository, isMigratableRepository } from './repository/MigratableRepository.js';
export {
  encodeCompactionRecord,
  decodeCompactionRecord,
  summarizeCompactionRecord,
  encodeCompactionSummary,
  decodeCompactionSummary,
  COMPACTION_RECORD_SCHEMA_VERSION,
  COMPACTION_SUMMARY_SCHEMA_VERSION,
  type CompactionRecordRange,
  type StoredCompactionSummary,
} from './repository/CompactionRecord.js';
export { type CompactionAccessOptions } from './service/CompactionReverter.js';
export { METADATA_FORKED_FROM, type ForkOrigin } from './service/SessionForker.js';
export { type RedisClient } from './backends/redis/RedisSessionRepository.js';

// Tokens
export { CharacterTokenCountEstimator } from './tokens/TokenCountEstimator.js';
export { type TiktokenEncodingName, type TiktokenTokenCountEstimatorOptions } from './tokens/TiktokenTokenCountEstimator.js';
export { estimateEventTokens, estimateEventsTokens } from './tokens/eventTokens.js';
export { PROVIDER_PRESETS, requireModelPrices, requirePromptCacheRules, type PromptCacheRules } from './tokens/ModelPrices.js';
export { priceUsage } from './tokens/UsageRecord.js';
export { calibrationRatio, updateCalibration, METADATA_TOKEN_CALIBRATION, type TokenCalibration } from './tokens/calibration.js';

// Triggers and strategies
export { toCompactionTrigger, type CompactionTriggerFunction } from './compaction/CompactionTrigger.js';
export { toCompactionStrategy, type CompactionStrategyFunction, type StrategyPreview } from './compaction/CompactionStrategy.js';
export { type StrategySkipReason } from './compaction/CompactionResult.js';
export {
  ANTHROPIC_NATIVE_COMPACTION,
  METADATA_NATIVE_COMPACTION,
  NATIVE_SUMMARY_METHOD,
  OPENAI_NATIVE_COMPACTION,
  isNativeCompactionShadow,
  nativeCompactionPayload,
  nativeCompactionPlan,
  nativeCompactionRecord,
  withoutNativeCompaction,
  type NativeCompactionInput,
  type NativeCompactionOutput,
  type NativeCompactionRecord,
} from './compaction/nativeCompaction.js';
export { METADATA_PORTABLE_SUMMARY_METHOD, type PreviewableStrategy } from './compaction/strategies/NativeCompactionStrategy.js';
export { verifyCoverage, coveredIds, METADATA_COVERED_EVENT_IDS, METADATA_MASKED_FROM } from './compaction/coverage.js';
export { originalIdOf } from './compaction/strategies/replaceInPlace.js';
export {
  SUMMARY_METADATA,
  SUMMARY_FAILURE_MODES,
  type SummarizationFailureListener,
} from './compaction/strategies/summaryEvents.js';
export {
  SummarizingCompactionStrategy,
  type SummarizingStrategyOptions,
  type SummaryOutcome,
} from './compaction/strategies/SummarizingCompactionStrategy.js';
export { CUT_WITHIN_TURN_MODES, DEFAULT_CUT_WITHIN_TURN, type CutWithinTurn } from './compaction/cutWithinTurn.js';
export { BUILT_IN_MODEL_CONTEXT_WINDOWS } from './compaction/modelContextWindows.js';
export { type SlidingWindowCompactionStrategyOptions } from './compaction/strategies/SlidingWindowCompactionStrategy.js';
export { type TurnWindowCompactionStrategyOptions } from './compaction/strategies/TurnWindowCompactionStrategy.js';
export { type TokenCountCompactionStrategyOptions } from './compaction/strategies/TokenCountCompactionStrategy.js';
export {
  RECURSIVE_SUMMARIZATION_SOURCE,
  type RecursiveSummarizationCompactionStrategyOptions,
} from './compaction/strategies/RecursiveSummarizationCompactionStrategy.js';
export {
  ADDITIVE_SUMMARIZATION_SOURCE,
  type AdditiveSummarizationCompactionStrategyOptions,
} from './compaction/strategies/AdditiveSummarizationCompactionStrategy.js';
export { CHECKPOINT_METADATA, DEFAULT_COMPRESSION_LEVELS, type CompressionLevel } from './compaction/strategies/checkpoints.js';
export {
  DEFAULT_PRESSURE_THRESHOLDS,
  type PressureBand,
  type PressureBandCompactionStrategyOptions,
  type PressureThresholds,
} from './compaction/strategies/PressureBandCompactionStrategy.js';
export type {
  CompactionProfile,
  ProfileContext,
  ProfileSettings,
  ProfileTriggerSettings,
} from './compaction/profiles/CompactionProfile.js';
export { type ProfileDefinition } from './compaction/profiles/CompactionProfileRegistry.js';
export { BUILT_IN_PROFILES } from './compaction/profiles/builtInProfiles.js';
export { parseConfiguration, validateConfiguration, type ParseConfigurationOptions } from './config/loadConfiguration.js';
export { DEFAULT_CONFIGURED_CONTEXT_WINDOW_TOKENS, type ConfiguredRepository } from './config/ResolvedConfiguration.js';
export type {
  ConfigurationIssue,
  ProfileConfiguration,
  RecallConfiguration,
  RepositoryConfiguration,
  RetentionConfiguration,
  SummarizerConfiguration,
} from './config/SessionCompactionConfiguration.js';
export {
  OBSERVATION_MASKING_SOURCE,
  maskExcerpt,
  type ObservationMaskingCompactionStrategyOptions,
} from './compaction/strategies/ObservationMaskingCompactionStrategy.js';
export {
  CONTENT_POLICY_SOURCE,
  defaultToolStatus,
  type ContentPolicyCompactionStrategyOptions,
  type KeepOrStrip,
  type ToolCallPolicy,
  type ToolStatus,
} from './compaction/strategies/ContentPolicyCompactionStrategy.js';
export { RewriteDeferral, isRewriteOnly, type RewriteDeferralOptions } from './compaction/strategies/rewriteDeferral.js';
export {
  type CompactionPipelineOptions,
  type CompactionPipelineStage,
  type PipelineRun,
  type PipelineStageReport,
} from './compaction/strategies/CompactionPipeline.js';
export { type TokenCountTriggerOptions } from './compaction/triggers/TokenCountTrigger.js';
export { type ContextWindowTriggerOptions } from './compaction/triggers/ContextWindowTrigger.js';
export { type IdleTimeTriggerOptions } from './compaction/triggers/IdleTimeTrigger.js';
export {
  DEFAULT_PROMPT_CACHE_TTL_MS,
  idleSinceLastModelCall,
  type CacheAwareTriggerOptions,
} from './compaction/triggers/CacheAwareTrigger.js';
export { type TokenGrowthTriggerOptions } from './compaction/triggers/TokenGrowthTrigger.js';

// Summarisers
export { type ChatUsage, type ChatUsageListener } from './summarization/ChatClient.js';
export { type SummarizationErrorKind } from './summarization/SummarizationError.js';
export { type ChatCompletionOutcome } from './providers/openai/OpenAIChatClient.js';
export { type ExtractiveSummarizerOptions } from './summarization/ExtractiveSummarizer.js';
export { mechanicalSummary } from './summarization/mechanicalSummary.js';
export {
  DEFAULT_SUMMARY_SYSTEM_PROMPT,
  DEFAULT_SUMMARY_SHADOW_PROMPT,
  DEFAULT_SUMMARY_UPDATE_PROMPT,
  buildSummaryPrompt,
  type SummaryPromptParts,
} from './summarization/prompts.js';
export {
  salientIdentifiers,
  type SummaryQualityGateOptions,
  type SummaryQualityVerdict,
} from './summarization/SummaryQualityGate.js';

// Service and integration
export { SessionServiceEvents, type SessionServiceEventName, type CompactionSkipReason } from './service/SessionServiceEvents.js';
export { DEFAULT_RETRIEVAL_LIMIT } from './recall/Retriever.js';
export { DEFAULT_MAX_INDEXED_SESSIONS } from './recall/Bm25Retriever.js';
export { DEFAULT_MAX_CACHED_VECTORS, type EmbeddingRetrieverOptions } from './recall/EmbeddingRetriever.js';
export { DEFAULT_RRF_K, type HybridRetrieverOptions } from './recall/HybridRetriever.js';
export { type RepositoryRetrieverOptions } from './recall/RepositoryRetriever.js';
export { type OpenAIEmbeddingsOptions } from './providers/openai/openAIEmbeddings.js';
export {
  type LocalEmbeddingsOptions,
  type LocalEmbedFunction,
  type LocalEmbeddingPooling,
  type LocalEmbeddingDtype,
} from './providers/transformers/localEmbeddings.js';
export {
  type ChatProvider,
  type ChatProviderCall,
  type ChatProviderOutcome,
  type ChatProviderTypes,
  type ChatTurnSteps,
  type PersistableMessage,
  type StepMessage,
  type StepWindow,
  type StoredStep,
} from './chat/ChatProvider.js';
export {
  classifyRefusal,
  detectContextOverflow,
  genericRefusal,
  type ContextOverflow,
  refusalFromBody,
  type ProviderRefusal,
  type RefusalExtractor,
} from './chat/contextOverflow.js';
export { EmergencyCompactionStrategy } from './chat/EmergencyCompactionStrategy.js';
export { raiseCalibration } from './tokens/calibration.js';
export {
  OpenAIChatProvider,
  type OpenAIChatParams,
  type OpenAIChatProviderOptions,
  type OpenAIChatTypes,
} from './providers/openai/OpenAIChatProvider.js';
export { METADATA_USAGE, type ProviderTokenUsage } from './chat/SessionUsageRecorder.js';
export { type SessionMemoryService, type ContextStatus } from './chat/SessionMemoryTypes.js';
export {
  SESSION_ID_CONTEXT_KEY,
  USER_ID_CONTEXT_KEY,
  randomEventIdGenerator,
  type EventIdContext,
  type SessionEventIdGenerator,
  type SessionEventIdGeneratorFunction,
  type SessionEventIdGeneratorLike,
} from './chat/eventIdGenerators.js';
export { ChatCompletionChunkAggregator, type AggregatedCompletion } from './providers/openai/ChatCompletionChunkAggregator.js';
export { SessionCalibrator, type SessionMetadataStore } from './chat/SessionCalibrator.js';
export { ConversationSearchTool, type ConversationSearchToolOptions } from './providers/openai/ConversationSearchTool.js';
export { CrossSessionSearchTool, type CrossSessionSearchToolOptions } from './providers/openai/CrossSessionSearchTool.js';
export { type RecallToolContext } from './chat/recallSupport.js';
export { type RepositoryKind, type RepositorySettings } from './di/repositoryFactories.js';
export { accessDeniedMessage } from './service/sessionAccess.js';
export { TELEMETRY_ATTRIBUTES, TELEMETRY_METRICS, TELEMETRY_SPANS } from './telemetry/index.js';
export { INSTRUMENTATION_SCOPE } from './telemetry/telemetry.js';
export { instrumentRepository } from './repository/instrumentRepository.js';
export { instrumentRetriever } from './recall/instrumentRetriever.js';
export {
  DEFAULT_RECALL_SHARE,
  DEFAULT_RECALL_NEIGHBORS,
  DEFAULT_RECALL_LIMIT,
  type AssembledParts,
  type ContextAssemblerOptions,
  type ContextTokens,
  type RecallPlacement,
} from './recall/ContextAssembler.js';
export { type FallbackChatClientOptions } from './summarization/FallbackChatClient.js';
export { type ChunkingChatClientOptions } from './summarization/ChunkingChatClient.js';
export {
  type BeforeCompactionContext,
  type BeforeCompactionDecision,
  type AfterCompactionContext,
} from './service/CompactionHooks.js';
export { COMPACTION_STATS_METADATA, type MetadataUpdater } from './service/compactionStats.js';
export { DEFAULT_TOMBSTONE_TTL_MS } from './service/DefaultSessionService.js';
export { DEFAULT_REDACTION_MARKER } from './service/lifecycle/EventRedactor.js';
export type { ErasureReason } from './service/lifecycle/reports.js';
export {
  pairOpenAIToolMessages,
  MISSING_TOOL_RESULT,
  type ToolPairingRepair,
  type PairOpenAIToolMessagesOptions,
} from './providers/openai/openAIToolPairing.js';
export {
  METADATA_INCOMPLETE,
  METADATA_FINISH_REASON,
  isIncompleteReply,
  incompleteReplyMetadata,
} from './session/incompleteReplies.js';
// The one pairing rule of tool calls and results (answered, pending, abandoned), for a custom ChatProvider's prompts.
export {
  planToolPairing,
  toolCallStates,
  toolExchangeOf,
  type ResultDisposition,
  type ToolCallState,
  type ToolExchangeMessage,
  type ToolPairingInsert,
  type ToolPairingOptions,
  type ToolPairingPlan,
} from './session/toolCallPairing.js';
export { type ChatRequest, type ChatReply } from './summarization/ChatClient.js';
export { type KnownWindow } from './service/SessionService.js';
// Option and detail types of root classes: named by implementers and wrappers, not needed to use the classes.
export { type RepositoryBackend } from './errors.js';
export { type ProviderPreset } from './tokens/ModelPrices.js';
export { type OpenAIChatClientOptions } from './providers/openai/OpenAIChatClient.js';
export { type CompactionLease, type CompactionLockSettings, type CompactionLockAcquireOptions } from './lock/CompactionLock.js';
export { type Bm25RetrieverOptions } from './recall/Bm25Retriever.js';
export { type SessionUsageTotals } from './chat/SessionUsageRecorder.js';
export { type RecallToolsOptions } from './providers/openai/RecallTools.js';
