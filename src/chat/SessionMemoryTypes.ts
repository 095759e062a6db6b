import type { CompactionHooks } from '../service/CompactionHooks.js';
import type { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionStrategyLike } from '../compaction/CompactionStrategy.js';
import type { CompactionTriggerLike } from '../compaction/CompactionTrigger.js';
import type { EventFilter } from '../filter/EventFilter.js';
import type { MessageFilter } from '../filter/MessageFilter.js';
import type { Logger } from '../logging.js';
import type { SessionService } from '../service/SessionService.js';
import type { CompactionSkipReason, SessionServiceEvents } from '../service/SessionServiceEvents.js';
import type { ContextTokens, RecallSettings } from '../recall/ContextAssembler.js';
import type { Retriever } from '../recall/Retriever.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { ModelPrices } from '../tokens/ModelPrices.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import type { CompactionLock, CompactionLockSettings } from '../lock/CompactionLock.js';
import type { UsageRecord } from '../tokens/UsageRecord.js';
import type { ChatProvider, ChatProviderTypes } from './ChatProvider.js';
import type { SessionEventIdGeneratorLike } from './eventIdGenerators.js';
import type { SessionMetadataStore } from './SessionCalibrator.js';
import type { ContextOverflow } from './contextOverflow.js';

/** 'summarized' when the context sent to the model contained a summary (a synthetic event). */
export type ContextStatus = 'full' | 'summarized';

/** A SessionService; when it exposes lifecycle `events` (DefaultSessionService does), streams report compactions. */
export type SessionMemoryService = SessionService & {
  readonly events?: SessionServiceEvents;
  addCompactionHooks?(hooks: CompactionHooks): () => void;
  setCompactionLock?(lock: CompactionLock | CompactionLockSettings | null): void;
};

export interface SessionMemoryOptions<T extends ChatProviderTypes = ChatProviderTypes> {
  sessionService: SessionMemoryService;
  /**
   * The chat API: a ChatProvider (`OpenAIChatProvider`, `AnthropicChatProvider`, `AiSdkChatProvider`, your own).
   * Set this or `client`.
   */
  provider?: ChatProvider<T>;
  /**
   * Shorthand for `provider: new OpenAIChatProvider(client)`: an `openai` SDK client (any OpenAI-compatible endpoint
   * through its `baseURL`). Typed code gets the OpenAI types with `OpenAISessionMemory`. Set this or `provider`.
   */
  client?: object;
  /** Model for chat calls (a request may override it). */
  model: string;
  /** Owner of sessions auto-created by a request without `userId`; default 'default-user'. */
  defaultUserId?: string;
  /** Read-side filter of the history sent to the model; default EventFilter.all() (always merged with active()). */
  eventFilter?: EventFilter;
  /** Write-side filter of what is persisted; default MessageFilter.skipEmptyMessages(). */
  messageFilter?: MessageFilter;
  /**
   * Hooks around this memory's compactions (`beforeCompaction` may veto or add summary instructions,
   * `afterCompaction` sees the archive and the summary), registered on the service — which must have
   * `addCompactionHooks`, as DefaultSessionService does.
   */
  compactionHooks?: CompactionHooks;
  /**
   * A cross-process compaction lock (or `{ lock, leaseMs?, waitMs? }`) set on the service — which must have
   * `setCompactionLock`, as DefaultSessionService does — so that several server instances never summarise
   * one conversation at the same time. See docs/compaction-lock.md.
   */
  compactionLock?: CompactionLock | CompactionLockSettings;
  /** Compaction after each reply; set both or neither. */
  compactionTrigger?: CompactionTriggerLike;
  compactionStrategy?: CompactionStrategyLike;
  /** Ids of persisted request messages; default random UUIDs. */
  requestIdGenerator?: SessionEventIdGeneratorLike;
  /** Ids of persisted replies; default random UUIDs. */
  responseIdGenerator?: SessionEventIdGeneratorLike;
  /**
   * The model's context window. When set, a prompt whose calibrated estimate exceeds it is compacted before
   * the call (with `compactionStrategy`, regardless of the trigger); if it still does not fit, the request
   * fails with IllegalStateError instead of sending an oversized prompt.
   */
  contextWindowTokens?: number;
  /** Counts prompt tokens for calibration and the window guard; default the shared js-tiktoken estimator. */
  tokenCountEstimator?: TokenCountEstimator;
  /**
   * Where session metadata is saved for token calibration (provider prompt tokens vs our estimate). Default:
   * the service's own `updateMetadata` (DefaultSessionService has it); a service without one and no store
   * means no calibration is recorded.
   */
  metadataStore?: SessionMetadataStore;
  /** Learn the provider/estimate token ratio per session (default true); false records nothing. */
  calibrate?: boolean;
  /** With `client`: ask streaming endpoints for a final usage chunk (`stream_options.include_usage`); default true. */
  streamUsage?: boolean;
  /**
   * The longest one model call may wait (the SDK's per-request `timeout`), passed with the request's
   * `signal` on every call, also when you built the client yourself. Default 60 000.
   */
  timeoutMs?: number;
  /**
   * Price table of the chat model (e.g. `PROVIDER_PRESETS['openai-gpt-4.1'].prices`): each turn's usage record
   * then carries `estimatedCost`, and the session metadata the running total. Without it, tokens only.
   */
  prices?: ModelPrices;
  /** Price table of the summariser's model; default `prices`. Zero prices for an offline summariser. */
  summarizerPrices?: ModelPrices;
  /** Add every turn's usage to the session's `usage` metadata (default true, when a metadata store exists). */
  recordUsage?: boolean;
  /**
   * Also run the trigger before the model call, after the user's pause (default false: only after the reply).
   * This is the moment a `CacheAwareTrigger` can see that the provider's prompt cache has gone cold.
   */
  compactBeforeCall?: boolean;
  /**
   * Recall: every prompt is built by a ContextAssembler with the incoming user message as the query, so the
   * archived events it needs come back as one quoted block (see docs/recall.md). The budget is
   * `contextWindowTokens` when set; without it only the block is bounded (`maxTokens`, default 2,000). With
   * recall, `compactBeforeCall` defaults to true.
   */
  recall?: SessionMemoryRecallOptions;
  /** When compaction runs and what keeps a turn alive when the prompt does not fit; see docs/chat-integration.md. */
  compaction?: SessionMemoryCompactionOptions;
  logger?: Logger;
}

