import { randomUUID } from 'node:crypto';
import type { AgentInputItem, CallModelInputFilter, ModelInputData } from '@openai/agents';
import { CompactionRequest } from '../../compaction/CompactionRequest.js';
import type { CompactionStrategy } from '../../compaction/CompactionStrategy.js';
import type { CompactionTrigger } from '../../compaction/CompactionTrigger.js';
import { detectContextOverflow, type ContextOverflow } from '../../chat/contextOverflow.js';
import { ContextOverflowError } from '../../chat/ContextOverflowError.js';
import { ContextOverflowRecovery } from '../../chat/ContextOverflowRecovery.js';
import { SessionMetadataWriter } from '../../chat/SessionMetadataWriter.js';
import { turnSafeStrategy } from '../../chat/turnSafeStrategy.js';
import { EventFilter } from '../../filter/EventFilter.js';
import type { Logger } from '../../logging.js';
import { RECALL_BLOCK_HEADER } from '../../recall/recallBlock.js';
import type { SessionService } from '../../service/SessionService.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { calibrationRatio } from '../../tokens/calibration.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { openAIRefusal } from '../openai/openAIRefusal.js';
import { agentItemKey, fromAgentItem } from './AgentItems.js';

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };

type Loose = Record<string, unknown>;

/** What `recoverFromOverflow` did about a context-overflow refusal. */
export interface AgentOverflowRecovery {
  /** What the refusal said. */
  overflow: ContextOverflow;
  /** Items of the refused run the runner had not stored (the turn's input, finished steps), now stored. */
  stored: number;
  /** Events the emergency compaction archived (they stay in the log). */
  archived: number;
}

/** The part of CompactingSession the guard works through (its public methods). */
export interface GuardedSession {
  readonly sessionId: string;
  getSessionId(): Promise<string>;
  getItems(): Promise<AgentInputItem[]>;
  addItems(items: AgentInputItem[]): Promise<void>;
}

export interface AgentTurnGuardOptions {
  session: GuardedSession;
  service: SessionService;
  trigger: CompactionTrigger | undefined;
  strategy: CompactionStrategy | undefined;
  contextWindowTokens: number | undefined;
  estimator: TokenCountEstimator;
  logger: Logger;
}

/** The transient recall block getItems adds: never stored, never counted as the turn's. */
function isRecallBlock(item: AgentInputItem): boolean {
  const content = (item as Loose).content;
  return (item as Loose).role === 'user' && typeof content === 'string' && content.includes(RECALL_BLOCK_HEADER);
}

const callIdOf = (item: AgentInputItem): string | undefined => {
  const id = (item as Loose).callId;
  return typeof id === 'string' ? id : undefined;
};
const isCallResult = (item: AgentInputItem) => String((item as Loose).type ?? '').endsWith('_result');

/**
 * The Agents runner owns the model calls; this is what CompactingSession hands it so that the trigger is
 * asked before every model call of a run, and so that a context-overflow refusal is recovered from.
 *
 * - `callModelInputFilter` (the runner calls it right before each model call): the items the runner has not
 *   stored yet (the turn's input, the steps of this run) are told from the stored history; when the trigger
 *   fires on the whole, or the prompt is over `contextWindowTokens`, the stored history is compacted with
 *   the configured strategy (turn-safe), and if the run's own steps still do not fit, the oldest of them are
 *   left out of this call's input (never the turn's input, never the latest step, never half of a call and
 *   its output). The runner stores every item of the run all the same: nothing is lost.
 * - `recoverFromOverflow`: on a refusal, what the refused run had not stored is stored (the runner stores
 *   nothing of a failed run), then the estimate is calibrated and the window compacted mechanically.
 */
export class AgentTurnGuard {
  private readonly recovery: ContextOverflowRecovery;
  /** The input of the latest model call, as the runner prepared it (before our filter changed it). */
  private lastInput: ModelInputData | undefined;
  /** After a refusal, until the guarded run ends: the prompt size (provider tokens) calls must stay under. */
  private learnedLimit: number | undefined;

  constructor(private readonly options: AgentTurnGuardOptions) {
    this.recovery = new ContextOverflowRecovery({
      service: options.service,
      estimator: options.estimator,
      logger: options.logger,
      metadata: SessionMetadataWriter.of(undefined, options.service, options.logger) ?? null,
      ...(options.contextWindowTokens !== undefined ? { contextWindowTokens: options.contextWindowTokens } : {}),
    });
  }

