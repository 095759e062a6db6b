import type { Message } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { ProviderTokenUsage } from './SessionUsageRecorder.js';

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
}
