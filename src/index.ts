// The package root: what an application needs. Helpers for implementing a repository, strategy or retriever
// of your own are in 'session-compaction/spi'; each backend (with its options type) and the OpenAI integration
// also have a subpath; observability is in 'session-compaction/telemetry', the data-lifecycle reports and
// policies in 'session-compaction/lifecycle', every retriever in 'session-compaction/recall'.
export { InvalidArgumentError, IllegalStateError, RepositoryConnectionError, CorruptedRecordError } from './errors.js';
export { createDefaultLogger, type Logger } from './logging.js';

// Model
export {
  Messages,
  type Message,
  type MessageType,
  type ToolCall,
  type ToolResponse,
  type UserMessage,
  type SystemMessage,
  type AssistantMessage,
  type ToolMessage,
} from './session/Message.js';
export { SessionEvent, type EventMetadata } from './session/SessionEvent.js';
export { Session } from './session/Session.js';
export { type CreateSessionRequest } from './session/CreateSessionRequest.js';
export { toOpenAIMessages, fromOpenAIMessage, type OpenAIMessageParam, type ToOpenAIOptions } from './providers/openai/index.js';
export { formatEvent } from './session/formatEvent.js';

// Reading
export { EventFilter, type EventFilterOptions } from './filter/EventFilter.js';
export { MessageFilter } from './filter/MessageFilter.js';

// Tokens
export { type TokenCountEstimator } from './tokens/TokenCountEstimator.js';
export { TiktokenTokenCountEstimator, defaultTokenCountEstimator } from './tokens/TiktokenTokenCountEstimator.js';
export { providerPreset, type ModelPrices } from './tokens/ModelPrices.js';
export { type UsageRecord } from './tokens/UsageRecord.js';

// Storage
export { type SessionRepository } from './repository/SessionRepository.js';
export { InMemorySessionRepository } from './repository/InMemorySessionRepository.js';
export { SqliteSessionRepository } from './backends/sqlite/SqliteSessionRepository.js';
export { PostgresSessionRepository } from './backends/postgres/PostgresSessionRepository.js';
export { RedisSessionRepository } from './backends/redis/RedisSessionRepository.js';
export { SchemaVersionError } from './repository/SchemaVersionError.js';

// Summarisation
export { type ChatClient } from './summarization/ChatClient.js';
export { SummarizationError } from './summarization/SummarizationError.js';
export { OpenAIChatClient } from './providers/openai/index.js';
export { ExtractiveSummarizer } from './summarization/ExtractiveSummarizer.js';
export { SummaryQualityGate } from './summarization/SummaryQualityGate.js';
export { FallbackChatClient } from './summarization/FallbackChatClient.js';
export { ChunkingChatClient } from './summarization/ChunkingChatClient.js';

// Compaction
export { CompactionRequest } from './compaction/CompactionRequest.js';
export { CompactionResult } from './compaction/CompactionResult.js';
export { type CompactionTrigger, type CompactionTriggerLike } from './compaction/CompactionTrigger.js';
export { type CompactionStrategy, type CompactionStrategyLike } from './compaction/CompactionStrategy.js';
export { snapToTurnStart } from './compaction/snapToTurnStart.js';
export { type CoverageReport } from './compaction/coverage.js';
export { type SummaryFailureMode } from './compaction/strategies/summaryEvents.js';
export { TurnCountTrigger } from './compaction/triggers/TurnCountTrigger.js';
export { TokenCountTrigger } from './compaction/triggers/TokenCountTrigger.js';
export { CompositeCompactionTrigger } from './compaction/triggers/CompositeCompactionTrigger.js';
export { ContextWindowTrigger } from './compaction/triggers/ContextWindowTrigger.js';
export { IdleTimeTrigger } from './compaction/triggers/IdleTimeTrigger.js';
export { TokenGrowthTrigger } from './compaction/triggers/TokenGrowthTrigger.js';
export { CacheAwareTrigger } from './compaction/triggers/CacheAwareTrigger.js';
export { cacheAwareCompaction } from './compaction/cacheAwareCompaction.js';
export { contextWindowOf, registerModelContextWindows } from './compaction/modelContextWindows.js';
export { SlidingWindowCompactionStrategy } from './compaction/strategies/SlidingWindowCompactionStrategy.js';
export { TurnWindowCompactionStrategy } from './compaction/strategies/TurnWindowCompactionStrategy.js';
export { TokenCountCompactionStrategy } from './compaction/strategies/TokenCountCompactionStrategy.js';
export { RecursiveSummarizationCompactionStrategy } from './compaction/strategies/RecursiveSummarizationCompactionStrategy.js';
export { AdditiveSummarizationCompactionStrategy } from './compaction/strategies/AdditiveSummarizationCompactionStrategy.js';
export { ObservationMaskingCompactionStrategy } from './compaction/strategies/ObservationMaskingCompactionStrategy.js';
export { ContentPolicyCompactionStrategy } from './compaction/strategies/ContentPolicyCompactionStrategy.js';
export { CompactionPipeline } from './compaction/strategies/CompactionPipeline.js';
export { PressureBandCompactionStrategy } from './compaction/strategies/PressureBandCompactionStrategy.js';
export {
  NativeCompactionStrategy,
  type NativeCompactionStrategyOptions,
  type PortableSummary,
} from './compaction/strategies/NativeCompactionStrategy.js';
export { type NativeCompactor } from './compaction/nativeCompaction.js';
export { CompactionProfileRegistry } from './compaction/profiles/CompactionProfileRegistry.js';
export { type CompactionSetup } from './compaction/profiles/CompactionProfile.js';

