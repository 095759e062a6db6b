import { InvalidArgumentError } from '../errors.js';
import type { EventFilter } from '../filter/EventFilter.js';
import { ContextAssembler, recallSettings, type RecallPlacement, type RecallSettings } from '../recall/ContextAssembler.js';
import type { SessionService } from '../service/SessionService.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { calibrationRatio } from '../tokens/calibration.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { DEFAULT_UNBOUNDED_RECALL_TOKENS } from './recallSupport.js';
import type { SessionMemoryRecallOptions } from './SessionMemoryTypes.js';

/** The window as it can be sent with recall, and the recall block's text (null when nothing matched). */
export interface RecalledHistory {
  events: SessionEvent[];
  block: string | null;
}

/**
 * Recall for the framework histories that hand the framework a list of messages (the Agents SDK session,
 * LangChain's chat history): the framework reads the history before it stores the new input, so the query is
 * the latest user message of the window, and the block is a transient message the framework never stores.
 */
export class HistoryRecall {
  readonly placement: RecallPlacement;
  private readonly assembler: ContextAssembler;
  private readonly settings: RecallSettings;
  private readonly service: SessionService;

  constructor(service: SessionService, options: SessionMemoryRecallOptions, estimator: TokenCountEstimator) {
    if (options === null || typeof options !== 'object') throw new InvalidArgumentError('recall must be an object');
    const { retriever, ...settings } = options;
    if (typeof retriever?.retrieve !== 'function') throw new InvalidArgumentError('recall.retriever must have a retrieve method');
    this.placement = recallSettings(settings)!.placement;
    this.assembler = new ContextAssembler({ sessionService: service, retriever, tokenCountEstimator: estimator });
    this.settings = settings;
    this.service = service;
  }

  /**
   * The active window fitted with the block within `windowTokens` (calibrated like the window guard; the
   * oldest events are dropped to fit), or, without a window, the block bounded by `maxTokens` (default 2,000).
   */
  async recall(
    sessionId: string,
    events: readonly SessionEvent[],
    filter: EventFilter,
    windowTokens?: number,
  ): Promise<RecalledHistory> {
    const session = await this.service.findById(sessionId);
    const ratio = session === null ? 1 : calibrationRatio(session);
    const parts = await this.assembler.assembleParts({
      sessionId,
      maxTokens: windowTokens === undefined ? Number.MAX_SAFE_INTEGER : Math.max(1, Math.floor(windowTokens / ratio)),
      activeEvents: events,
      filter,
      recall: {
        ...this.settings,
        maxTokens: this.settings.maxTokens ?? (windowTokens === undefined ? DEFAULT_UNBOUNDED_RECALL_TOKENS : undefined),
      },
    });
    const message = parts.block?.message;
    return { events: parts.history.map((h) => h.event), block: message?.type === 'user' ? message.text : null };
  }
}

/**
 * Where the block goes among a framework's messages: 'after-system' after the leading system messages;
 * otherwise last — right before the input the framework appends, so the stored history before it stays an
 * unchanged prefix — unless the last message is a user message with nothing after it yet, then right before it.
 */
export function placeRecallBlock<T>(
  items: readonly T[],
  block: T,
  placement: RecallPlacement,
  role: (item: T) => string | undefined,
): T[] {
  let at = items.length;
  if (placement === 'after-system') {
    at = 0;
    while (at < items.length && role(items[at]!) === 'system') at++;
  } else if (items.length > 0 && role(items[items.length - 1]!) === 'user') {
    at = items.length - 1;
  }
  return [...items.slice(0, at), block, ...items.slice(at)];
}
