import { randomUUID } from 'node:crypto';
import type { CompactionResult } from '../compaction/CompactionResult.js';
import { toCompactionStrategy, type CompactionStrategy } from '../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTrigger } from '../compaction/CompactionTrigger.js';
import { formatMessage } from '../session/formatEvent.js';
import { IllegalStateError, InvalidArgumentError, requirePositiveInt, requireText } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import { MessageFilter } from '../filter/MessageFilter.js';
import { defaultLogger, type Logger } from '../logging.js';
import { KeyedMutex } from '../service/KeyedMutex.js';
import { ContextAssembler, recallSettings, type ContextTokens, type RecallSettings } from '../recall/ContextAssembler.js';
import type { Session } from '../session/Session.js';
import type { KnownWindow } from '../service/SessionService.js';
import { SessionEvent } from '../session/SessionEvent.js';
import { calibrationRatio } from '../tokens/calibration.js';
import { estimateEventsTokens } from '../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { requireModelPrices, type ModelPrices } from '../tokens/ModelPrices.js';
import type { UsageRecord } from '../tokens/UsageRecord.js';
import { SessionUsageRecorder, turnUsage } from './SessionUsageRecorder.js';
import { SessionMetadataWriter, type MetadataUpdate } from './SessionMetadataWriter.js';
import { AsyncQueue } from './AsyncQueue.js';
import { withArchivedCalls } from './archivedToolCalls.js';
import { resolveSession } from './resolveSession.js';
import { DEFAULT_UNBOUNDED_RECALL_TOKENS, METADATA_RECALL_BLOCK } from './recallSupport.js';
import { traceTurn, type TurnTelemetry } from '../telemetry/TurnTelemetry.js';
import type {
  ChatProvider,
  ChatProviderCall,
  ChatProviderOutcome,
  ChatProviderTypes,
  ChatTurnSteps,
  PersistableMessage,
  StepMessage,
  StoredStep,
} from './ChatProvider.js';
import { detectContextOverflow, type ContextOverflow } from './contextOverflow.js';
import { ContextOverflowError } from './ContextOverflowError.js';
import { ContextOverflowRecovery } from './ContextOverflowRecovery.js';
import { EmergencyCompactionStrategy } from './EmergencyCompactionStrategy.js';
import { mechanicalFallback } from './escalatingStrategy.js';
import {
  DEFAULT_CIRCUIT_BREAKER,
  SessionCompactor,
  type CircuitBreakerSettings,
  type CompactionRun,
} from './SessionCompactor.js';
import {
  SESSION_ID_CONTEXT_KEY,
  USER_ID_CONTEXT_KEY,
  toEventIdGenerator,
  type EventIdContext,
  type SessionEventIdGenerator,
} from './eventIdGenerators.js';
import { InterruptedReplyError } from './InterruptedReplyError.js';
import { providerForClient } from './clientProviders.js';
import { withCalibrationSample } from './SessionCalibrator.js';
import type {
  ContextStatus,
  SessionMemoryOptions,
  SessionMemoryRequest,
  SessionMemoryResponse,
  SessionMemoryService,
  SessionMemoryCompactionOptions,
  SessionMemoryStreamEvent,
} from './SessionMemoryTypes.js';

type Sink<T extends ChatProviderTypes> = AsyncQueue<SessionMemoryStreamEvent<T>>;

function breakerOf(option: SessionMemoryCompactionOptions['breaker']): CircuitBreakerSettings | null {
  if (option === false) return null;
  if (option === undefined) return DEFAULT_CIRCUIT_BREAKER;
  if (option === null || typeof option !== 'object')
    throw new InvalidArgumentError('compaction.breaker must be an object or false');
  return {
    failures:
      option.failures === undefined
        ? DEFAULT_CIRCUIT_BREAKER.failures
        : requirePositiveInt(option.failures, 'compaction.breaker.failures'),
    cooldownMs:
      option.cooldownMs === undefined
        ? DEFAULT_CIRCUIT_BREAKER.cooldownMs
        : requirePositiveInt(option.cooldownMs, 'compaction.breaker.cooldownMs'),
  };
}

/** The window after the turn's appends; an id already there (a retried request) was not appended again. */
function withAppended(window: readonly SessionEvent[], appended: readonly SessionEvent[]): SessionEvent[] {
  const ids = new Set(window.map((e) => e.id));
  return [...window, ...appended.filter((e) => !ids.has(e.id))];
}

/** The first index of an event with one of `ids`, or -1. */
function firstIndexOf(events: readonly SessionEvent[], ids: readonly string[]): number {
  if (ids.length === 0) return -1;
  const wanted = new Set(ids);
  return events.findIndex((e) => wanted.has(e.id));
}

/** A request that continues a tool loop: it brings tool results and no new user message. */
function continuesToolLoop(incoming: readonly PersistableMessage[]): boolean {
  return incoming.some((m) => m.message.type === 'tool') && !incoming.some((m) => m.message.type === 'user');
}