  readonly callModelInputFilter: CallModelInputFilter = async ({ modelData }) => {
    this.lastInput = {
      input: [...modelData.input],
      ...(modelData.instructions !== undefined ? { instructions: modelData.instructions } : {}),
    };
    const { trigger } = this.options;
    // Without a strategy of its own, a learned limit still gets the mechanical cut.
    const strategy = this.options.strategy;
    if (strategy === undefined && this.limit() === undefined) return modelData;
    const sessionId = await this.options.session.getSessionId();
    let { stored, unstored } = await this.split(modelData.input);
    const window = async () => {
      const session = await this.options.service.findById(sessionId);
      const events = [...(await this.storedEvents()), ...unstored.map((item) => this.transient(sessionId, item))];
      return { session, events };
    };
    const overWindow = async () => {
      const limit = this.limit();
      if (limit === undefined) return false;
      const { session, events } = await window();
      return (
        (estimateEventsTokens(events, this.options.estimator) + this.instructionTokens(modelData)) * calibrationRatio(session) >
        limit
      );
    };
    const fires = async () => {
      if (trigger === undefined) return false;
      const { session, events } = await window();
      return session !== null && (await trigger.shouldCompact(CompactionRequest.of(session, events)));
    };
    if (!(await fires()) && !(await overWindow())) return modelData;
    if (strategy !== undefined) {
      const safe = turnSafeStrategy(strategy, new Set(), this.options.logger, this.options.estimator);
      const result = await this.options.service.compact(sessionId, ALWAYS, safe);
      if (result.archivedEvents.length > 0) ({ stored, unstored } = await this.split(modelData.input));
    }
    // Still over the window: this run's own steps, oldest first, stay out of this call (the runner stores
    // them at the end of the run all the same).
    while ((await overWindow()) && this.dropOldestStep(unstored)) {
      /* one step less each time */
    }
    return { ...modelData, input: [...stored, ...unstored] };
  };

  /**
   * After a refusal: stores what the refused run had not (so nothing is lost), calibrates from the refusal and
   * compacts mechanically. Null when `error` is not a context overflow. `input` is the run's input, stored
   * when the runner never reached a model call through `callModelInputFilter`.
   */
  async recoverFromOverflow(error: unknown, input?: string | AgentInputItem[]): Promise<AgentOverflowRecovery | null> {
    const overflow = detectContextOverflow(error, openAIRefusal);
    if (overflow === null) return null;
    const sessionId = await this.options.session.getSessionId();
    const stored = await this.storeUnstored(input);
    const refused = this.lastInput;
    const refusedItems = refused?.input.filter((item) => !isRecallBlock(item)) ?? [];
    const estimated =
      estimateEventsTokens(
        refusedItems.map((item) => this.transient(sessionId, item)),
        this.options.estimator,
      ) + (refused === undefined ? 0 : this.instructionTokens(refused));
    const window = await this.storedEvents();
    // The turn's input: the user messages just stored, and the window's last user message.
    const keep = new Set(
      [...window.slice(window.length - stored), ...window.filter((e) => e.messageType === 'user').slice(-1)]
        .filter((e) => e.messageType === 'user')
        .map((e) => e.id),
    );
    const outcome = await this.recovery.recover({
      sessionId,
      overflow,
      estimatedPromptTokens: estimated > 0 ? estimated : estimateEventsTokens(window, this.options.estimator),
      outsideWindowTokens: refused === undefined ? 0 : this.instructionTokens(refused),
      keep,
    });
    this.learnedLimit = Math.min(this.learnedLimit ?? outcome.limitTokens, outcome.limitTokens);
    return { overflow, stored, archived: outcome.result.archivedEvents.length };
  }

