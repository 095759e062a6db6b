export {
  ANTHROPIC_FORMAT,
  DEFAULT_MISSING_TOOL_RESULT,
  anthropicReplyToParam,
  fromAnthropicMessage,
  fromAnthropicPrompt,
  fromAnthropicReply,
  toAnthropicMessages,
  type AnthropicPrompt,
  type FromAnthropicOptions,
  type ToAnthropicOptions,
} from './AnthropicMessages.js';
export {
  AnthropicChatProvider,
  anthropicPromptTokens,
  type AnthropicChatParams,
  type AnthropicChatProviderOptions,
  type AnthropicChatTypes,
  type AnthropicClient,
} from './AnthropicChatProvider.js';
export { ANTHROPIC_COMPACTION_BETA } from './AnthropicChatProvider.js';
export { AnthropicCompactor, type AnthropicCompactorOptions, type AnthropicCompactionClient } from './AnthropicCompactor.js';
export { ANTHROPIC_NATIVE_COMPACTION } from '../../compaction/nativeCompaction.js';
export { AnthropicSessionMemory, type AnthropicSessionMemoryOptions } from './AnthropicSessionMemory.js';
export { anthropicRefusal } from './anthropicRefusal.js';
export { METADATA_NATIVE, type NativeRecord } from '../../chat/nativeMessages.js';