/** Everything worked out before the model call; the prompt part is worked out again after a compaction. */
interface PreparedTurn<T extends ChatProviderTypes> {
  sessionId: string;
  /** The session as resolved at the start of the turn. */
  session: Session;
  /**
   * The whole active window as last read, when the history read was exactly that (no event filter): with
   * the turn's own appends it lets the end-of-turn trigger decide without another read.
   */
  window: SessionEvent[] | undefined;
  idContext: EventIdContext;
  /** The read filter of this request's history, and whether it is exactly the active window. */
  historyFilter: EventFilter;
  wholeWindow: boolean;
  messages: readonly T['message'][];
  /** The request's own time (`timestamp`), when given: recall reads relative dates in the question from it. */
  timestamp: Date | undefined;
  /** Ids this request's incoming messages are (or were) stored under: the history ends before the first. */
  incomingIds: string[];
  /** The history part of the prompt: the window before this request's incoming messages. */
  history: SessionEvent[];
  model: string;
  chatParams: T['params'];
  signal: AbortSignal | undefined;
  prompt: T['prompt'];
  contextStatus: ContextStatus;
  estimatedPromptTokens: number;
  persisted: SessionEvent[];
  compaction: CompactionResult | undefined;
  /** Usage of every compaction run for this turn so far (summariser calls). */
  compactionUsage: (UsageRecord | undefined)[];
  /** With recall: what the prompt quotes, and its token anatomy. */
  recall: { recalled: SessionEvent[]; tokens: ContextTokens } | undefined;
  /** How many of `persisted` were appended before `window` was read (those are in it, or archived since). */
  windowPersisted: number;
  /** The step messages a multi-step provider stored in this turn, and whether each is still active. */
  steps: StoredStep[];
  /** The refusal this turn recovered from, if the provider refused its prompt as too long. */
  overflow: ContextOverflow | undefined;
  /** The window its prompts must fit: `contextWindowTokens`, or what a refusal in this turn stated. */
  limit: number | undefined;
  /** Provider tokens per estimated token, as known in this turn (raised by a refusal's measure). */
  ratio: number;
  /** Background commits of the session this turn's window already reflects. */
  seenCommits: number;
}

/**
 * Session memory around a chat model, whatever its API: a ChatProvider (OpenAI's, Anthropic's, the AI SDK's or your
 * own) renders the prompt and calls the model; this class owns the history. Per request:
 * 1. resolve the session: auto-create on first use; a request `userId` different from the owner is refused;
 * 2. read the active history through eventFilter ⊕ request filter ⊕ EventFilter.active();
 * 3. persist the incoming user message (or tool results) through the MessageFilter — after the read, so the
 *    prompt never holds it twice;
 * 4. call the model with system messages first, then history, then the request's messages;
 * 5. persist the reply (tool calls included), record the token calibration, then compact with trigger/strategy.
 * Event ids come from the id generators; with IdempotentSessionEventIdGenerator a retried request appends nothing
 * new, and its prompt is the one the original attempt sent.
 */
export class SessionMemory<T extends ChatProviderTypes = ChatProviderTypes> {
  static readonly DEFAULT_USER_ID = 'default-user';
  static readonly DEFAULT_TIMEOUT_MS = 60_000;

  readonly model: string;
  readonly defaultUserId: string;
  readonly eventFilter: EventFilter;
  readonly messageFilter: MessageFilter;
  readonly contextWindowTokens: number | undefined;
  private readonly service: SessionMemoryService;
  private readonly provider: ChatProvider<T>;
  private readonly trigger: CompactionTrigger | undefined;
  private readonly strategy: CompactionStrategy | undefined;
  private readonly requestIds: SessionEventIdGenerator;
  private readonly responseIds: SessionEventIdGenerator;
  private readonly estimator: TokenCountEstimator;
  /** Where calibration and usage totals go, in one write per turn; null when neither is kept. */
  private readonly metadata: SessionMetadataWriter | null;
  private readonly calibrate: boolean;
  private readonly usageRecorder: SessionUsageRecorder | null;
  private readonly prices: ModelPrices | undefined;
  private readonly summarizerPrices: ModelPrices | undefined;
  private readonly compactBeforeCall: boolean;
  private readonly recall: { assembler: ContextAssembler; settings: RecallSettings } | null;
  private readonly logger: Logger;
  /** Per model call: the SDK's request timeout, passed on every call whoever built the client. */
  private readonly timeoutMs: number;
  /** Serialises session resolution per id in this process, so two first requests cannot both create it. */
  private readonly resolving = new KeyedMutex();
  /** Evaluate the trigger before every model call of a tool loop, not only after replies. */
  private readonly everyStep: boolean;
  /** Recover from a provider's context-overflow refusal (mechanical compaction, one retry); null: rethrow it. */
  private readonly overflowRecovery: ContextOverflowRecovery | null;
  /** Runs the trigger and strategy (escalation, circuit breaker, background queue); null without them. */
  private readonly compactor: SessionCompactor | null;
  /** Trigger-driven compactions run after the turn, off its path. */
  private readonly background: boolean;
  /** Per session: background compactions committed, so that a running tool loop notices a new window. */
  private readonly backgroundCommits = new Map<string, number>();

