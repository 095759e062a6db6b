// 'session-compaction/openai': everything that talks to an OpenAI-compatible endpoint.
import type OpenAI from 'openai';
import { registerClientProvider } from '../../chat/clientProviders.js';
import type { ChatProvider, ChatProviderTypes } from '../../chat/ChatProvider.js';
import { OpenAIChatProvider } from './OpenAIChatProvider.js';

// `new SessionMemory({ client })` means an OpenAI-compatible client.
registerClientProvider(
  (client, options) => new OpenAIChatProvider(client as OpenAI, options) as unknown as ChatProvider<ChatProviderTypes>,
);

export { OpenAIChatProvider, type OpenAIChatTypes, type OpenAIChatProviderOptions } from './OpenAIChatProvider.js';
export { OpenAISessionMemory, type OpenAISessionMemoryOptions } from './OpenAISessionMemory.js';
export { OpenAIChatClient, type OpenAIChatClientOptions, type ChatCompletionOutcome } from './OpenAIChatClient.js';
export {
  toOpenAIMessages,
  fromOpenAIMessage,
  type OpenAIMessageParam,
  type FromOpenAIOptions,
  type ToOpenAIOptions,
} from './OpenAIMessages.js';
export { SessionMemory } from '../../chat/SessionMemory.js';
export {
  type SessionMemoryOptions,
  type SessionMemoryRequest,
  type SessionMemoryResponse,
  type SessionMemoryStreamEvent,
} from '../../chat/SessionMemoryTypes.js';
export { RecallTools, type RecallToolsOptions } from './RecallTools.js';
export { ChatCompletionChunkAggregator, type AggregatedCompletion } from './ChatCompletionChunkAggregator.js';
export { openAIEmbeddings } from './openAIEmbeddings.js';
export { openAIRefusal } from './openAIRefusal.js';
export {
  OpenAIResponsesCompactor,
  type OpenAIResponsesCompactorOptions,
  type OpenAIResponsesCompactionClient,
} from './OpenAIResponsesCompactor.js';
export { toResponsesInput } from './responsesInput.js';
export { OPENAI_NATIVE_COMPACTION } from '../../compaction/nativeCompaction.js';
