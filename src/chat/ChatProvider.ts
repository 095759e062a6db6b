import type { Message } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { ProviderTokenUsage } from './SessionUsageRecorder.js';
import type { ProviderRefusal } from './contextOverflow.js';

/**
 * The types one chat API fixes: what a request message is, the extra request parameters (tools,
 * temperature...), the prompt the provider is called with, the reply, its usage, a streamed chunk and the
 * raw completion.
 */
export interface ChatProviderTypes {
  message: unknown;
  params: object;
  prompt: unknown;
  reply: unknown;
  usage: unknown;
  chunk: unknown;
  completion: unknown;
}

/** A message about to be appended to the log, with the metadata that keeps what the Message shape cannot hold. */
export interface PersistableMessage {
  message: Message;
  metadata?: Record<string, unknown>;
}

export interface ChatProviderCall<T extends ChatProviderTypes> {
  model: string;
  prompt: T['prompt'];
  params: T['params'];
  signal?: AbortSignal;
  /** The longest the call may wait for the model (the SDK's per-request `timeout`), whoever built the client. */
  timeoutMs?: number;
  /**
   * For a provider whose one call runs several model calls (the AI SDK's multi-step runs): the turn's
   * per-step check, to call before each model call after the first. Always set by SessionMemory.
   */
  steps?: ChatTurnSteps<T['prompt']>;
}

/** A message of a finished step of a multi-step run, with the provider's own form of it. */
export interface StepMessage {
  /** The message as it is appended to the log. */
  persist: PersistableMessage;
  /** The message as the provider's API has it (kept to send it again verbatim); opaque to SessionMemory. */
  original?: unknown;
}

/** A step message as stored, and whether it is still in the active window. */
export interface StoredStep {
  /** The event the step message was stored as. */
  event: SessionEvent;
  /** The provider's own form of the message (`StepMessage.original`). */
  original: unknown;
  /** Still in the active window (a compaction inside the turn may have archived it). */
  active: boolean;
}

/** The window a step check compacted: what the next model call should be sent instead. */
export interface StepWindow<P = unknown> {
  /** The turn's prompt built again from the compacted window (history and this request's messages; no steps). */
  prompt: P;
  /** The active window before this turn's input, in log order: the history part of the prompt. */
  history: readonly SessionEvent[];
  /** Every step message stored in this turn, in order, with whether it is still active. */
  steps: readonly StoredStep[];
}

/**
 * The check SessionMemory runs before every model call of a multi-step run: the steps finished since the
 * previous call are stored, then the compaction trigger is asked about the window; a compaction there never
 * separates a tool call from its result and never archives the turn's input.
 */
export interface ChatTurnSteps<P = unknown> {
  /** Stores `finished` (in order), then checks; null when the window did not change (send what you have). */
  beforeStep(finished: readonly StepMessage[]): Promise<StepWindow<P> | null>;
  /** Every step message stored in this turn so far, in order, with whether it is still active. */
  readonly stored: readonly StoredStep[];
}

export interface ChatProviderOutcome<T extends ChatProviderTypes> {
  reply: T['reply'];
  /** The reply as it is appended to the log: one message, or every message of a multi-step run, in order. */
  persist: PersistableMessage | readonly PersistableMessage[];
  usage: T['usage'] | null;
  /** Prompt tokens as the provider counted them (cached ones included), for calibration. */
  promptTokens: number | undefined;
  /** The reply's token counts in the provider-neutral shape the usage record is built from; absent when unreported. */
  tokens?: ProviderTokenUsage;
  finishReason: string | null;
  /** The raw completion of a non-streaming call. */
  completion?: T['completion'];
}

/**
 * What SessionMemory needs from a chat API: build the prompt from the session's history and the request,
 * tell which request messages are new conversation (persisted), and call the model once, streaming or not.
 * SessionMemory owns everything else (sessions, ownership, filters, ids, the window guard, calibration,
 * compaction), so one implementation per provider is all a new API needs.
 */
export interface ChatProvider<T extends ChatProviderTypes> {
  /**
   * Never set at run time. An implementation declares it (`declare readonly types?: MyTypes`) so that
   * `new SessionMemory({ provider })` infers T; otherwise write `new SessionMemory<MyTypes>(...)`.
   */
  readonly types?: T;
  /** The prompt: the history (active window, log order) followed by this request's messages, as the API wants it. */
  prompt(history: readonly SessionEvent[], messages: readonly T['message'][], params: T['params']): T['prompt'];
  /** Every message of this request (system prompt included) as log messages, to estimate the prompt's size. */
  requestMessages(messages: readonly T['message'][], params: T['params']): Message[];
  /**
   * Optional: throws InvalidArgumentError for a request message that is not well-formed for this API. Called
   * first, before the session is resolved, so that nothing is written for a malformed request.
   */
  validate?(messages: readonly T['message'][], params: T['params']): void;
  /**
   * What of this request is new conversation and is appended, in order: the newest user message, or the tool
   * results it answers with (and a user message sent along with them). Empty when there is neither.
   */
  incoming(messages: readonly T['message'][], history: readonly SessionEvent[]): PersistableMessage[];
  call(call: ChatProviderCall<T>): Promise<ChatProviderOutcome<T>>;
  /**
   * Streams one reply, handing every chunk to `onChunk` as it arrives, and resolves with the whole reply. A
   * stream that stops early should reject with InterruptedReplyError carrying what was received, so that it
   * is stored marked incomplete rather than lost (or taken for a whole reply).
   */
  stream(call: ChatProviderCall<T>, onChunk: (chunk: T['chunk']) => void): Promise<ChatProviderOutcome<T>>;
  /**
   * Optional: the refusal in an error this provider's SDK raised (status, code, type, message), for the
   * context-overflow classifier; errors it does not know are read generically.
   */
  refusalOf?(error: unknown): ProviderRefusal | null;
  /**
   * Optional: false when a call with these parameters cannot be sent again after a refusal (its output was
   * handed to the application already, e.g. a stream). Overflow recovery then compacts for the next request
   * and reports the refusal instead of retrying. Default true.
   */
  retryable?(params: T['params']): boolean;
}
