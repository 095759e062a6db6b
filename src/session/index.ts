export * from './Message.js';
export { SessionEvent, type SessionEventInit, type EventMetadata } from './SessionEvent.js';
export { Session, DEFAULT_TIME_TO_LIVE_MS, type SessionInit, type SessionLike } from './Session.js';
export { type CreateSessionRequest } from './CreateSessionRequest.js';
export { toOpenAIMessages, fromOpenAIMessage, type OpenAIMessageParam, type FromOpenAIOptions } from './OpenAIMessages.js';
export { isTurnStart, splitTurns, countTurns, type TurnSplit } from './turns.js';
export { type SessionService, type AppendMessageOptions, type CompactionPreview, type PreviewOptions } from './SessionService.js';
export {
  SessionServiceEvents,
  type SessionServiceEventMap,
  type SessionServiceEventName,
  type CompactionSkipReason,
} from './SessionServiceEvents.js';
export { KeyedMutex } from './KeyedMutex.js';
export { DefaultSessionService, type DefaultSessionServiceOptions } from './DefaultSessionService.js';
