export {
  AI_SDK_FORMAT,
  DEFAULT_MISSING_TOOL_OUTPUT,
  fromModelMessage,
  fromModelMessages,
  pairToolResults,
  toModelMessage,
  toModelMessages,
  type ModelPrompt,
  type PairToolResultsOptions,
} from './AiSdkMessages.js';
export { AiSdkChatProvider, type AiSdkChatTypes, type AiSdkRunParams, type AiSdkRunResult } from './AiSdkChatProvider.js';
export {
  AiSdkSessionMemory,
  type AiSdkSessionMemoryOptions,
  type AiSdkStoredTurn,
  type AiSdkStreamTurn,
  type AiSdkTurnRequest,
  type GenerateTextResultLike,
  type StreamTextResultLike,
} from './AiSdkSessionMemory.js';
export { externalizeAttachments, type AttachmentStore } from './AiSdkAttachments.js';
export { toUIMessages, type ToUIMessagesOptions, type UIMessageLike } from './AiSdkUIMessages.js';
export { METADATA_NATIVE, type NativeRecord } from '../../chat/nativeMessages.js';