/** Compaction scheduling and the safety nets around the model call. */
export interface SessionMemoryCompactionOptions {
  /**
   * Also ask the trigger before every model call of a tool loop (default true): a request bringing tool
   * results is stored first, so that the trigger counts them, and a multi-step provider (the AI SDK) checks
   * before each step. A compaction inside a turn never separates a tool call from its result and never
   * archives the turn's input; one that would is not committed.
   */
  everyStep?: boolean;
  /**
   * When the provider refuses a prompt as too long for the model (OpenAI `context_length_exceeded`,
   * Anthropic `prompt is too long` / `request_too_large`, an HTTP 413): calibrate the estimate from what the
   * refusal says, compact mechanically (no model call; never the turn's input, a pinned event or half a tool
   * pair) and send the prompt again, once (default true). A second refusal is a ContextOverflowError.
   */
  recoverOverflow?: boolean;
  /**
   * 'inline' (default): the compaction the trigger asks for after a reply runs before the response is
   * returned, so its summariser adds to that turn's latency. 'background': it runs after the response has
   * been returned (one run at a time per session, later requests coalesced) and commits through the
   * service's compare-and-set — re-committed on top of what was appended meanwhile, never summarised twice —
   * so the next turn starts from the summary. A turn waits for it only when its prompt would otherwise not
   * fit `contextWindowTokens`. A failed run is logged and changes nothing. `waitForBackgroundCompactions()`
   * resolves when the runs have finished.
   */
  mode?: 'inline' | 'background';
  /**
   * What runs when the strategy cannot reach the trigger's target (the trigger still fires on the window it
   * leaves, or it archived nothing): 'mechanical' (default) — the oldest events archived with the agent-safe
   * cut until the trigger stops firing, in the same compaction — a strategy of your own (e.g. the next
   * pressure band), or false: nothing, and the next turn tries the same compaction again.
   */
  fallback?: 'mechanical' | CompactionStrategyLike | false;
  /**
   * The circuit breaker: after `failures` compactions in a row in which the strategy archived nothing while
   * the trigger fired (a summariser that is down), the fallback runs alone for `cooldownMs`, then the
   * strategy is tried again. Default `{ failures: 2, cooldownMs: 60000 }`; false: never skip it. Kept per
   * process; needs a fallback.
   */
  breaker?: { failures?: number; cooldownMs?: number } | false;
}

