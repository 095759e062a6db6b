import { randomUUID } from 'node:crypto';
import type {
  AgentInputItem,
  CallModelInputFilter,
  OpenAIResponsesCompactionArgs,
  OpenAIResponsesCompactionAwareSession,
  OpenAIResponsesCompactionResult,
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
import type { SessionEvent } from '../../session/SessionEvent.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { resolveSession } from '../../chat/resolveSession.js';
import { HistoryRecall, placeRecallBlock } from '../../chat/HistoryRecall.js';
import type { SessionMemoryRecallOptions } from '../../chat/SessionMemoryTypes.js';
import { fromAgentItem, itemsOf, pairAgentItems } from './AgentItems.js';
import { AgentTurnGuard, type AgentOverflowRecovery } from './AgentTurnGuard.js';

export interface CompactingSessionOptions {
  /** The service to write through; or give `repository` and a DefaultSessionService is made over it. */
  sessionService?: SessionService;
  repository?: SessionRepository;
  /** Default: a random UUID (a new conversation). */
  sessionId?: string;
  /** Owner of the session, from your auth. A session owned by someone else is refused on first use. */
  userId?: string;
  /** Run after each completed turn (`runCompaction`); set both or neither. */
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
  /** Output of the result added for a function call whose output is not in the history. */
  missingOutput?: string;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };
const MAX_POP_ATTEMPTS = 5;

/**
 * An OpenAI Agents SDK session over this library's event log, on any repository. The runner reads the
 * history with `getItems` (the active window), appends each turn with `addItems`, and after a completed turn
 * calls `runCompaction`, which runs the configured trigger and strategy. Compaction archives, it never
 * deletes: every item ever added stays in the log (`service.getEvents(id, EventFilter.all())`), and each is
 * stored exactly as the SDK gave it, so the history sent back to the model is the items themselves —
 * reasoning with its encrypted content, provider-native compaction items and all.
 */
export class CompactingSession implements OpenAIResponsesCompactionAwareSession {
  static readonly DEFAULT_USER_ID = 'default-user';
  readonly sessionId: string;
  readonly userId: string | undefined;
  readonly service: SessionService;
  private readonly trigger: CompactionTrigger | undefined;
  private readonly strategy: CompactionStrategy | undefined;
  private readonly contextWindowTokens: number | undefined;
  private readonly onClear: 'archive' | 'delete';
  private readonly readFilter: EventFilter;
  private readonly missingOutput: string | undefined;
  private readonly estimator: TokenCountEstimator;
  private readonly logger: Logger;
  private readonly recall: HistoryRecall | null;
  private resolved: Promise<unknown> | null = null;
  private readonly guard: AgentTurnGuard;
  /**
   * Pass it to the runner (`run(agent, input, { session, callModelInputFilter: session.callModelInputFilter })`)
   * and the compaction trigger is asked before every model call of a run, not only after the turn: the
   * stored history is compacted with the strategy (a compaction inside the turn never separates a call from
   * its output nor archives the turn's input), and when the run's own steps alone exceed
   * `contextWindowTokens`, the oldest are left out of that call (the runner stores them all the same).
   */
  readonly callModelInputFilter: CallModelInputFilter;
  /** Set by clearSession with onClear 'delete': this session's own next use takes its deleted id back. */
  private recreate = false;

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
    this.missingOutput = options.missingOutput;
    this.estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.recall = options.recall === undefined ? null : new HistoryRecall(this.service, options.recall, this.estimator);
    this.guard = new AgentTurnGuard({
      session: this,
      service: this.service,
      trigger: this.trigger,
      strategy: this.strategy,
      contextWindowTokens: this.contextWindowTokens,
      estimator: this.estimator,
      logger: this.logger,
    });
    this.callModelInputFilter = this.guard.callModelInputFilter;
  }

  /**
   * Runs `run(input)` (your `runner.run(agent, input, { session: this, ... })`); when the provider refuses the
   * prompt as too long, stores what the refused run had not stored, calibrates, compacts mechanically and
   * calls `run([])` exactly once more, continuing from the stored history. A second refusal is one
   * ContextOverflowError naming the session; the turn's input is stored either way.
   */
  runWithOverflowRecovery<R>(
    run: (input: string | AgentInputItem[]) => Promise<R>,
    input: string | AgentInputItem[],
  ): Promise<R> {
    return this.guard.runWithOverflowRecovery(run, input);
  }

  /**
   * The hook behind `runWithOverflowRecovery`, for a run loop of your own: null when `error` is not a
   * context-overflow refusal; otherwise what the refused run had not stored (`input` when it never reached
   * the model) is stored, the estimate calibrated and the window compacted — then send `run(agent, [])` once.
   */
  recoverFromOverflow(error: unknown, input?: string | AgentInputItem[]): Promise<AgentOverflowRecovery | null> {
    return this.guard.recoverFromOverflow(error, input);
  }

  /** Creates the session on first use (owned by `userId`), and refuses one owned by another user. */
  async getSessionId(): Promise<string> {
    await this.ensureSession();
    return this.sessionId;
  }

  /**
   * The active window as input items, in log order, calls and outputs paired; with `limit`, the most recent
   * `limit` items (an output whose call falls outside them is left out, so the slice stays valid). With
   * `recall`, plus the recall block (not counted in `limit`); the window may then lose its oldest items to fit
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
      events = await this.active();
    }
    let block: string | null = null;
    if (this.recall !== null) {
      ({ events, block } = await this.recall.recall(this.sessionId, events, this.readFilter, this.contextWindowTokens));
    }
    const items = events.flatMap(itemsOf);
    const recent = limit === undefined || limit === null ? items : limit === 0 ? [] : items.slice(-limit);
    const paired = pairAgentItems(recent, this.missingOutput);
    if (block === null) return paired;
    return placeRecallBlock<AgentInputItem>(paired, { role: 'user', content: block }, this.recall!.placement, (item) =>
      'role' in item ? item.role : undefined,
    );
  }

  /** Appends each item as one event, in order, exactly as given. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (!Array.isArray(items)) throw new InvalidArgumentError('items must not be null');
    await this.ensureSession();
    for (const item of items) {
      const { message, metadata } = fromAgentItem(item);
      await this.service.appendMessage(this.sessionId, message, metadata === undefined ? {} : { metadata });
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
      if (result.archivedEvents.length > 0) return popped;
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
   * Called by the runner after a completed turn is stored: runs the configured trigger and strategy (with
   * `force`, the strategy alone). Archived items stay in the log. Returns null: the runner adds no model usage
   * for it (a summarising strategy's own model calls are its ChatClient's).
   */
  async runCompaction(args?: OpenAIResponsesCompactionArgs): Promise<OpenAIResponsesCompactionResult | null> {
    if (this.trigger === undefined || this.strategy === undefined) return null;
    await this.ensureSession();
    try {
      await this.service.compact(this.sessionId, args?.force === true ? ALWAYS : this.trigger, this.strategy);
    } catch (error) {
      // Best effort, as the runner expects: the turn is stored; the next turn compacts again.
      this.logger.error('compaction failed; the session continues uncompacted', {
        sessionId: this.sessionId,
        error: String(error),
      });
    }
    return null;
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

  private active(): Promise<SessionEvent[]> {
    return this.service.getEvents(this.sessionId, this.readFilter);
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
