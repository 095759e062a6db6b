import { createHash, randomUUID } from 'node:crypto';
import type {
  AgentInputItem,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionOwnershipAwareSession,
  OpenAIResponsesCompactionResult,
  RequestUsage,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents';
import { CompactionResult } from '../../compaction/CompactionResult.js';
import {
  toCompactionStrategy,
  type CompactionStrategy,
  type CompactionStrategyLike,
} from '../../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTrigger, type CompactionTriggerLike } from '../../compaction/CompactionTrigger.js';
import { IllegalStateError, InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { DefaultSessionService } from '../../service/DefaultSessionService.js';
import type { SessionService } from '../../service/SessionService.js';
import { Messages, type Message } from '../../session/Message.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import type { UsageRecord } from '../../tokens/UsageRecord.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { resolveSession } from '../../chat/resolveSession.js';
import { withArchivedCalls } from '../../chat/archivedToolCalls.js';
import { HistoryRecall, placeRecallBlock } from '../../chat/HistoryRecall.js';
import type { SessionMemoryRecallOptions } from '../../chat/SessionMemoryTypes.js';
import { stableJson } from '../../chat/nativeMessages.js';
import { agentItemKey, fromAgentItem, itemsCovered, itemsOf } from './AgentItems.js';

export interface CompactingSessionOptions {
  /** The service to write through; or give `repository` and a DefaultSessionService is made over it. */
  sessionService?: SessionService;
  repository?: SessionRepository;
  /** Default: a random UUID (a new conversation). */
  sessionId?: string;
  /** Owner of the session, from your auth. A session owned by someone else is refused on first use. */
  userId?: string;
  /**
   * Run after each completed turn (`runCompaction`); set both or neither. After a run the runner asks for a
   * compaction only of history the model has seen: see `runCompaction`.
   */
  compactionTrigger?: CompactionTriggerLike;
  compactionStrategy?: CompactionStrategyLike;
  /**
   * When set, `getItems` compacts first (with `compactionStrategy`, whatever the trigger says) if the active
   * window's calibrated estimate exceeds it, so a run never starts from a history that does not fit.
   */
  contextWindowTokens?: number;
  /**
   * What `clearSession` does: 'archive' (default) archives every active item — the agent starts afresh, the
   * log keeps everything; 'delete' deletes the session and its whole log.
   */
  onClear?: 'archive' | 'delete';
  /** Read-side filter of the history (always merged with EventFilter.active()). */
  eventFilter?: EventFilter;
  /**
   * Recall, with the same options as SessionMemory's: `getItems` adds one transient user item quoting the
   * archived events that match the latest user item of the window (never stored: the runner persists only
   * the new items of a turn). The budget is `contextWindowTokens` when set; without it only the block is
   * bounded (`maxTokens`, default 2,000). Placement 'before-last-user' (default) puts the block last when the
   * window ends with the model's reply — right before the run's new input, so the stored history stays an
   * unchanged prefix — and before the window's last user item when that item has no reply yet;
   * 'after-system' puts it first, after any system items.
   */
  recall?: SessionMemoryRecallOptions;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };
const MAX_POP_ATTEMPTS = 5;
/** Event metadata marking the events a history transaction wrote: its operation id, a digest, the item's place. */
const METADATA_OPERATION = 'agentsHistoryOperation';

interface OperationMark {
  id: string;
  digest: string;
  index: number;
}

/** The model exchange the runner hands `runCompaction`: the input and output of its last successful model call. */
type ModelExchange = Parameters<OpenAIResponsesCompactionOwnershipAwareSession['runCompaction']>[3];

/**
 * An OpenAI Agents SDK session over this library's event log, on any repository. The runner reads the
 * history with `getItems` (the active window), appends each turn with `addItems`, and after a completed turn
 * calls `runCompaction`, which runs the configured trigger and strategy — only over history the model has
 * seen. Compaction archives, it never deletes: every item ever added stays in the log
 * (`service.getEvents(id, EventFilter.all())`), and each is stored exactly as the SDK gave it, so the history
 * sent back to the model is the items themselves — reasoning with its encrypted content, provider-native
 * compaction items and all. A call still waiting for its output (a human approval, an interrupted run) reads
 * back as it is: the runner resumes it, or drops it from the model input itself.
 */
export class CompactingSession implements OpenAIResponsesCompactionOwnershipAwareSession, SessionHistoryTransactionAwareSession {
  static readonly DEFAULT_USER_ID = 'default-user';
  readonly sessionId: string;
  readonly userId: string | undefined;
  readonly service: SessionService;
  private readonly trigger: CompactionTrigger | undefined;
  private readonly strategy: CompactionStrategy | undefined;
  private readonly contextWindowTokens: number | undefined;
  private readonly onClear: 'archive' | 'delete';
  private readonly readFilter: EventFilter;
  private readonly estimator: TokenCountEstimator;
  private readonly logger: Logger;
  private readonly recall: HistoryRecall | null;
  private resolved: Promise<unknown> | null = null;
  /** Set by clearSession with onClear 'delete': this session's own next use takes its deleted id back. */
  private recreate = false;
  /** Ownership receipts handed to the runner: the log generation each one vouches for. */
  private readonly receipts = new WeakMap<object, number>();
  /** Writes through this instance, the generation when the service cannot report the log's version. */
  private writes = 0;

  constructor(options: CompactingSessionOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if ((options.sessionService === undefined) === (options.repository === undefined)) {
      throw new InvalidArgumentError('set sessionService or repository, exactly one');
    }
    if ((options.compactionTrigger === undefined) !== (options.compactionStrategy === undefined)) {
      throw new InvalidArgumentError('compactionTrigger and compactionStrategy must be set together — set both or neither');
    }
    const onClear = options.onClear ?? 'archive';
    if (onClear !== 'archive' && onClear !== 'delete') throw new InvalidArgumentError("onClear must be 'archive' or 'delete'");
    this.logger = options.logger ?? defaultLogger();
    this.service = options.sessionService ?? new DefaultSessionService(options.repository!, { logger: this.logger });
    this.sessionId = options.sessionId === undefined ? randomUUID() : requireText(options.sessionId, 'sessionId');
    this.userId = options.userId === undefined ? undefined : requireText(options.userId, 'userId');
    this.trigger = options.compactionTrigger === undefined ? undefined : toCompactionTrigger(options.compactionTrigger);
    this.strategy = options.compactionStrategy === undefined ? undefined : toCompactionStrategy(options.compactionStrategy);
    this.contextWindowTokens =
      options.contextWindowTokens === undefined
        ? undefined
        : requirePositiveInt(options.contextWindowTokens, 'contextWindowTokens');
    this.onClear = onClear;
    this.readFilter = (options.eventFilter ?? EventFilter.all()).merge(EventFilter.active());
    this.estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.recall = options.recall === undefined ? null : new HistoryRecall(this.service, options.recall, this.estimator);
  }

  /** Creates the session on first use (owned by `userId`), and refuses one owned by another user. */
  async getSessionId(): Promise<string> {
    await this.ensureSession();
    return this.sessionId;
  }

  /**
   * The active window as input items, in log order, as stored — a call still waiting for its output comes
   * back as it is; with `limit`, the most recent `limit` of them (as `MemorySession`). With `recall`, plus the
   * recall block (not counted in `limit`); the window may then lose its oldest items to fit
   * `contextWindowTokens`.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && limit >= 0)) {
      throw new InvalidArgumentError('limit must be a non-negative integer');
    }
    await this.ensureSession();
    let events = await this.active();
    if (this.contextWindowTokens !== undefined && (await this.overWindow(events))) {
      if (this.strategy === undefined) {
        throw new IllegalStateError(
          `the session needs more than contextWindowTokens (${this.contextWindowTokens}) and no compactionStrategy is configured`,
        );
      }
      await this.service.compact(this.sessionId, ALWAYS, this.strategy);
      this.writes++;
      events = await this.active();
    }
    let block: string | null = null;
    if (this.recall !== null) {
      ({ events, block } = await this.recall.recall(this.sessionId, events, this.readFilter, this.contextWindowTokens));
    }
    const items = events.flatMap(itemsOf);
    const recent = limit === undefined || limit === null ? items : limit === 0 ? [] : items.slice(-limit);
    if (block === null) return recent;
    return placeRecallBlock<AgentInputItem>(recent, { role: 'user', content: block }, this.recall!.placement, (item) =>
      'role' in item ? item.role : undefined,
    );
  }

  /**
   * `getItems()` with a receipt for automatic compaction: it vouches for the log as read, and only appends
   * made with it (`addItemsWithCompactionOwnership`) keep it valid. Any other change — another run's append,
   * a pop, a clear, a write from another process — voids it, and `runCompaction` then leaves the history as
   * it is.
   */
  async getItemsWithCompactionOwnership(): Promise<{ items: AgentInputItem[]; ownership: object }> {
    let before = await this.generation();
    let items = await this.getItems();
    let after = await this.generation();
    if (before !== after) {
      // The read compacted (the window guard) or another writer came in between: read once more.
      before = after;
      items = await this.getItems();
      after = await this.generation();
    }
    const ownership = {};
    if (before === after) this.receipts.set(ownership, after);
    return { items, ownership };
  }

  /** `addItems`, keeping `ownership` valid when nothing else changed the log since it was granted. */
  async addItemsWithCompactionOwnership(items: AgentInputItem[], ownership: object | null): Promise<void> {
    const held = ownership === null ? undefined : this.receipts.get(ownership);
    if (ownership !== null) this.receipts.delete(ownership);
    const before = held === undefined ? undefined : await this.generation();
    await this.addItems(items);
    if (held === undefined || before !== held || ownership === null) return;
    const after = await this.generation();
    // Each item is one event and one version step: anything more is another writer's.
    if (after === before + items.length) this.receipts.set(ownership, after);
  }

  /** Appends each item as one event, in order, exactly as given. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
    await this.ensureSession();
    for (const item of items) {
      const { message, metadata } = fromAgentItem(item);
      await this.service.appendMessage(this.sessionId, message, metadata === undefined ? {} : { metadata });
      this.writes++;
    }
  }

  /**
   * Removes the most recent item of the active window and returns it; undefined when the window is empty.
   * The item is archived, not deleted: it no longer reaches the model and `getItems`, and stays in the log.
   * (An event written by another integration that stands for several items loses only its last one.)
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    await this.ensureSession();
    for (let attempt = 0; attempt < MAX_POP_ATTEMPTS; attempt++) {
      let popped: AgentInputItem | undefined;
      const result = await this.service.compact(this.sessionId, ALWAYS, async (request) => {
        const events = request.events;
        const last = events[events.length - 1];
        popped = undefined;
        if (last === undefined) return CompactionResult.noop(events);
        const items = itemsOf(last);
        popped = items[items.length - 1];
        const rest = withoutLastItem(last.message);
        const retained = events.slice(0, -1);
        if (rest !== null) retained.push(last.with({ id: randomUUID(), message: rest, metadata: {} }));
        return new CompactionResult(retained, [last], 0);
      });
      if (popped === undefined) return undefined;
      if (result.archivedEvents.length > 0) {
        this.writes++;
        return popped;
      }
      // A concurrent append won the version race: read the window again.
    }
    throw new IllegalStateError(`could not pop an item of session '${this.sessionId}': the session kept changing`);
  }

  /**
   * Empties the session for the agent. With `onClear: 'archive'` (default) every active item is archived:
   * `getItems` returns nothing, the log keeps every item. With `onClear: 'delete'` the session and its whole log
   * are deleted; the next use creates it again.
   */
  async clearSession(): Promise<void> {
    this.writes++;
    if (this.onClear === 'delete') {
      await this.service.delete(this.sessionId);
      this.resolved = null;
      this.recreate = true;
      return;
    }
    await this.ensureSession();
    await this.service.compact(this.sessionId, ALWAYS, async (request) => new CompactionResult([], [...request.events], 0));
  }

  /**
   * Called by the runner after a completed turn is stored. It passes the receipt of the turn's history read
   * and the model exchange of its last model call; the configured trigger and strategy then run only when the
   * receipt still holds (nothing but this run's own appends changed the log) and the model has seen every item
   * of the active window — history left out by a `sessionInputCallback` or `callModelInputFilter`, or written
   * after the read, is never compacted unseen (`OpenAIResponsesCompactionSession`'s policy). Called by you
   * (no receipt), it runs at once; `force` runs the strategy whatever the trigger says. Archived items stay
   * in the log. Returns the summariser's usage, which the runner adds to the run's, when the compaction called
   * a model; null when it did not run or called none. A failed compaction is logged: the turn is stored, the
   * next turn compacts again.
   */
  async runCompaction(
    args?: OpenAIResponsesCompactionArgs,
    _runContext?: unknown,
    ownership?: object | null,
    modelExchange?: ModelExchange,
  ): Promise<OpenAIResponsesCompactionResult | null> {
    if (this.trigger === undefined || this.strategy === undefined) return null;
    await this.ensureSession();
    const automatic = ownership !== undefined;
    if (automatic) {
      const held = ownership === null ? undefined : this.receipts.get(ownership);
      if (held === undefined || modelExchange === undefined || held !== (await this.generation())) return null;
    }
    const trigger = args?.force === true ? ALWAYS : this.trigger;
    const seen = modelExchange?.items;
    // Checked on the window the compaction itself reads and commits against, so nothing unseen slips in.
    const gated: CompactionTrigger =
      automatic && seen !== undefined
        ? {
            shouldCompact: async (request) =>
              itemsCovered(request.events.flatMap(itemsOf), seen) && (await trigger.shouldCompact(request)),
          }
        : trigger;
    let result: CompactionResult;
    try {
      result = await this.service.compact(this.sessionId, gated, this.strategy);
    } catch (error) {
      this.logger.error('compaction failed; the session continues uncompacted', {
        sessionId: this.sessionId,
        error: String(error),
      });
      return null;
    }
    if (result.archivedEvents.length > 0) {
      this.writes++;
      // The run compacted its own history: its receipt holds for what it left.
      if (automatic && ownership !== null) this.receipts.set(ownership, await this.generation());
    }
    return summarizerUsage(result.usage);
  }

  /**
   * Applies a history transaction of the runner (it persists a blocked output, then replaces it once the
   * output is accepted) atomically and once: `append_items` appends the items, `replace_suffix` replaces the
   * window's last items, which must be `expectedSuffix`, with `replacement` in one compare-and-set step. Every
   * event a transaction writes carries its operation id and a digest of it, so a retried operation is
   * recognised — the same transaction succeeds without applying twice, another one under the same id is
   * refused — and an append interrupted half way is completed by its retry.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    if (args === null || typeof args !== 'object') throw new InvalidArgumentError('args must not be null');
    const operationId = requireText(args.operationId, 'operationId');
    const transaction = args.transaction;
    if (transaction === null || typeof transaction !== 'object') throw new InvalidArgumentError('transaction must not be null');
    if (transaction.type !== 'append_items' && transaction.type !== 'replace_suffix') {
      throw new InvalidArgumentError("transaction.type must be 'append_items' or 'replace_suffix'");
    }
    const items = transaction.type === 'append_items' ? transaction.items : transaction.replacement;
    if (!Array.isArray(items) || (transaction.type === 'replace_suffix' && !Array.isArray(transaction.expectedSuffix))) {
      throw new InvalidArgumentError('transaction items must be arrays');
    }
    await this.ensureSession();
    const digest = createHash('sha256').update(stableJson(transaction)).digest('base64url');
    const marks = (await this.service.getEvents(this.sessionId, EventFilter.all()))
      .map((e) => e.metadata[METADATA_OPERATION] as OperationMark | undefined)
      .filter((m): m is OperationMark => m !== undefined && m !== null && m.id === operationId);
    if (marks.some((m) => m.digest !== digest)) {
      throw new IllegalStateError('Session history operation was already applied with a different transaction.');
    }
    const mark = (index: number): OperationMark => ({ id: operationId, digest, index });
    const eventId = (index: number) =>
      `${this.sessionId}:op:${createHash('sha256').update(operationId).digest('hex').slice(0, 24)}:${index}`;
    if (transaction.type === 'append_items' || transaction.expectedSuffix.length === 0) {
      // Event ids derived from the operation: a retry appends only what an interrupted attempt did not.
      for (const [index, item] of items.entries()) {
        const { message, metadata } = fromAgentItem(item);
        await this.service.appendMessage(this.sessionId, message, {
          id: eventId(index),
          metadata: { ...metadata, [METADATA_OPERATION]: mark(index) },
        });
      }
      this.writes += items.length;
      return;
    }
    if (marks.length > 0) return;
    const expected = transaction.expectedSuffix.map(agentItemKey);
    for (let attempt = 0; attempt < MAX_POP_ATTEMPTS; attempt++) {
      const result = await this.service.compact(this.sessionId, ALWAYS, async (request) => {
        const events = request.events;
        let start = events.length;
        let count = 0;
        while (start > 0 && count < expected.length) count += itemsOf(events[--start]!).length;
        const suffix = events.slice(start).flatMap(itemsOf).map(agentItemKey);
        if (count !== expected.length || suffix.some((key, i) => key !== expected[i])) {
          throw new IllegalStateError('Session history suffix no longer matches the transaction precondition.');
        }
        const replacement = items.map((item, index) => {
          const { message, metadata } = fromAgentItem(item);
          return SessionEvent.create({
            sessionId: this.sessionId,
            id: eventId(index),
            message,
            metadata: { ...metadata, [METADATA_OPERATION]: mark(index) },
          });
        });
        return new CompactionResult([...events.slice(0, start), ...replacement], events.slice(start), 0);
      });
      if (result.archivedEvents.length > 0) {
        this.writes++;
        return;
      }
      // A concurrent write won the version race: check the precondition on the new window.
    }
    throw new IllegalStateError(
      `could not apply a history transaction to session '${this.sessionId}': the session kept changing`,
    );
  }

  private ensureSession(): Promise<unknown> {
    this.resolved ??= resolveSession(this.service, this.sessionId, this.userId, CompactingSession.DEFAULT_USER_ID, {
      allowRecreate: this.recreate,
    }).then(
      (session) => {
        this.recreate = false;
        return session;
      },
      (error: unknown) => {
        this.resolved = null;
        throw error;
      },
    );
    return this.resolved;
  }

  private async active(): Promise<SessionEvent[]> {
    return withArchivedCalls(this.service, this.sessionId, await this.service.getEvents(this.sessionId, this.readFilter));
  }

  /** The log's version (any writer, any process), or this instance's own writes when the service cannot say. */
  private async generation(): Promise<number> {
    return typeof this.service.getEventVersion === 'function' ? this.service.getEventVersion(this.sessionId) : this.writes;
  }

  private async overWindow(events: readonly SessionEvent[]): Promise<boolean> {
    const session = await this.service.findById(this.sessionId);
    const ratio = session === null ? 1 : calibrationRatio(session);
    return Math.ceil(estimateEventsTokens(events, this.estimator) * ratio) > this.contextWindowTokens!;
  }
}

/** The Message without the part that converts to its last item; null when nothing would be left. */
function withoutLastItem(message: Message): Message | null {
  if (message.type === 'tool') return message.responses.length > 1 ? Messages.tool(message.responses.slice(0, -1)) : null;
  if (message.type === 'assistant' && (message.toolCalls?.length ?? 0) > 0) {
    const calls = message.toolCalls!.slice(0, -1);
    if (calls.length === 0 && (message.text === null || message.text === '')) return null;
    return Messages.assistant(message.text, { toolCalls: calls });
  }
  return null;
}

/** The usage a compaction's summariser reported, as the runner adds it to a run's; null when no model was called. */
function summarizerUsage(usage: UsageRecord | undefined): OpenAIResponsesCompactionResult | null {
  if (usage === undefined || usage.summarizerCalls === 0) return null;
  const requestUsage: RequestUsage = {
    inputTokens: usage.summarizerInputTokens,
    outputTokens: usage.summarizerOutputTokens,
    totalTokens: usage.summarizerInputTokens + usage.summarizerOutputTokens,
    inputTokensDetails: { cached_tokens: usage.summarizerCachedInputTokens },
    outputTokensDetails: {},
    endpoint: 'session-compaction.summarize',
  };
  return { usage: requestUsage };
}
