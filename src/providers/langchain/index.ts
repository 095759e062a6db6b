export {
  DEFAULT_MISSING_TOOL_MESSAGE,
  LANGCHAIN_FORMAT,
  fromLangChainMessage,
  langChainMessagesOf,
  pairToolMessages,
  toLangChainMessages,
  type FromLangChainOptions,
} from './LangChainMessages.js';
export { CompactingChatMessageHistory, type CompactingChatMessageHistoryOptions } from './CompactingChatMessageHistory.js';
export { type HistoryOverflowOutcome } from './HistoryOverflowRecovery.js';
export { METADATA_NATIVE, type NativeRecord } from '../../chat/nativeMessages.js';