  /**
   * `run(input)`; on a context-overflow refusal, `recoverFromOverflow` and exactly one more `run([])`, which
   * continues from the stored history. A second refusal, or nothing left to archive, is one
   * ContextOverflowError; the turn's input is stored either way.
   */
  async runWithOverflowRecovery<R>(
    run: (input: string | AgentInputItem[]) => Promise<R>,
    input: string | AgentInputItem[],
  ): Promise<R> {
    this.lastInput = undefined;
    this.learnedLimit = undefined;
    try {
      return await run(input);
    } catch (error) {
      const recovered = await this.recoverFromOverflow(error, input);
      if (recovered === null) throw error;
      const sessionId = this.options.session.sessionId;
      if (recovered.archived === 0) {
        throw new ContextOverflowError(sessionId, recovered.overflow, { attempts: 1, archived: 0, cause: error });
      }
      this.lastInput = undefined;
      try {
        return await run([]);
      } catch (second) {
        const again = detectContextOverflow(second, openAIRefusal);
        if (again === null) throw second;
        await this.storeUnstored(undefined);
        throw new ContextOverflowError(sessionId, again, { attempts: 2, archived: recovered.archived, cause: second });
      } finally {
        this.learnedLimit = undefined;
      }
    }
  }

  private limit(): number | undefined {
    const { contextWindowTokens } = this.options;
    if (this.learnedLimit === undefined) return contextWindowTokens;
    return Math.min(contextWindowTokens ?? this.learnedLimit, this.learnedLimit);
  }

  /** The stored history (as getItems gives it now) and the items of `input` that are not stored, in input order. */
  private async split(input: readonly AgentInputItem[]): Promise<{ stored: AgentInputItem[]; unstored: AgentInputItem[] }> {
    const history = await this.options.session.getItems();
    const counts = new Map<string, number>();
    for (const item of history) {
      const key = agentItemKey(item);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const unstored: AgentInputItem[] = [];
    for (const item of input) {
      const key = agentItemKey(item);
      const left = counts.get(key) ?? 0;
      if (left > 0) counts.set(key, left - 1);
      else if (!isRecallBlock(item)) unstored.push(item);
    }
    // A compaction may have replaced stored items (a summary): the history is what getItems gives now.
    return { stored: history, unstored };
  }

  /** Stores the items of the latest model input that are not stored yet (or, without one, `input`). */
  private async storeUnstored(input: string | AgentInputItem[] | undefined): Promise<number> {
    let items: AgentInputItem[];
    if (this.lastInput !== undefined) {
      items = (await this.split(this.lastInput.input)).unstored;
    } else if (input === undefined) {
      items = [];
    } else {
      const given: AgentInputItem[] = typeof input === 'string' ? [{ role: 'user', content: input }] : [...input];
      // Stored already when the stored history ends with it (a streamed run stores its input first).
      const history = await this.options.session.getItems();
      const tail = history.slice(-given.length).map(agentItemKey);
      items = given.length > 0 && tail.join('\n') === given.map(agentItemKey).join('\n') ? [] : given;
    }
    if (items.length > 0) await this.options.session.addItems(items);
    return items.length;
  }

  /**
   * Leaves out the oldest finished step of this run (items after the turn's last user item up to the next
   * step start: a call, its output, the reasoning before it); false when only the latest step is left.
   */
  private dropOldestStep(unstored: AgentInputItem[]): boolean {
    let first = 0;
    for (let i = unstored.length - 1; i >= 0; i--) {
      if ((unstored[i] as Loose).role === 'user') {
        first = i + 1;
        break;
      }
    }
    const starts: number[] = [];
    const open = new Set<string>();
    for (let i = first; i < unstored.length; i++) {
      const item = unstored[i]!;
      const id = callIdOf(item);
      const previous = unstored[i - 1] as Loose | undefined;
      if (open.size === 0 && !isCallResult(item) && i > first && previous?.type !== 'reasoning') starts.push(i);
      if (id !== undefined) {
        if (isCallResult(item)) open.delete(id);
        else open.add(id);
      }
    }
    const cut = starts[0];
    if (cut === undefined) return false;
    unstored.splice(first, cut - first);
    return true;
  }

  private async storedEvents(): Promise<SessionEvent[]> {
    return this.options.service.getEvents(this.options.session.sessionId, EventFilter.active());
  }

  private transient(sessionId: string, item: AgentInputItem): SessionEvent {
    return SessionEvent.create({ sessionId, id: `pending-${randomUUID()}`, message: fromAgentItem(item).message });
  }

  private instructionTokens(data: ModelInputData): number {
    return typeof data.instructions === 'string' && data.instructions !== ''
      ? this.options.estimator.estimate(data.instructions)
      : 0;
  }
}