export interface SessionMemoryRecallOptions extends RecallSettings {
  /** Finds the events to recall, e.g. `new Bm25Retriever({ sessionService })`. */
  retriever: Retriever;
}

/** The session part of a request; the chat parameters of the provider (tools, temperature...) come on top. */
export interface SessionMemoryRequestBase<TMessage> {
  sessionId: string;
  /** The caller, from trusted server-side auth. When set, a session owned by someone else is refused. */
  userId?: string;
  /** New messages only (system prompt, the user message or tool results); the history comes from the session. */
  messages: TMessage[];
  /**
   * When the new messages were written; default now. Pass the message's own time when it was written earlier
   * (an offline client syncing, a conversation imported or replayed): recall quotes and searches by date
   * ("what did I say on 8 May?"), and compaction's time-based triggers read it.
   */
  timestamp?: Date;
  /** Merged over the memory's eventFilter for this request's history. */
  filter?: EventFilter;
  /** Extra values for the id generators (e.g. `{ requestId }` from an idempotency header). */
  context?: Record<string, unknown>;
  model?: string;
  signal?: AbortSignal;
}

/** One chat request: the session and the NEW messages of this turn, plus any chat parameter (tools, temperature...). */
export type SessionMemoryRequest<T extends ChatProviderTypes = ChatProviderTypes> = SessionMemoryRequestBase<T['message']> &
  T['params'];

export interface SessionMemoryResponse<T extends ChatProviderTypes = ChatProviderTypes> {
  sessionId: string;
  message: T['reply'];
  contextStatus: ContextStatus;
  /** Present when a compaction archived events during this request. */
  compaction?: CompactionResult;
  usage: T['usage'] | null;
  /**
   * What this turn consumed: the model call's input (cached and cache-written parts included), output, the
   * summariser calls of any compaction run during the turn, and the estimated cost when `prices` is set.
   */
  turnUsage: UsageRecord;
  finishReason: string | null;
  /** The events this request appended (those the MessageFilter accepted; a replayed id is listed too). */
  persisted: SessionEvent[];
  /** The raw completion (non-streaming calls only). */
  completion?: T['completion'];
  /** With `recall`: ids of the events quoted in the recall block, in log order. */
  recalled?: string[];
  /** With `recall`: what the prompt spent on system messages, the recall block and the history (our estimate). */
  contextTokens?: ContextTokens;
  /**
   * Present when the provider refused this turn's prompt as too long and the turn recovered: what the refusal
   * said (the emergency compaction is `compaction`).
   */
  overflow?: ContextOverflow;
}

export type SessionMemoryStreamEvent<T extends ChatProviderTypes = ChatProviderTypes> =
  | { type: 'chunk'; chunk: T['chunk'] }
  /** With `recall`, once per turn before the first chunk: what the prompt quotes from the archive. */
  | { type: 'recall'; sessionId: string; recalled: SessionEvent[]; tokens: ContextTokens }
  | { type: 'compaction_started'; sessionId: string }
  | { type: 'compaction_completed'; sessionId: string; result: CompactionResult }
  /** Only after a compaction_started, so a client can close its "Compacting…" indicator. */
  | { type: 'compaction_skipped'; sessionId: string; reason: CompactionSkipReason }
  | { type: 'compaction_failed'; sessionId: string; error: unknown }
  /** The provider refused the prompt as too long: an emergency compaction and one retry follow. */
  | { type: 'context_overflow'; sessionId: string; overflow: ContextOverflow }
  | { type: 'done'; response: SessionMemoryResponse<T> };
