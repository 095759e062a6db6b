import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionMessage, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { CompactionResult } from '../compaction/CompactionResult.js';
import { toCompactionStrategy, type CompactionStrategy } from '../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTrigger } from '../compaction/CompactionTrigger.js';
import { formatMessage } from '../session/formatEvent.js';
import { IllegalStateError, InvalidArgumentError, requirePositiveInt, requireText } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import { MessageFilter } from '../filter/MessageFilter.js';
import { defaultLogger, type Logger } from '../logging.js';
import { KeyedMutex } from '../service/KeyedMutex.js';
import type { Message } from '../session/Message.js';
import { fromOpenAIMessage, toOpenAIMessages } from '../session/OpenAIMessages.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { calibrationRatio } from '../tokens/calibration.js';
import { estimateEventsTokens } from '../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { AsyncQueue } from './AsyncQueue.js';
import { ChatCompletionChunkAggregator } from './ChatCompletionChunkAggregator.js';
import {
  SESSION_ID_CONTEXT_KEY,
  USER_ID_CONTEXT_KEY,
  toEventIdGenerator,
  type EventIdContext,
  type SessionEventIdGenerator,
} from './eventIdGenerators.js';
import { messageToPersist, systemMessagesFirst, toolNameResolver } from './requestMessages.js';
import { metadataStoreOf, SessionCalibrator } from './SessionCalibrator.js';
import { accessDenied } from '../service/sessionAccess.js';
import type {
  ContextStatus,
  SessionMemoryOptions,
  SessionMemoryRequest,
  SessionMemoryResponse,
  SessionMemoryService,
  SessionMemoryStreamEvent,
} from './SessionMemoryTypes.js';

type Sink = AsyncQueue<SessionMemoryStreamEvent>;

/** Everything worked out before the model call. */
interface PreparedTurn {
  sessionId: string;
  idContext: EventIdContext;
  model: string;
  chatParams: Record<string, unknown>;
  signal: AbortSignal | undefined;
  prompt: ChatCompletionMessageParam[];
  contextStatus: ContextStatus;
  estimatedPromptTokens: number;
  persisted: SessionEvent[];
  compaction: CompactionResult | undefined;
}

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };

/**
 * Session memory around an OpenAI-compatible chat client (the Java SessionMemoryAdvisor, adapted). Per request:
 * 1. resolve the session: auto-create on first use; a request `userId` different from the owner is refused;
 * 2. read the active history through eventFilter ⊕ request filter ⊕ EventFilter.active();
 * 3. persist the incoming user message (or tool results) through the MessageFilter — after the read, so the
 *    prompt never holds it twice;
 * 4. call the model with system messages first, then history, then the request's messages;
 * 5. persist the reply (tool calls included), record the token calibration, then compact with trigger/strategy.
 * Event ids come from the id generators; with IdempotentSessionEventIdGenerator a retried request appends nothing
 * new, and its prompt is the one the original attempt sent.
 */
export class SessionMemory {
  static readonly DEFAULT_USER_ID = 'default-user';

  readonly model: string;
  readonly defaultUserId: string;
  readonly eventFilter: EventFilter;
  readonly messageFilter: MessageFilter;
  readonly contextWindowTokens: number | undefined;
  private readonly service: SessionMemoryService;
  private readonly client: OpenAI;
  private readonly trigger: CompactionTrigger | undefined;
  private readonly strategy: CompactionStrategy | undefined;
  private readonly requestIds: SessionEventIdGenerator;
  private readonly responseIds: SessionEventIdGenerator;
  private readonly estimator: TokenCountEstimator;
  private readonly calibrator: SessionCalibrator | null;
  private readonly streamUsage: boolean;
  private readonly logger: Logger;
  /** Serialises session resolution per id in this process, so two first requests cannot both create it. */
  private readonly resolving = new KeyedMutex();

