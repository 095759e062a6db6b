import type { BaseMessage } from '@langchain/core/messages';
import {
  toCompactionStrategy,
  type CompactionStrategy,
  type CompactionStrategyLike,
} from '../../compaction/CompactionStrategy.js';
import { toCompactionTrigger, type CompactionTrigger, type CompactionTriggerLike } from '../../compaction/CompactionTrigger.js';
import { CompactionResult } from '../../compaction/CompactionResult.js';
import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { DefaultSessionService } from '../../service/DefaultSessionService.js';
import { accessDenied } from '../../service/sessionAccess.js';
import type { SessionService } from '../../service/SessionService.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { defaultTokenCountEstimator } from '../../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { HistoryRecall, placeRecallBlock } from '../../chat/HistoryRecall.js';
import { resolveSession } from '../../chat/resolveSession.js';
import { withArchivedCalls } from '../../chat/archivedToolCalls.js';
import type { SessionMemoryRecallOptions } from '../../chat/SessionMemoryTypes.js';
import { langchain } from './langchainCore.js';
import { fromLangChainMessage, langChainMessagesOf, toLangChainMessages } from './LangChainMessages.js';

export interface CompactingChatMessageHistoryOptions {
  /** The service to write through; or give `repository` and a DefaultSessionService is made over it. */
  sessionService?: SessionService;
  repository?: SessionRepository;
  sessionId: string;
  /** Owner of the session, from your auth. A session owned by someone else is refused. */
  userId?: string;
  /** Compaction on write: run after every `addMessages`; set both or neither. */
  compactionTrigger?: CompactionTriggerLike;
  compactionStrategy?: CompactionStrategyLike;
  /** What `clear` does: 'archive' (default) archives the active window, 'delete' deletes the session and its log. */
  onClear?: 'archive' | 'delete';
  /** Read-side filter of the history (always merged with EventFilter.active()). */
  eventFilter?: EventFilter;
  /**
   * Recall, with the same options as SessionMemory's: `getMessages` adds one transient HumanMessage quoting
   * the archived events that match the latest human message of the window. RunnableWithMessageHistory reads
   * the history before it stores the new input and stores only the input and the output, so the block is
   * never stored. Without a window (`contextWindowTokens`) the block is bounded by `maxTokens` (default 2,000).
   * Placement as in the Agents session: last (right before the new input) unless the window ends with an
   * unanswered human message; 'after-system' after the leading system messages.
   */
  recall?: SessionMemoryRecallOptions;
  /** With `recall`: the budget of window + block; the window's oldest messages are left out to fit. */
  contextWindowTokens?: number;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

/**
 * A LangChain chat message history (`BaseListChatMessageHistory`, so it works with
 * `RunnableWithMessageHistory`) over this library's event log, on any repository. `getMessages` returns the
 * active window; `addMessages` appends and then compacts with the configured trigger and strategy — which
 * archives, never deletes, unlike `trimMessages`: everything stays readable with `getAllMessages`.
 */
export class CompactingChatMessageHistory extends langchain.chatHistory.BaseListChatMessageHistory {
  lc_namespace = ['session_compaction', 'langchain'];
  static readonly DEFAULT_USER_ID = 'default-user';
  readonly sessionId: string;
  readonly userId: string | undefined;
  readonly service: SessionService;
  private readonly trigger: CompactionTrigger | undefined;
  private readonly strategy: CompactionStrategy | undefined;
  private readonly onClear: 'archive' | 'delete';
  private readonly readFilter: EventFilter;
  private readonly log: Logger;
  private readonly recall: HistoryRecall | null;
  private readonly contextWindowTokens: number | undefined;

