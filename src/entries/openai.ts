// 'session-compaction/openai': everything that talks to an OpenAI-compatible endpoint.
export { OpenAIChatClient, type OpenAIChatClientOptions, type ChatCompletionOutcome } from '../summarization/OpenAIChatClient.js';
export {
  toOpenAIMessages,
  fromOpenAIMessage,
  type OpenAIMessageParam,
  type FromOpenAIOptions,
} from '../session/OpenAIMessages.js';
export { SessionMemory } from '../integration/SessionMemory.js';
export {
  type SessionMemoryOptions,
  type SessionMemoryRequest,
  type SessionMemoryResponse,
  type SessionMemoryStreamEvent,
} from '../integration/SessionMemoryTypes.js';
export { RecallTools, type RecallToolsOptions } from '../integration/RecallTools.js';
export { ChatCompletionChunkAggregator, type AggregatedCompletion } from '../integration/ChatCompletionChunkAggregator.js';
export { openAIEmbeddings } from '../recall/openAIEmbeddings.js';