  constructor(options: SessionMemoryOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.sessionService === null || options.sessionService === undefined) {
      throw new InvalidArgumentError('sessionService must not be null');
    }
    if (options.client === null || options.client === undefined) throw new InvalidArgumentError('client must not be null');
    if ((options.compactionTrigger === undefined) !== (options.compactionStrategy === undefined)) {
      throw new InvalidArgumentError('compactionTrigger and compactionStrategy must be set together — set both or neither');
    }
    if (options.eventFilter === null) throw new InvalidArgumentError('eventFilter must not be null');
    if (options.messageFilter === null) throw new InvalidArgumentError('messageFilter must not be null');
    this.service = options.sessionService;
    this.client = options.client;
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
    this.estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.logger = options.logger ?? defaultLogger();
    const store = options.metadataStore ?? metadataStoreOf(options.sessionService);
    this.calibrator = store === undefined || options.calibrate === false ? null : new SessionCalibrator(store, this.logger);
    this.streamUsage = options.streamUsage ?? true;
  }

  /** One non-streaming turn. */
  async call(request: SessionMemoryRequest): Promise<SessionMemoryResponse> {
    const turn = await this.prepare(request, null);
    const completion: ChatCompletion = await this.client.chat.completions.create(
      { ...turn.chatParams, model: turn.model, messages: turn.prompt, stream: false },
      turn.signal === undefined ? {} : { signal: turn.signal },
    );
    const choice = completion.choices[0];
    if (choice === undefined) throw new IllegalStateError('the model returned no choices');
    return this.finish(turn, choice.message, completion.usage ?? null, choice.finish_reason ?? null, null, completion);
  }

  /**
   * One streaming turn: the model's chunks as they arrive, `compaction_started` before a compaction's strategy
   * (and so any summariser call) runs, then `compaction_completed` (or `_skipped` / `_failed`), and last `done`
   * with the response. The reply is persisted once, from the aggregated chunks. An aborted `signal` stops the
   * model call and nothing of the interrupted reply is persisted; stopping the iteration early aborts a call
   * still in progress (a reply already received in full is still persisted).
   */
  stream(request: SessionMemoryRequest): AsyncGenerator<SessionMemoryStreamEvent, void, undefined> {
    return this.streamEvents(request);
  }

  private async *streamEvents(request: SessionMemoryRequest): AsyncGenerator<SessionMemoryStreamEvent, void, undefined> {
    const queue: Sink = new AsyncQueue();
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

  private async produceStream(request: SessionMemoryRequest, signal: AbortSignal, sink: Sink): Promise<void> {
    const turn = await this.prepare(request, sink);
    const stream = await this.client.chat.completions.create(
      {
        ...turn.chatParams,
        model: turn.model,
        messages: turn.prompt,
        stream: true,
        ...(this.streamUsage ? { stream_options: { include_usage: true } } : {}),
      },
      { signal },
    );
    const aggregator = new ChatCompletionChunkAggregator();
    for await (const chunk of stream) {
      aggregator.add(chunk);
      sink.push({ type: 'chunk', chunk });
    }
    const { message, usage, finishReason } = aggregator.result();
    sink.push({ type: 'done', response: await this.finish(turn, message, usage, finishReason, sink) });
  }

  private async prepare(request: SessionMemoryRequest, sink: Sink | null): Promise<PreparedTurn> {
    if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
    const { sessionId: rawSessionId, userId: rawUserId, messages, filter, context, model, signal, ...chatParams } = request;
    const sessionId = requireText(rawSessionId, 'sessionId');
    if (!Array.isArray(messages)) throw new InvalidArgumentError('messages must not be null');
    const userId = typeof rawUserId === 'string' && rawUserId.trim() !== '' ? rawUserId : undefined;
    const session = await this.resolveSession(sessionId, userId);

    const historyFilter = this.eventFilter.merge(filter ?? null).merge(EventFilter.active());
    const idContext: EventIdContext = {
      ...(context ?? {}),
      [SESSION_ID_CONTEXT_KEY]: sessionId,
      [USER_ID_CONTEXT_KEY]: userId ?? null,
    };
    const readHistory = async (): Promise<{ history: SessionEvent[]; incoming: Message | null; incomingId: string | null }> => {
      const all = await this.service.getEvents(sessionId, historyFilter);
      const incoming = messageToPersist(messages, toolNameResolver(all, messages));
      const incomingId = incoming === null ? null : this.requestIds.generate(idContext, incoming);
      // A retried request finds its own message already stored: send the context its first attempt saw.
      const replayAt = incomingId === null ? -1 : all.findIndex((e) => e.id === incomingId);
      return { history: replayAt < 0 ? all : all.slice(0, replayAt), incoming, incomingId };
    };

    let { history, incoming, incomingId } = await readHistory();
    let compaction: CompactionResult | undefined;
    if (this.contextWindowTokens !== undefined) {
      const limit = this.contextWindowTokens;
      const ratio = calibrationRatio(session);
      const needed = () => Math.ceil(this.estimatePrompt(history, messages) * ratio);
      if (needed() > limit) {
        if (this.strategy === undefined) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), and no compactionStrategy is configured`,
          );
        }
        compaction = await this.runCompaction(sessionId, ALWAYS, this.strategy, sink);
        ({ history, incoming, incomingId } = await readHistory());
        if (needed() > limit) {
          throw new IllegalStateError(
            `the prompt needs about ${needed()} tokens, more than contextWindowTokens (${limit}), even after compaction`,
          );
        }
      }
    }

    const persisted: SessionEvent[] = [];
    if (incoming !== null && this.messageFilter.shouldPersist(incoming)) {
      persisted.push(await this.service.appendMessage(sessionId, incoming, { id: incomingId as string }));
    }
    return {
      sessionId,
      idContext,
      model: model ?? this.model,
      chatParams: chatParams as Record<string, unknown>,
      signal,
      prompt: systemMessagesFirst([...toOpenAIMessages(history), ...messages]),
      contextStatus: history.some((e) => e.isSynthetic()) ? 'summarized' : 'full',
      estimatedPromptTokens: this.estimatePrompt(history, messages),
      persisted,
      compaction,
    };
  }

  private async finish(
    turn: PreparedTurn,
    message: ChatCompletionMessage,
    usage: CompletionUsage | null,
    finishReason: string | null,
    sink: Sink | null,
    completion?: ChatCompletion,
  ): Promise<SessionMemoryResponse> {
    const reply = fromOpenAIMessage(message);
    if (this.messageFilter.shouldPersist(reply)) {
      turn.persisted.push(
        await this.service.appendMessage(turn.sessionId, reply, { id: this.responseIds.generate(turn.idContext, reply) }),
      );
    }
    if (this.calibrator !== null && usage !== null) {
      await this.calibrator.record(turn.sessionId, usage.prompt_tokens, turn.estimatedPromptTokens);
    }
    let compaction = turn.compaction;
    if (this.trigger !== undefined && this.strategy !== undefined) {
      compaction = (await this.runCompaction(turn.sessionId, this.trigger, this.strategy, sink)) ?? compaction;
    }
    return {
      sessionId: turn.sessionId,
      message,
      contextStatus: turn.contextStatus,
      ...(compaction !== undefined ? { compaction } : {}),
      usage,
      finishReason,
      persisted: turn.persisted,
      ...(completion !== undefined ? { completion } : {}),
    };
  }

  private async resolveSession(sessionId: string, userId: string | undefined): Promise<Session> {
    return this.resolving.run(sessionId, async () => {
      const session = (await this.service.findById(sessionId)) ?? (await this.createOrReread(sessionId, userId));
      if (userId !== undefined && session.userId !== userId) throw accessDenied(sessionId, userId);
      return session;
    });
  }

  /** Another process may create the session between our read and our create: then read the winner's. */
  private async createOrReread(sessionId: string, userId: string | undefined): Promise<Session> {
    try {
      return await this.service.create({ id: sessionId, userId: userId ?? this.defaultUserId });
    } catch (error) {
      const existing = error instanceof IllegalStateError ? await this.service.findById(sessionId) : null;
      if (existing === null) throw error;
      return existing;
    }
  }

  /** Our estimate of the prompt: the history as counted by the triggers plus the request's own messages. */
  private estimatePrompt(history: readonly SessionEvent[], messages: readonly ChatCompletionMessageParam[]): number {
    let total = estimateEventsTokens(history, this.estimator);
    for (const m of messages) {
      let text: string;
      try {
        text = formatMessage(fromOpenAIMessage(m));
      } catch {
        text = JSON.stringify(m);
      }
      total += this.estimator.estimate(text);
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
    sink: Sink | null,
  ): Promise<CompactionResult | undefined> {
    const unsubscribe = sink === null ? () => undefined : this.forwardCompactionEvents(sessionId, sink);
    try {
      const result = await this.service.compact(sessionId, trigger, strategy);
      return result.archivedEvents.length > 0 ? result : undefined;
    } catch (error) {
      this.logger.error('compaction failed; the conversation continues uncompacted', { sessionId, error: String(error) });
      return undefined;
    } finally {
      unsubscribe();
    }
  }

  private forwardCompactionEvents(sessionId: string, sink: Sink): () => void {
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