  constructor(options: CompactingChatMessageHistoryOptions) {
    super();
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if ((options.sessionService === undefined) === (options.repository === undefined)) {
      throw new InvalidArgumentError('set sessionService or repository, exactly one');
    }
    if ((options.compactionTrigger === undefined) !== (options.compactionStrategy === undefined)) {
      throw new InvalidArgumentError('compactionTrigger and compactionStrategy must be set together — set both or neither');
    }
    const onClear = options.onClear ?? 'archive';
    if (onClear !== 'archive' && onClear !== 'delete') throw new InvalidArgumentError("onClear must be 'archive' or 'delete'");
    this.log = options.logger ?? defaultLogger();
    this.service = options.sessionService ?? new DefaultSessionService(options.repository!, { logger: this.log });
    this.sessionId = requireText(options.sessionId, 'sessionId');
    this.userId = options.userId === undefined ? undefined : requireText(options.userId, 'userId');
    this.trigger = options.compactionTrigger === undefined ? undefined : toCompactionTrigger(options.compactionTrigger);
    this.strategy = options.compactionStrategy === undefined ? undefined : toCompactionStrategy(options.compactionStrategy);
    this.onClear = onClear;
    this.readFilter = (options.eventFilter ?? EventFilter.all()).merge(EventFilter.active());
    this.contextWindowTokens =
      options.contextWindowTokens === undefined
        ? undefined
        : requirePositiveInt(options.contextWindowTokens, 'contextWindowTokens');
    this.recall =
      options.recall === undefined
        ? null
        : new HistoryRecall(this.service, options.recall, options.tokenCountEstimator ?? defaultTokenCountEstimator());
  }

  /**
   * The active window as LangChain messages, as stored — a call still waiting for its result comes back as it
   * is, without a result made up for it (the ToolMessage a tool loop sends next answers it). A result whose
   * call compaction archived (a call the user moved on from, answered late) comes with its call. With
   * `recall`, plus the block.
   */
  async getMessages(): Promise<BaseMessage[]> {
    const events = await withArchivedCalls(this.service, this.sessionId, await this.read(this.readFilter));
    if (this.recall === null || events.length === 0) return toLangChainMessages(events);
    const recalled = await this.recall.recall(this.sessionId, events, this.readFilter, this.contextWindowTokens);
    const messages = toLangChainMessages(recalled.events);
    if (recalled.block === null) return messages;
    const roles: Record<string, string> = { human: 'user', system: 'system' };
    return placeRecallBlock(
      messages,
      new langchain.messages.HumanMessage(recalled.block),
      this.recall.placement,
      (m) => roles[m.getType()],
    );
  }

  /** Every message ever added, archived ones included, in log order. */
  async getAllMessages(): Promise<BaseMessage[]> {
    return (await this.read(EventFilter.all())).flatMap(langChainMessagesOf);
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** Appends the messages in order, then compacts (a failed compaction is logged; the messages are stored). */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (!Array.isArray(messages)) throw new InvalidArgumentError('messages must not be null');
    await resolveSession(this.service, this.sessionId, this.userId, CompactingChatMessageHistory.DEFAULT_USER_ID);
    const names = new Map<string, string>();
    for (const e of await this.service.getEvents(this.sessionId, this.readFilter)) {
      if (e.message.type === 'assistant') for (const c of e.message.toolCalls ?? []) names.set(c.id, c.name);
    }
    for (const message of messages) {
      const { message: log, metadata } = fromLangChainMessage(message, { resolveToolName: (id) => names.get(id) });
      if (log.type === 'assistant') for (const c of log.toolCalls ?? []) names.set(c.id, c.name);
      await this.service.appendMessage(this.sessionId, log, metadata === undefined ? {} : { metadata });
    }
    if (this.trigger !== undefined && this.strategy !== undefined) {
      try {
        await this.service.compact(this.sessionId, this.trigger, this.strategy);
      } catch (error) {
        this.log.error('compaction failed; the history continues uncompacted', {
          sessionId: this.sessionId,
          error: String(error),
        });
      }
    }
  }

  /**
   * With `onClear: 'archive'` (default) the active window is archived: `getMessages` returns nothing,
   * `getAllMessages` still everything. With `onClear: 'delete'` the session and its log are deleted.
   */
  override async clear(): Promise<void> {
    const session = await this.service.findById(this.sessionId);
    if (session === null) return;
    if (this.userId !== undefined && session.userId !== this.userId) throw accessDenied(this.sessionId, this.userId);
    if (this.onClear === 'delete') {
      await this.service.delete(this.sessionId);
      return;
    }
    await this.service.compact(
      this.sessionId,
      () => true,
      async (request) => new CompactionResult([], [...request.events], 0),
    );
  }

  private async read(filter: EventFilter): Promise<SessionEvent[]> {
    const session = await this.service.findById(this.sessionId);
    if (session === null) return [];
    if (this.userId !== undefined && session.userId !== this.userId) throw accessDenied(this.sessionId, this.userId);
    return this.service.getEvents(this.sessionId, filter);
  }
}