// The service
export {
  type SessionService,
  type AppendMessageOptions,
  type CompactionPreview,
  type PreviewOptions,
  type CompactOptions,
} from './service/SessionService.js';
export { type CompactionRecord, type CompactionRecordSummary } from './repository/CompactionRecord.js';
export { type CompactionRange } from './compaction/CompactionRange.js';
export { type RevertResult, type ListCompactionsOptions } from './service/CompactionReverter.js';
export { type ForkSessionOptions } from './service/SessionForker.js';
export { type SessionServiceEventMap } from './service/SessionServiceEvents.js';
export { DefaultSessionService, type DefaultSessionServiceOptions } from './service/DefaultSessionService.js';
export { type CompactionHooks } from './service/CompactionHooks.js';
export { type CompactionLock } from './lock/CompactionLock.js';
export { InProcessCompactionLock } from './lock/InProcessCompactionLock.js';

// Recall
export {
  type Retriever,
  type RetrievalRequest,
  type RetrievedEvent,
  type RetrievedWithNeighbours,
  type PreparedRetrieval,
} from './recall/Retriever.js';
export { Bm25Retriever } from './recall/Bm25Retriever.js';
export { RepositoryRetriever } from './recall/RepositoryRetriever.js';
export { EmbeddingRetriever, type EmbedFunction } from './recall/EmbeddingRetriever.js';
export { HybridRetriever } from './recall/HybridRetriever.js';
export { openAIEmbeddings } from './providers/openai/index.js';
export { localEmbeddings } from './providers/transformers/index.js';
export { ContextAssembler, type AssembleRequest, type AssembledContext, type RecallSettings } from './recall/ContextAssembler.js';

// Chat integration
export { SessionMemory } from './chat/SessionMemory.js';
export {
  type SessionMemoryOptions,
  type SessionMemoryRequest,
  type SessionMemoryResponse,
  type SessionMemoryStreamEvent,
  type SessionMemoryRecallOptions,
  type SessionMemoryCompactionOptions,
} from './chat/SessionMemoryTypes.js';
export { ContextOverflowError } from './chat/ContextOverflowError.js';
export { type ContextOverflow } from './chat/contextOverflow.js';
export { sessionUsageTotals } from './chat/SessionUsageRecorder.js';
export { IdempotentSessionEventIdGenerator } from './chat/IdempotentSessionEventIdGenerator.js';
export { RecallTools } from './providers/openai/index.js';

// Configuration file and profiles
export { loadConfigurationFile } from './config/loadConfiguration.js';
export { ResolvedConfiguration } from './config/ResolvedConfiguration.js';
export { ConfigurationError, type SessionCompactionConfiguration } from './config/SessionCompactionConfiguration.js';

// Dependency injection
export { TYPES } from './di/types.js';
export {
  createSessionCompactionModule,
  closeSessionCompaction,
  type SessionCompactionModuleOptions,
  type BindingSource,
} from './di/createSessionCompactionModule.js';
