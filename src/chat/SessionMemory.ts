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
import type { ChatProvider, ChatProviderOutcome, ChatProviderTypes, PersistableMessage } from './ChatProvider.js';
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
  SessionMemoryStreamEvent,
} from './SessionMemoryTypes.js';

type Sink<T extends ChatProviderTypes> = AsyncQueue<SessionMemoryStreamEvent<T>>;

/** The window after the turn's appends; an id already there (a retried request) was not appended again. */
function withAppended(window: readonly SessionEvent[], appended: readonly SessionEvent[]): SessionEvent[] {
  const ids = new Set(window.map((e) => e.id));
  return [...window, ...appended.filter((e) => !ids.has(e.id))];
}

/** Everything worked out before the model call. */
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
}

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };

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
  }

  /** One non-streaming turn. */
  async call(request: SessionMemoryRequest<T>): Promise<SessionMemoryResponse<T>> {
    return traceTurn(request?.sessionId, false, async (telemetry) => {
      const turn = await this.prepare(request, null);
      this.reportPrepared(telemetry, turn);
      const outcome = await this.provider.call({
        model: turn.model,
        prompt: turn.prompt,
        params: turn.chatParams,
        timeoutMs: this.timeoutMs,
        ...(turn.signal === undefined ? {} : { signal: turn.signal }),
      });
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
      let outcome: ChatProviderOutcome<T>;
      try {
        outcome = await this.provider.stream(
          { model: turn.model, prompt: turn.prompt, params: turn.chatParams, signal, timeoutMs: this.timeoutMs },
          (chunk) => sink.push({ type: 'chunk', chunk }),
        );
      } catch (error) {
        if (!(error instanceof InterruptedReplyError)) throw error;
        await this.storeInterrupted(turn, error);
        throw error.cause ?? error;
      }
      sink.push({ type: 'done', response: this.reportFinished(telemetry, outcome, await this.finish(turn, outcome, sink)) });
    });
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
    const { sessionId: rawSessionId, userId: rawUserId, messages, filter, context, model, signal, ...chatParams } = request;
    const sessionId = requireText(rawSessionId, 'sessionId');
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
    const readHistory = async (): Promise<{ history: SessionEvent[]; incoming: PersistableMessage[]; incomingIds: string[] }> => {
      const all = await this.service.getEvents(sessionId, historyFilter);
      window = wholeWindow ? all : undefined;
      const incoming = this.provider.incoming(messages, all);
      const incomingIds = incoming.map((m) => this.requestIds.generate(idContext, m.message));
      // A retried request finds its own message already stored: send the context its first attempt saw.
      const replayAt = incomingIds.length === 0 ? -1 : all.findIndex((e) => e.id === incomingIds[0]);
      const results = incoming.flatMap(({ message: m }) => (m.type === 'tool' ? m.responses.map((r) => r.id) : []));
      const history = await withArchivedCalls(this.service, sessionId, replayAt < 0 ? all : all.slice(0, replayAt), results);
      return { history, incoming, incomingIds };
    };

    let { history, incoming, incomingIds } = await readHistory();
    let compaction: CompactionResult | undefined;
    const compactionUsage: (UsageRecord | undefined)[] = [];
    if (this.compactBeforeCall && this.trigger !== undefined && this.strategy !== undefined) {
      const known = window === undefined ? undefined : { session, events: window };
      compaction = await this.runCompaction(sessionId, this.trigger, this.strategy, sink, compactionUsage, known);
      if (compaction !== undefined) ({ history, incoming, incomingIds } = await readHistory());
    }
    if (this.contextWindowTokens !== undefined) {
      const limit = this.contextWindowTokens;
      const ratio = calibrationRatio(session);
      const needed = () => Math.ceil(this.estimatePrompt(history, messages, chatParams) * ratio);
      if (needed() > limit) {
        if (this.strategy === undefined) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), and no compactionStrategy is configured`,
          );
        }
        compaction = (await this.runCompaction(sessionId, ALWAYS, this.strategy, sink, compactionUsage)) ?? compaction;
        ({ history, incoming, incomingIds } = await readHistory());
        if (needed() > limit) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), even after compaction`,
          );
        }
      }
    }

    const persisted: SessionEvent[] = [];
    for (const [i, { message, metadata }] of incoming.entries()) {
      if (!this.messageFilter.shouldPersist(message)) continue;
      persisted.push(
        await this.service.appendMessage(sessionId, message, { id: incomingIds[i]!, ...(metadata ? { metadata } : {}) }),
      );
    }
    let promptHistory: SessionEvent[] = history;
    let recall: PreparedTurn<T>['recall'];
    let recallTokens = 0;
    if (this.recall !== null) {
      const assembled = await this.assemble(session, history, messages, chatParams as T['params'], historyFilter);
      ({ promptHistory, recall } = assembled);
      history = assembled.sent;
      recallTokens = recall.tokens.recall;
      sink?.push({ type: 'recall', sessionId, recalled: recall.recalled, tokens: recall.tokens });
    }
    return {
      sessionId,
      session,
      window,
      idContext,
      model: model ?? this.model,
      chatParams: chatParams as T['params'],
      signal,
      prompt: this.provider.prompt(promptHistory, messages, chatParams as T['params']),
      contextStatus: history.some((e) => e.isSynthetic()) ? 'summarized' : 'full',
      estimatedPromptTokens: this.estimatePrompt(history, messages, chatParams) + recallTokens,
      persisted,
      compaction,
      compactionUsage,
      recall,
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
  ): Promise<{ promptHistory: SessionEvent[]; sent: SessionEvent[]; recall: NonNullable<PreparedTurn<T>['recall']> }> {
    const { assembler, settings } = this.recall!;
    const request = this.provider.requestMessages(messages, params);
    const pending = request.filter((m) => m.type !== 'system');
    const lastUser = [...pending].reverse().find((m) => m.type === 'user');
    const window = this.contextWindowTokens;
    const parts = await assembler.assembleParts({
      sessionId: session.id,
      maxTokens: window === undefined ? Number.MAX_SAFE_INTEGER : Math.max(1, Math.floor(window / calibrationRatio(session))),
      system: request.filter((m) => m.type === 'system'),
      activeEvents: history,
      pending,
      ...(lastUser?.type === 'user' ? { query: lastUser.text } : {}),
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
    if (this.trigger !== undefined && this.strategy !== undefined) {
      const known = turn.window === undefined ? undefined : { session, events: withAppended(turn.window, turn.persisted) };
      compaction =
        (await this.runCompaction(turn.sessionId, this.trigger, this.strategy, sink, turn.compactionUsage, known)) ?? compaction;
    }
    const usage = turnUsage(outcome.tokens ?? null, turn.compactionUsage, this.prices, this.summarizerPrices);
    const paidAfter = turn.compactionUsage.slice(paidBefore).filter((u) => u !== undefined);
    if (this.metadata !== null && this.usageRecorder !== null && paidAfter.length > 0) {
      // The turn is counted already: add what the compaction's summariser cost (totals add up exactly).
      const recorder = this.usageRecorder;
      const compactionUsage = turnUsage(null, paidAfter, this.prices, this.summarizerPrices);
      await this.metadata.update(turn.sessionId, (m) => recorder.apply(m, compactionUsage, false));
    }
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
    };
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
    trigger: CompactionTrigger,
    strategy: CompactionStrategy,
    sink: Sink<T> | null,
    usages: (UsageRecord | undefined)[],
    knownWindow?: KnownWindow,
  ): Promise<CompactionResult | undefined> {
    const unsubscribe = sink === null ? () => undefined : this.forwardCompactionEvents(sessionId, sink);
    try {
      const result = await this.service.compact(sessionId, trigger, strategy, knownWindow === undefined ? {} : { knownWindow });
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