  constructor(options: SessionMemoryOptions<T>) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.sessionService === null || options.sessionService === undefined) {
      throw new InvalidArgumentError('sessionService must not be null');
    }
    const provider = options.provider ?? null;
    if (provider === null && (options.client === null || options.client === undefined)) {
      throw new InvalidArgumentError('client must not be null (or set provider)');
    }
    if (provider !== null && options.client !== undefined) throw new InvalidArgumentError('set client or provider, not both');
    if ((options.compactionTrigger === undefined) !== (options.compactionStrategy === undefined)) {
      throw new InvalidArgumentError('compactionTrigger and compactionStrategy must be set together — set both or neither');
    }
    if (options.eventFilter === null) throw new InvalidArgumentError('eventFilter must not be null');
    if (options.messageFilter === null) throw new InvalidArgumentError('messageFilter must not be null');
    this.service = options.sessionService;
    if (options.compactionHooks !== undefined) {
      if (typeof this.service.addCompactionHooks !== 'function') {
        throw new InvalidArgumentError('compactionHooks need a sessionService with addCompactionHooks (DefaultSessionService)');
      }
      this.service.addCompactionHooks(options.compactionHooks);
    }
    if (options.compactionLock !== undefined) {
      if (typeof this.service.setCompactionLock !== 'function') {
        throw new InvalidArgumentError('compactionLock needs a sessionService with setCompactionLock (DefaultSessionService)');
      }
      this.service.setCompactionLock(options.compactionLock);
    }
    const fromClient =
      provider === null
        ? providerForClient(options.client, { streamUsage: options.streamUsage, logger: options.logger })
        : undefined;
    if (provider === null && fromClient === undefined) {
      throw new InvalidArgumentError("client needs a provider: import 'session-compaction/openai', or set provider");
    }
    // A client's provider is the registered one; the caller's T describes it (OpenAISessionMemory fixes both).
    this.provider = provider ?? (fromClient as unknown as ChatProvider<T>);
    this.model = requireText(options.model, 'model');
    this.defaultUserId =
      options.defaultUserId === undefined ? SessionMemory.DEFAULT_USER_ID : requireText(options.defaultUserId, 'defaultUserId');
    this.eventFilter = options.eventFilter ?? EventFilter.all();
    this.messageFilter = options.messageFilter ?? MessageFilter.skipEmptyMessages();
    this.trigger = options.compactionTrigger === undefined ? undefined : toCompactionTrigger(options.compactionTrigger);
    this.strategy = options.compactionStrategy === undefined ? undefined : toCompactionStrategy(options.compactionStrategy);
    this.requestIds = toEventIdGenerator(options.requestIdGenerator, 'requestIdGenerator');
    this.responseIds = toEventIdGenerator(options.responseIdGenerator, 'responseIdGenerator');
    this.contextWindowTokens =
      options.contextWindowTokens === undefined
        ? undefined
        : requirePositiveInt(options.contextWindowTokens, 'contextWindowTokens');
    this.timeoutMs =
      options.timeoutMs === undefined ? SessionMemory.DEFAULT_TIMEOUT_MS : requirePositiveInt(options.timeoutMs, 'timeoutMs');
    this.estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.logger = options.logger ?? defaultLogger();
    const writer = SessionMetadataWriter.of(options.metadataStore, options.sessionService, this.logger);
    this.calibrate = writer !== undefined && options.calibrate !== false;
    this.prices = options.prices === undefined ? undefined : requireModelPrices(options.prices, 'prices');
    this.summarizerPrices =
      options.summarizerPrices === undefined ? undefined : requireModelPrices(options.summarizerPrices, 'summarizerPrices');
    this.usageRecorder =
      writer === undefined || options.recordUsage === false ? null : new SessionUsageRecorder(this.prices, this.summarizerPrices);
    this.metadata = writer !== undefined && (this.calibrate || this.usageRecorder !== null) ? writer : null;
    this.recall = null;
    if (options.recall !== undefined) {
      if (options.recall === null || typeof options.recall !== 'object')
        throw new InvalidArgumentError('recall must be an object');
      const { retriever, ...settings } = options.recall;
      if (retriever === null || retriever === undefined || typeof retriever.retrieve !== 'function') {
        throw new InvalidArgumentError('recall.retriever must have a retrieve method');
      }
      recallSettings(settings);
      this.recall = {
        assembler: new ContextAssembler({ sessionService: this.service, retriever, tokenCountEstimator: this.estimator }),
        settings,
      };
    }
    // With recall the window is also compacted before the call, so a long session is summarised before the
    // answer ("compacting…" first) instead of waiting for the context-window guard.
    this.compactBeforeCall = options.compactBeforeCall ?? this.recall !== null;
    const compaction = options.compaction ?? {};
    if (compaction === null || typeof compaction !== 'object') throw new InvalidArgumentError('compaction must be an object');
    if (compaction.everyStep !== undefined && typeof compaction.everyStep !== 'boolean') {
      throw new InvalidArgumentError('compaction.everyStep must be a boolean');
    }
    if (compaction.recoverOverflow !== undefined && typeof compaction.recoverOverflow !== 'boolean') {
      throw new InvalidArgumentError('compaction.recoverOverflow must be a boolean');
    }
    this.everyStep = compaction.everyStep ?? true;
    const mode = compaction.mode ?? 'inline';
    if (mode !== 'inline' && mode !== 'background')
      throw new InvalidArgumentError("compaction.mode must be 'inline' or 'background'");
    this.background = mode === 'background';
    this.compactor =
      this.trigger === undefined || this.strategy === undefined
        ? null
        : new SessionCompactor({
            service: this.service,
            trigger: this.trigger,
            strategy: this.strategy,
            fallback: this.fallbackOf(compaction.fallback, this.trigger),
            breaker: breakerOf(compaction.breaker),
            estimator: this.estimator,
            logger: this.logger,
          });
    this.overflowRecovery =
      compaction.recoverOverflow === false
        ? null
        : new ContextOverflowRecovery({
            service: this.service,
            estimator: this.estimator,
            logger: this.logger,
            metadata: this.calibrate ? this.metadata : null,
            ...(this.contextWindowTokens !== undefined ? { contextWindowTokens: this.contextWindowTokens } : {}),
          });
  }

  /**
   * Resolves when the background compactions (`compaction: { mode: 'background' }`) of `sessionId` — or of
   * every session — have finished: before shutting down, or to keep a serverless function alive.
   */
  async waitForBackgroundCompactions(sessionId?: string): Promise<void> {
    await this.compactor?.idle(sessionId);
  }

  private fallbackOf(
    fallback: SessionMemoryCompactionOptions['fallback'],
    trigger: CompactionTrigger,
  ): CompactionStrategy | null {
    if (fallback === false) return null;
    if (fallback === undefined || fallback === 'mechanical') return mechanicalFallback(trigger, this.estimator);
    try {
      return toCompactionStrategy(fallback);
    } catch {
      throw new InvalidArgumentError("compaction.fallback must be 'mechanical', false or a strategy");
    }
  }

  /** One non-streaming turn. */
  async call(request: SessionMemoryRequest<T>): Promise<SessionMemoryResponse<T>> {
    return traceTurn(request?.sessionId, false, async (telemetry) => {
      const turn = await this.prepare(request, null);
      this.reportPrepared(telemetry, turn);
      const steps = this.stepsOf(turn, null);
      const outcome = await this.recoveringOverflow(
        turn,
        null,
        () => this.provider.call(this.callOf(turn, turn.signal, steps)),
        () => false,
      );
      return this.reportFinished(telemetry, outcome, await this.finish(turn, outcome, null));
    });
  }

  /**
   * One streaming turn: the model's chunks as they arrive, `compaction_started` before a compaction's strategy
   * (and so any summariser call) runs, then `compaction_completed` (or `_skipped` / `_failed`), and last `done`
   * with the response. The reply is persisted once, from the aggregated chunks. An aborted `signal` (or
   * stopping the iteration early, or a failed stream) stops the model call: the text received so far is
   * persisted marked incomplete (`incomplete: true`, `finishReason` 'aborted' or 'error' in its metadata), and
   * later prompts show it as interrupted; a reply already received in full is persisted as usual.
   */
  stream(request: SessionMemoryRequest<T>): AsyncGenerator<SessionMemoryStreamEvent<T>, void, undefined> {
    return this.streamEvents(request);
  }

  private async *streamEvents(request: SessionMemoryRequest<T>): AsyncGenerator<SessionMemoryStreamEvent<T>, void, undefined> {
    const queue: Sink<T> = new AsyncQueue();
    const abort = new AbortController();
    const signal = request?.signal === undefined ? abort.signal : AbortSignal.any([request.signal, abort.signal]);
    const producer = this.produceStream(request, signal, queue).then(
      () => queue.close(),
      (error: unknown) => queue.fail(error),
    );
    let finished = false;
    try {
      for await (const item of queue) yield item;
      finished = true;
    } finally {
      if (!finished) abort.abort();
      // The producer settles on its own (its outcome goes to the queue); nothing is left unhandled.
      void producer;
    }
  }

  private async produceStream(request: SessionMemoryRequest<T>, signal: AbortSignal, sink: Sink<T>): Promise<void> {
    await traceTurn(request?.sessionId, true, async (telemetry) => {
      const turn = await this.prepare(request, sink);
      this.reportPrepared(telemetry, turn);
      const steps = this.stepsOf(turn, sink);
      let chunks = 0;
      const outcome = await this.recoveringOverflow(
        turn,
        sink,
        async () => {
          try {
            return await this.provider.stream(this.callOf(turn, signal, steps), (chunk) => {
              chunks++;
              sink.push({ type: 'chunk', chunk });
            });
          } catch (error) {
            if (!(error instanceof InterruptedReplyError)) throw error;
            // Refused before anything came: nothing to store, and the refusal is what recovery looks at.
            if (error.partial === null && chunks === 0 && this.overflowOf(error.cause) !== null) throw error.cause;
            await this.storeInterrupted(turn, error);
            throw error.cause ?? error;
          }
        },
        () => chunks > 0,
      );
      sink.push({ type: 'done', response: this.reportFinished(telemetry, outcome, await this.finish(turn, outcome, sink)) });
    });
  }

  private callOf(turn: PreparedTurn<T>, signal: AbortSignal | undefined, steps: ChatTurnSteps<T['prompt']>): ChatProviderCall<T> {
    return {
      model: turn.model,
      prompt: turn.prompt,
      params: turn.chatParams,
      timeoutMs: this.timeoutMs,
      steps,
      ...(signal === undefined ? {} : { signal }),
    };
  }

  /** The context overflow `error` is (or wraps), read with the provider's own extraction first; null otherwise. */
  private overflowOf(error: unknown): ContextOverflow | null {
    return detectContextOverflow(error, (e) => this.provider.refusalOf?.(e) ?? null);
  }

  /**
   * Runs the model call; when the provider refuses the prompt as too long (and nothing of the reply has been
   * delivered), calibrates and compacts mechanically, builds the prompt again and calls exactly once more. A
   * second refusal — or nothing left to archive — is one ContextOverflowError; the turn's input stays stored.
   */
  private async recoveringOverflow(
    turn: PreparedTurn<T>,
    sink: Sink<T> | null,
    attempt: () => Promise<ChatProviderOutcome<T>>,
    delivered: () => boolean,
  ): Promise<ChatProviderOutcome<T>> {
    try {
      return await attempt();
    } catch (error) {
      const overflow = this.overflowRecovery === null || delivered() ? null : this.overflowOf(error);
      if (overflow === null) throw error;
      const archived = await this.recoverFrom(turn, overflow, sink, error);
      if (this.provider.retryable?.(turn.chatParams) === false) {
        throw new ContextOverflowError(turn.sessionId, overflow, {
          attempts: 1,
          archived,
          persisted: turn.persisted,
          cause: error,
        });
      }
      try {
        return await attempt();
      } catch (second) {
        const again = delivered() ? null : this.overflowOf(second);
        if (again === null) throw second;
        throw new ContextOverflowError(turn.sessionId, again, {
          attempts: 2,
          archived,
          persisted: turn.persisted,
          cause: second,
        });
      }
    }
  }

  /** Calibrates and compacts after a refusal, then rebuilds the turn's prompt; returns how many events went. */
  private async recoverFrom(
    turn: PreparedTurn<T>,
    overflow: ContextOverflow,
    sink: Sink<T> | null,
    error: unknown,
  ): Promise<number> {
    sink?.push({ type: 'context_overflow', sessionId: turn.sessionId, overflow });
    const active = turn.steps.filter((s) => s.active).map((s) => s.event);
    const unsubscribe = sink === null ? () => undefined : this.forwardCompactionEvents(turn.sessionId, sink);
    let outcome;
    try {
      outcome = await this.overflowRecovery!.recover({
        sessionId: turn.sessionId,
        overflow,
        estimatedPromptTokens: turn.estimatedPromptTokens + estimateEventsTokens(active, this.estimator),
        outsideWindowTokens: this.outsideWindow(turn),
        keep: new Set(turn.incomingIds),
      });
    } finally {
      unsubscribe();
    }
    const archived = outcome.result.archivedEvents.length;
    if (archived === 0) {
      throw new ContextOverflowError(turn.sessionId, overflow, {
        attempts: 1,
        archived: 0,
        persisted: turn.persisted,
        cause: error,
      });
    }
    turn.overflow = overflow;
    turn.compaction = outcome.result;
    turn.ratio = outcome.ratio;
    turn.limit = Math.min(turn.limit ?? outcome.limitTokens, outcome.limitTokens);
    await this.recompose(turn, sink);
    return archived;
  }

  /** Our estimate of what the prompt holds besides the stored window: the request's messages not stored (system). */
  private outsideWindow(turn: PreparedTurn<T>): number {
    const incoming = new Set(turn.incomingIds);
    const storedInput = estimateEventsTokens(
      turn.persisted.filter((e) => incoming.has(e.id)),
      this.estimator,
    );
    return Math.max(0, this.estimatePrompt([], turn.messages, turn.chatParams) - storedInput);
  }

  /**
   * What an interrupted stream delivered is kept, marked incomplete (`incomplete`, `finishReason` in its
   * metadata): never lost, never taken for a whole reply, shown as interrupted in later prompts. A failure
   * to store it is logged, so that the caller still sees why the stream stopped.
   */
  private async storeInterrupted(turn: PreparedTurn<T>, interrupted: InterruptedReplyError): Promise<void> {
    const partial = interrupted.partial;
    if (partial === null || !this.messageFilter.shouldPersist(partial.message)) return;
    try {
      turn.persisted.push(
        await this.service.appendMessage(turn.sessionId, partial.message, {
          id: this.responseIds.generate(turn.idContext, partial.message),
          ...(partial.metadata ? { metadata: partial.metadata } : {}),
        }),
      );
    } catch (error) {
      this.logger.error('an interrupted reply could not be stored', { sessionId: turn.sessionId, error: String(error) });
    }
  }

  private reportPrepared(telemetry: TurnTelemetry, turn: PreparedTurn<T>): void {
    telemetry.prepared({
      model: turn.model,
      contextStatus: turn.contextStatus,
      estimatedPromptTokens: turn.estimatedPromptTokens,
      contextWindowTokens: this.contextWindowTokens,
    });
  }

  private reportFinished(
    telemetry: TurnTelemetry,
    outcome: ChatProviderOutcome<T>,
    response: SessionMemoryResponse<T>,
  ): SessionMemoryResponse<T> {
    telemetry.finished({
      promptTokens: outcome.promptTokens,
      persisted: response.persisted.length,
      archived: response.compaction?.archivedEvents.length ?? 0,
      usage: response.turnUsage,
      currency: this.prices?.currency ?? 'USD',
    });
    return response;
  }

  private async prepare(request: SessionMemoryRequest<T>, sink: Sink<T> | null): Promise<PreparedTurn<T>> {
    if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
    const {
      sessionId: rawSessionId,
      userId: rawUserId,
      messages,
      filter,
      context,
      model,
      signal,
      timestamp,
      ...chatParams
    } = request;
    const sessionId = requireText(rawSessionId, 'sessionId');
    if (timestamp !== undefined && !(timestamp instanceof Date && !Number.isNaN(timestamp.getTime()))) {
      throw new InvalidArgumentError('timestamp must be a valid Date');
    }
    if (!Array.isArray(messages)) throw new InvalidArgumentError('messages must not be null');
    this.provider.validate?.(messages, chatParams as T['params']);
    const userId = typeof rawUserId === 'string' && rawUserId.trim() !== '' ? rawUserId : undefined;
    const session = await this.resolveSession(sessionId, userId);

    const historyFilter = this.eventFilter.merge(filter ?? null).merge(EventFilter.active());
    const idContext: EventIdContext = {
      ...(context ?? {}),
      [SESSION_ID_CONTEXT_KEY]: sessionId,
      [USER_ID_CONTEXT_KEY]: userId ?? null,
    };
    const wholeWindow = historyFilter.equals(EventFilter.active());
    let window: SessionEvent[] | undefined;
    /** `storedIds`: the ids the incoming messages were stored under, once they are. */
    const readHistory = async (
      storedIds?: string[],
    ): Promise<{ history: SessionEvent[]; incoming: PersistableMessage[]; incomingIds: string[] }> => {
      const all = await this.service.getEvents(sessionId, historyFilter);
      window = wholeWindow ? all : undefined;
      const incoming = this.provider.incoming(messages, all);
      const incomingIds = storedIds ?? incoming.map((m) => this.requestIds.generate(idContext, m.message));
      // A retried request finds its own message already stored: send the context its first attempt saw.
      const replayAt = firstIndexOf(all, incomingIds.slice(0, 1));
      // A late result whose call was archived comes with its call (a prompt without it would lose the result).
      const results = incoming.flatMap(({ message: m }) => (m.type === 'tool' ? m.responses.map((r) => r.id) : []));
      const history = await withArchivedCalls(this.service, sessionId, replayAt < 0 ? all : all.slice(0, replayAt), results);
      return { history, incoming, incomingIds };
    };

    let { history, incoming, incomingIds } = await readHistory();
    let compaction: CompactionResult | undefined;
    const compactionUsage: (UsageRecord | undefined)[] = [];
    const persisted: SessionEvent[] = [];
    let stored = false;
    const persistIncoming = async () => {
      stored = true;
      for (const [i, { message, metadata }] of incoming.entries()) {
        if (!this.messageFilter.shouldPersist(message)) continue;
        persisted.push(
          await this.service.appendMessage(sessionId, message, {
            id: incomingIds[i]!,
            ...(metadata ? { metadata } : {}),
            ...(timestamp !== undefined ? { timestamp } : {}),
          }),
        );
      }
    };
    // Once the input is in the log, a compaction of this turn must keep it.
    const keep = (): ReadonlySet<string> | undefined => (stored ? new Set(incomingIds) : undefined);
    let windowPersisted = 0;
    const reread = async () => {
      ({ history, incoming, incomingIds } = await readHistory(stored ? incomingIds : undefined));
      windowPersisted = persisted.length;
    };
    if (this.everyStep && this.compactor !== null && continuesToolLoop(incoming)) {
      // A step of a tool loop: its tool results are stored first, so that the trigger counts them and a
      // compaction inside the turn can keep them with their calls.
      await persistIncoming();
      const knownWindow = window === undefined ? undefined : { session, events: withAppended(window, persisted) };
      compaction = await this.triggeredCompaction(sessionId, sink, compactionUsage, { keep: keep(), knownWindow });
      if (compaction !== undefined) await reread();
    } else if (this.compactBeforeCall && this.compactor !== null) {
      const knownWindow = window === undefined ? undefined : { session, events: window };
      compaction = await this.triggeredCompaction(sessionId, sink, compactionUsage, { knownWindow });
      if (compaction !== undefined) await reread();
    }
    if (this.contextWindowTokens !== undefined) {
      const limit = this.contextWindowTokens;
      const ratio = calibrationRatio(session);
      const needed = () => Math.ceil(this.estimatePrompt(history, messages, chatParams) * ratio);
      // A background compaction of this session may be about to bring it under the window: wait for it — the
      // only case in which a turn waits for a summariser in background mode.
      const inFlight = needed() > limit ? this.compactor?.inFlight(sessionId) : undefined;
      if (inFlight !== undefined) {
        await inFlight;
        await reread();
      }
      if (needed() > limit) {
        if (this.compactor === null) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), and no compactionStrategy is configured`,
          );
        }
        compaction = (await this.runCompaction(sessionId, sink, compactionUsage, { always: true, keep: keep() })) ?? compaction;
        await reread();
        if (needed() > limit) {
          // The strategy could not reach the window: escalate to the mechanical cut rather than fail the turn.
          const outside =
            this.estimatePrompt([], messages, chatParams) - (stored ? estimateEventsTokens(persisted, this.estimator) : 0);
          const budget = Math.max(1, Math.floor(limit / ratio) - Math.max(0, outside));
          const emergency = new EmergencyCompactionStrategy(budget, this.estimator, new Set(stored ? incomingIds : []));
          compaction =
            (await this.runCompaction(sessionId, sink, compactionUsage, { always: true, strategy: emergency })) ?? compaction;
          await reread();
        }
        if (needed() > limit) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), even after compaction`,
          );
        }
      }
    }
    if (!stored) await persistIncoming();

    const turn: PreparedTurn<T> = {
      sessionId,
      session,
      window,
      idContext,
      historyFilter,
      wholeWindow,
      messages,
      timestamp,
      incomingIds,
      history,
      model: model ?? this.model,
      chatParams: chatParams as T['params'],
      signal,
      prompt: undefined as T['prompt'],
      contextStatus: 'full',
      estimatedPromptTokens: 0,
      persisted,
      compaction,
      compactionUsage,
      recall: undefined,
      windowPersisted,
      steps: [],
      overflow: undefined,
      limit: this.contextWindowTokens,
      ratio: calibrationRatio(session),
      seenCommits: this.backgroundCommits.get(sessionId) ?? 0,
    };
    await this.compose(turn, sink);
    return turn;
  }

  /** Builds the prompt from `turn.history` (with recall, through the ContextAssembler). */
  private async compose(turn: PreparedTurn<T>, sink: Sink<T> | null): Promise<void> {
    let history = turn.history;
    let promptHistory: SessionEvent[] = history;
    let recallTokens = 0;
    turn.recall = undefined;
    if (this.recall !== null) {
      const assembled = await this.assemble(
        turn.session,
        history,
        turn.messages,
        turn.chatParams,
        turn.historyFilter,
        turn.timestamp,
      );
      ({ promptHistory, recall: turn.recall } = assembled);
      history = assembled.sent;
      recallTokens = turn.recall.tokens.recall;
      sink?.push({ type: 'recall', sessionId: turn.sessionId, recalled: turn.recall.recalled, tokens: turn.recall.tokens });
    }
    turn.prompt = this.provider.prompt(promptHistory, turn.messages, turn.chatParams);
    turn.contextStatus = history.some((e) => e.isSynthetic()) ? 'summarized' : 'full';
    turn.estimatedPromptTokens = this.estimatePrompt(history, turn.messages, turn.chatParams) + recallTokens;
  }

  /**
   * After a compaction inside the turn: reads the window again and rebuilds the prompt from it; the turn's
   * stored steps learn whether they are still in the window.
   */
  private async recompose(turn: PreparedTurn<T>, sink: Sink<T> | null): Promise<void> {
    const all = await this.service.getEvents(turn.sessionId, turn.historyFilter);
    turn.window = turn.wholeWindow ? all : undefined;
    turn.windowPersisted = turn.persisted.length;
    const at = firstIndexOf(all, turn.incomingIds);
    const sliced = at < 0 ? all.filter((e) => !turn.steps.some((s) => s.event.id === e.id)) : all.slice(0, at);
    const incoming = new Set(turn.incomingIds);
    const results = turn.persisted
      .filter((e) => incoming.has(e.id))
      .flatMap(({ message: m }) => (m.type === 'tool' ? m.responses.map((r) => r.id) : []));
    turn.history = await withArchivedCalls(this.service, turn.sessionId, sliced, results);
    const active = new Set(all.map((e) => e.id));
    for (const step of turn.steps) step.active = active.has(step.event.id);
    await this.compose(turn, sink);
  }

  /**
   * The per-step check a multi-step provider runs before each model call after the first: the finished steps
   * are stored (so that the trigger counts them, and a crash mid-run loses none), then the trigger is asked,
   * and, with `contextWindowTokens`, the window guard; a compaction here is turn-safe.
   */
  private stepsOf(turn: PreparedTurn<T>, sink: Sink<T> | null): ChatTurnSteps<T['prompt']> {
    const stored = turn.steps;
    return {
      stored,
      beforeStep: async (finished: readonly StepMessage[]) => {
        for (const { persist, original } of finished) {
          if (!this.messageFilter.shouldPersist(persist.message)) continue;
          const event = await this.service.appendMessage(turn.sessionId, persist.message, {
            id: this.responseIds.generate(turn.idContext, persist.message),
            ...(persist.metadata ? { metadata: persist.metadata } : {}),
          });
          turn.persisted.push(event);
          stored.push({ event, original, active: true });
        }
        if (!this.everyStep || this.compactor === null) return null;
        const keep = new Set(turn.incomingIds);
        const compacted = await this.triggeredCompaction(turn.sessionId, sink, turn.compactionUsage, {
          keep,
          knownWindow: this.knownWindow(turn, turn.session),
        });
        // In background mode a run that finished since the last check may have compacted the window.
        const commits = this.backgroundCommits.get(turn.sessionId) ?? 0;
        let changed = compacted !== undefined || commits !== turn.seenCommits;
        if (changed) {
          turn.seenCommits = commits;
          if (compacted !== undefined) turn.compaction = compacted;
          await this.recompose(turn, sink);
        }
        // The window guard, with the configured window or the one a refusal stated earlier in this turn.
        const limit = turn.limit;
        if (limit !== undefined) {
          const needed = () =>
            (this.estimatePrompt(turn.history, turn.messages, turn.chatParams) +
              estimateEventsTokens(
                stored.filter((s) => s.active).map((s) => s.event),
                this.estimator,
              )) *
            turn.ratio;
          for (const mechanical of [false, true]) {
            if (needed() <= limit) break;
            // The configured strategy first; when it cannot reach the window, the mechanical cut.
            const run: CompactionRun = mechanical
              ? {
                  always: true,
                  strategy: new EmergencyCompactionStrategy(
                    Math.max(1, Math.floor(limit / turn.ratio) - this.outsideWindow(turn)),
                    this.estimator,
                    keep,
                  ),
                }
              : { always: true, keep };
            const result = await this.runCompaction(turn.sessionId, sink, turn.compactionUsage, run);
            if (result === undefined) continue;
            turn.compaction = result;
            changed = true;
            await this.recompose(turn, sink);
          }
        }
        return changed ? { prompt: turn.prompt, history: turn.history, steps: stored } : null;
      },
    };
  }

  /**
   * The prompt's history through the ContextAssembler: the active window fitted to the budget, and the recall
   * block (a transient event, never stored) where its placement puts it, for the provider to render.
   */
  private async assemble(
    session: Session,
    history: SessionEvent[],
    messages: readonly T['message'][],
    params: T['params'],
    filter: EventFilter,
    now: Date | undefined,
  ): Promise<{ promptHistory: SessionEvent[]; sent: SessionEvent[]; recall: NonNullable<PreparedTurn<T>['recall']> }> {
    const { assembler, settings } = this.recall!;
    const request = this.provider.requestMessages(messages, params);
    const pending = request.filter((m) => m.type !== 'system');
    const lastUser = [...pending].reverse().find((m) => m.type === 'user');
    const window = this.contextWindowTokens;
    const parts = await assembler.assembleParts({
      sessionId: session.id,
      // Resolved at the start of the turn: the assembler need not read it again.
      session,
      maxTokens: window === undefined ? Number.MAX_SAFE_INTEGER : Math.max(1, Math.floor(window / calibrationRatio(session))),
      system: request.filter((m) => m.type === 'system'),
      activeEvents: history,
      pending,
      ...(lastUser?.type === 'user' ? { query: lastUser.text } : {}),
      ...(now !== undefined ? { now } : {}),
      filter,
      recall: {
        ...settings,
        maxTokens: settings.maxTokens ?? (window === undefined ? DEFAULT_UNBOUNDED_RECALL_TOKENS : undefined),
      },
    });
    const sent = parts.history.map((h) => h.event);
    const promptHistory = parts.history.map(({ event, message }) =>
      message === event.message ? event : event.with({ message }),
    );
    if (parts.block !== null) {
      const block = SessionEvent.create({
        sessionId: session.id,
        id: `recall-${randomUUID()}`,
        message: parts.block.message,
        metadata: { [METADATA_RECALL_BLOCK]: true },
      });
      // Never between a tool call and its results: inside the request's own messages, fall back to before the
      // history's last user message.
      let at = parts.block.at;
      if (at > promptHistory.length) {
        at = promptHistory.length;
        while (at > 0 && promptHistory[at - 1]!.messageType !== 'user') at--;
        at = at > 0 ? at - 1 : 0;
      }
      promptHistory.splice(at, 0, block);
    }
    return { promptHistory, sent, recall: { recalled: parts.context.recalled, tokens: parts.context.tokens } };
  }

  private async finish(
    turn: PreparedTurn<T>,
    outcome: ChatProviderOutcome<T>,
    sink: Sink<T> | null,
  ): Promise<SessionMemoryResponse<T>> {
    const replies = Array.isArray(outcome.persist) ? outcome.persist : [outcome.persist as PersistableMessage];
    for (const { message: reply, metadata } of replies) {
      if (!this.messageFilter.shouldPersist(reply)) continue;
      turn.persisted.push(
        await this.service.appendMessage(turn.sessionId, reply, {
          id: this.responseIds.generate(turn.idContext, reply),
          ...(metadata ? { metadata } : {}),
        }),
      );
    }
    // Calibration and usage in one write, before compacting, so that the trigger sees this turn's sample and
    // the session record written is the one the trigger is asked about (no read of its own).
    const sampled = this.calibrate && withCalibrationSample({}, outcome.promptTokens, turn.estimatedPromptTokens) !== null;
    const calibrate: MetadataUpdate = (m) =>
      sampled ? withCalibrationSample(m, outcome.promptTokens, turn.estimatedPromptTokens)! : { ...m };
    const paidBefore = turn.compactionUsage.length;
    let session = sampled ? turn.session.with({ metadata: calibrate(turn.session.metadata) }) : turn.session;
    if (this.metadata !== null && (this.usageRecorder !== null || sampled)) {
      const callUsage = turnUsage(outcome.tokens ?? null, turn.compactionUsage, this.prices, this.summarizerPrices);
      const recorder = this.usageRecorder;
      const written = await this.metadata.update(turn.sessionId, (m) =>
        recorder === null ? calibrate(m) : recorder.apply(calibrate(m), callUsage),
      );
      if (written !== null) session = written;
    }
    let compaction = turn.compaction;
    if (this.compactor !== null) {
      // A reply with tool calls leaves the turn open: its calls (and the turn's input) must survive for the
      // results the next request brings.
      const pending = turn.persisted.filter((e) => e.message.type === 'assistant' && (e.message.toolCalls?.length ?? 0) > 0);
      const last = replies.at(-1)?.message;
      const open = last?.type === 'assistant' && (last.toolCalls?.length ?? 0) > 0;
      compaction =
        (await this.triggeredCompaction(turn.sessionId, sink, turn.compactionUsage, {
          knownWindow: this.knownWindow(turn, session),
          ...(open ? { keep: new Set(pending.slice(-1).map((e) => e.id)) } : {}),
        })) ?? compaction;
    }
    const usage = turnUsage(outcome.tokens ?? null, turn.compactionUsage, this.prices, this.summarizerPrices);
    // The turn is counted already: add what the compaction's summariser cost (totals add up exactly).
    await this.recordCompactionUsage(turn.sessionId, turn.compactionUsage.slice(paidBefore));
    return {
      sessionId: turn.sessionId,
      message: outcome.reply,
      contextStatus: turn.contextStatus,
      ...(compaction !== undefined ? { compaction } : {}),
      usage: outcome.usage,
      turnUsage: usage,
      finishReason: outcome.finishReason,
      persisted: turn.persisted,
      ...(outcome.completion !== undefined ? { completion: outcome.completion } : {}),
      ...(turn.recall !== undefined
        ? { recalled: turn.recall.recalled.map((e) => e.id), contextTokens: turn.recall.tokens }
        : {}),
      ...(turn.overflow !== undefined ? { overflow: turn.overflow } : {}),
    };
  }

  /** The window the turn holds: as last read, with what the turn appended since (archived events excluded). */
  private knownWindow(turn: PreparedTurn<T>, session: Session): KnownWindow | undefined {
    return turn.window === undefined
      ? undefined
      : { session, events: withAppended(turn.window, turn.persisted.slice(turn.windowPersisted)) };
  }

  private async resolveSession(sessionId: string, userId: string | undefined): Promise<Session> {
    return this.resolving.run(sessionId, () => resolveSession(this.service, sessionId, userId, this.defaultUserId));
  }

  /** Our estimate of the prompt: the history as counted by the triggers plus the request's own messages. */
  private estimatePrompt(history: readonly SessionEvent[], messages: readonly T['message'][], params: object): number {
    let total = estimateEventsTokens(history, this.estimator);
    for (const m of this.provider.requestMessages(messages, params as T['params'])) {
      total += this.estimator.estimate(formatMessage(m));
    }
    return total;
  }

  /**
   * Compacts, forwarding this session's lifecycle events to the stream while the call lasts. A failed
   * compaction never fails the chat turn (the reply is already stored); it is logged and reported.
   */
  private async runCompaction(
    sessionId: string,
    sink: Sink<T> | null,
    usages: (UsageRecord | undefined)[],
    run: CompactionRun,
  ): Promise<CompactionResult | undefined> {
    const unsubscribe = sink === null ? () => undefined : this.forwardCompactionEvents(sessionId, sink);
    try {
      const result = await this.compactor!.compact(sessionId, run);
      // A failed or lost compaction may still have paid its summariser.
      usages.push(result.usage);
      return result.archivedEvents.length > 0 ? result : undefined;
    } catch (error) {
      this.logger.error('compaction failed; the conversation continues uncompacted', { sessionId, error: String(error) });
      return undefined;
    } finally {
      unsubscribe();
    }
  }

  /**
   * A compaction the trigger decides: now (inline mode), or — in background mode — after the turn, off its
   * path: then undefined here, and the next turn uses what it commits.
   */
  private async triggeredCompaction(
    sessionId: string,
    sink: Sink<T> | null,
    usages: (UsageRecord | undefined)[],
    run: Omit<CompactionRun, 'always' | 'strategy'>,
  ): Promise<CompactionResult | undefined> {
    if (!this.background) return this.runCompaction(sessionId, sink, usages, run);
    this.compactor!.schedule(sessionId, async (first: boolean) => {
      // A run queued behind another knows a stale window: it reads.
      const result = await this.compactor!.compact(sessionId, first ? run : { ...run, knownWindow: undefined });
      if (!result.isNoop()) this.backgroundCommits.set(sessionId, (this.backgroundCommits.get(sessionId) ?? 0) + 1);
      await this.recordCompactionUsage(sessionId, [result.usage]);
    });
    return undefined;
  }

  /** Adds what compactions' summarisers cost to the session's usage totals (the turn itself is counted already). */
  private async recordCompactionUsage(sessionId: string, usages: readonly (UsageRecord | undefined)[]): Promise<void> {
    const paid = usages.filter((u) => u !== undefined);
    const recorder = this.usageRecorder;
    if (this.metadata === null || recorder === null || paid.length === 0) return;
    const usage = turnUsage(null, paid, this.prices, this.summarizerPrices);
    await this.metadata.update(sessionId, (m) => recorder.apply(m, usage, false));
  }

  private forwardCompactionEvents(sessionId: string, sink: Sink<T>): () => void {
    const events = this.service.events;
    if (events === undefined) return () => undefined;
    let started = false;
    const offs = [
      events.on('compactionStarted', (e) => {
        if (e.sessionId !== sessionId) return;
        started = true;
        sink.push({ type: 'compaction_started', sessionId });
      }),
      events.on('compactionCompleted', (e) => {
        if (e.sessionId !== sessionId) return;
        started = false;
        sink.push({ type: 'compaction_completed', sessionId, result: e.result });
      }),
      events.on('compactionSkipped', (e) => {
        if (e.sessionId !== sessionId || !started) return;
        started = false;
        sink.push({ type: 'compaction_skipped', sessionId, reason: e.reason });
      }),
      events.on('compactionFailed', (e) => {
        if (e.sessionId !== sessionId || !started) return;
        started = false;
        sink.push({ type: 'compaction_failed', sessionId, error: e.error });
      }),
    ];
    return () => offs.forEach((off) => off());
  }
}
