export * from './Message.js';
export { SessionEvent, type SessionEventInit, type EventMetadata } from './SessionEvent.js';
export { Session, DEFAULT_TIME_TO_LIVE_MS, type SessionInit, type SessionLike } from './Session.js';
export { type CreateSessionRequest } from './CreateSessionRequest.js';
export {
  toOpenAIMessages,
  fromOpenAIMessage,
  type OpenAIMessageParam,
  type FromOpenAIOptions,
  type ToOpenAIOptions,
} from './OpenAIMessages.js';
export { isTurnStart, splitTurns, countTurns, type TurnSplit } from './turns.js';
export {
  pairOpenAIToolMessages,
  MISSING_TOOL_RESULT,
  type ToolPairingRepair,
  type PairOpenAIToolMessagesOptions,
} from './openAIToolPairing.js';
export { METADATA_INCOMPLETE, METADATA_FINISH_REASON, isIncompleteReply, incompleteReplyMetadata } from './incompleteReplies.js';
export { formatEvent, formatMessage, type FormatOptions } from './formatEvent.js';
