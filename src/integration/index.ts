export { SessionMemory } from './SessionMemory.js';
export {
  type SessionMemoryOptions,
  type SessionMemoryRecallOptions,
  type SessionMemoryRequest,
  type SessionMemoryRequestBase,
  type SessionMemoryResponse,
  type SessionMemoryStreamEvent,
  type SessionMemoryService,
  type ContextStatus,
} from './SessionMemoryTypes.js';
export {
  type ChatProvider,
  type ChatProviderCall,
  type ChatProviderOutcome,
  type ChatProviderTypes,
  type PersistableMessage,
} from './ChatProvider.js';
export {
  OpenAIChatProvider,
  type OpenAIChatParams,
  type OpenAIChatProviderOptions,
  type OpenAIChatTypes,
} from './OpenAIChatProvider.js';
export {
  SESSION_ID_CONTEXT_KEY,
  USER_ID_CONTEXT_KEY,
  randomEventIdGenerator,
  type EventIdContext,
  type SessionEventIdGenerator,
  type SessionEventIdGeneratorFunction,
  type SessionEventIdGeneratorLike,
} from './eventIdGenerators.js';
export { IdempotentSessionEventIdGenerator } from './IdempotentSessionEventIdGenerator.js';
export { ChatCompletionChunkAggregator, type AggregatedCompletion } from './ChatCompletionChunkAggregator.js';
export { SessionCalibrator, type SessionMetadataStore } from './SessionCalibrator.js';
export { METADATA_USAGE, sessionUsageTotals, type ProviderTokenUsage, type SessionUsageTotals } from './SessionUsageRecorder.js';
export { ConversationSearchTool, type ConversationSearchToolOptions } from './ConversationSearchTool.js';
export { CrossSessionSearchTool, type CrossSessionSearchToolOptions } from './CrossSessionSearchTool.js';
export { RecallTools, type RecallToolsOptions } from './RecallTools.js';
export { NO_RESULTS, type RecallToolContext } from './recallSupport.js';
