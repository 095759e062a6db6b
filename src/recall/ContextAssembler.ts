import { SUMMARY_METADATA } from '../compaction/strategies/summaryEvents.js';
import { IllegalStateError, InvalidArgumentError, requirePositiveInt, requireText } from '../errors.js';
import { instrumentRetriever } from './instrumentRetriever.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { SessionService } from '../service/SessionService.js';
import { formatEvent, formatMessage } from '../session/formatEvent.js';
import { isMessageType, type Message } from '../session/Message.js';
import { Session } from '../session/Session.js';
import { SessionEvent } from '../session/SessionEvent.js';
import { estimateEventTokens } from '../tokens/eventTokens.js';
import {
  countsApartAtLineBreaks,
  defaultTokenCountEstimator,
  startsApartFromLineBreak,
} from '../tokens/TiktokenTokenCountEstimator.js';
import { TextTokenMemo } from '../tokens/TextTokenMemo.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { visibleTo } from './access.js';
import { fitNewest, shortenText, type Costed } from './fitToBudget.js';
import {
  formatRecallTime,
  recallBlockBody,
  recallBlockFrame,
  recallBlockTag,
  recallBlockText,
  recallEntry,
  renderRecallBlock,
  type RecallBlockEntry,
} from './recallBlock.js';
import type { PreparedRetrieval, RetrievedEvent, Retriever } from './Retriever.js';
import { matchingExcerpt, queryTerms } from './matchingExcerpt.js';
import { isSearchable } from './searchTerms.js';
import { requireDate } from '../validation/inputs.js';
import { MAX_NEIGHBOUR_RADIUS } from '../repository/EventNeighbourhoodRepository.js';
import { summarisesRecallable } from './supersededSummaries.js';
import { rankInContext, type LogView } from './contextRanking.js';
import { joinRuns } from './joinRuns.js';
import { lackingNeighbours, logView, type NeighbourView } from './neighbourView.js';
import { queryPeriod } from './queryPeriod.js';
import { namedInQuery } from './queryParticipants.js';

export type RecallPlacement = 'before-last-user' | 'after-system';

/** How much recall a prompt gets, and where it goes. */
export interface RecallSettings {
  /** Upper bound of the recall block in tokens; default none (only `share` bounds it). */
  maxTokens?: number;
  /**
   * Share of the budget left after system messages and reserve set aside for the block; default 0.6. When the
   * window's own messages (summaries excepted) leave more room, the block may take that too; `maxTokens` caps it.
   */
  share?: number;
  /**
   * Events before and after each of the 8 best hits quoted with it, for context; default 2. With 0 only events the
   * retriever returned are quoted (otherwise the event next to two strong hits may rank as one).
   */
  neighbors?: number;
  /**
   * Most hits quoted (each with its neighbours while the best 8 last). Default: one hit per 40 tokens of the
   * block's share, at least 40 and at most 200 (`DEFAULT_RECALL_LIMIT`), so that the budget, not a count, bounds
   * the block, and a small block does not pay for 200 neighbourhood reads.
   */
  limit?: number;
  /**
   * 'before-last-user' (default): right before the latest user message, so system messages and history stay an
   * unchanged prefix from one request to the next (provider prompt caches bill a repeated prefix at a fraction
   * of the price). 'after-system': right after the system messages.
   */
  placement?: RecallPlacement;
}

export interface AssembleRequest {
  sessionId: string;
  /** The whole prompt's budget, in the estimator's tokens. */
  maxTokens: number;
  /** What to recall for; default the text of the last user message (pending, else in the active window). */
  query?: string;
  /** System messages, sent first and never cut; if they alone exceed the budget the call fails. */
  system?: Message[];
  /** Tokens kept free (e.g. for the reply); default 0. */
  reserveTokens?: number;
  /** Recall settings, or false for none; default the defaults of RecallSettings when a retriever is configured. */
  recall?: RecallSettings | false;
  /** Read-side filter of the history (always merged with EventFilter.active()); its branch also scopes recall. */
  filter?: EventFilter;
  /**
   * The active window as already read (it is then not read again, and `filter` is not applied to it). Active
   * events outside it are never quoted.
   */
  activeEvents?: readonly SessionEvent[];
  /**
   * The session as already read (it is then not read again): a caller that has just loaded it — SessionMemory
   * resolves it at the start of every turn — saves the assembler's existence check, one repository call.
   */
  session?: Session;
  /**
   * Messages of this request that are not in the log yet (e.g. the incoming user message, when you assemble
   * before appending it): they come last, count as history, and are dropped only when they alone exceed the budget.
   */
  pending?: readonly Message[];
  /**
   * When the request is made; default now. Relative dates in the query ("what did I say yesterday?", "last
   * week") are read from it. Pass the request's own time when it was written earlier (a replay, an import).
   */
  now?: Date;
}

export interface ContextTokens {
  system: number;
  recall: number;
  /** Active window plus pending messages. */
  history: number;
  total: number;
}

export interface AssembledContext {
  /** System first, then the active window in log order (and pending messages), the recall block where `placement` puts it. */
  messages: Message[];
  /** The events quoted in the recall block, in log order. */
  recalled: SessionEvent[];
  /** The events of the active window that were sent (the oldest may have been dropped to fit). */
  activeEvents: SessionEvent[];
  tokens: ContextTokens;
}

/** An assembled context with its parts kept apart (see ContextAssembler.assembleParts). */
export interface AssembledParts {
  context: AssembledContext;
  /** The active events sent, each with the message sent for it (shortened when it alone exceeded the budget). */
  history: { event: SessionEvent; message: Message }[];
  /** The pending messages as sent. */
  pending: Message[];
  /** The recall block, and its index in history + pending: it goes right before the message at `at`. */
  block: { message: Message; at: number } | null;
}

export interface ContextAssemblerOptions {
  sessionService: SessionService;
  /** Without one, prompts are fitted to the budget but nothing is recalled. */
  retriever?: Retriever;
  /** Default: the shared js-tiktoken estimator (the one triggers and strategies count with). */
  tokenCountEstimator?: TokenCountEstimator;
}

export const DEFAULT_RECALL_SHARE = 0.6;
/**
 * The most hits a block asks for when `limit` is not given. High enough that the budget bounds the block:
 * measured on LoCoMo (events dated), 40 left a 2,400-token block a quarter empty at 8,000 tokens (evidence
 * 88.7 % → 91.6 % with 200; no change on τ-bench or mini-swe-agent).
 */
export const DEFAULT_RECALL_LIMIT = 200;

/**
 * The room the history needs beside the block: the window's own messages. Summaries do not count — the block
 * quotes the archived events they stand for, and they are the window's oldest part, the first to give way —
 * so when the window is small the block may take more than its share (what `share` sets aside is then a
 * floor, not a ceiling). Measured with `additive-summarization` + BM25 against the share alone (2k / 4k / 8k):
 * LoCoMo evidence 84.3 / 90.1 / 93.9 → 84.9 / 90.9 / 94.3 %, τ-bench 46.6 / 84.7 / 99.6 → 48.5 / 88.1 / 99.5 %
 * (retention 97.0 / 99.8 / 100 → 97.1 / 99.8 / 100 %), mini-swe-agent unchanged (its windows fill their room).
 */
function windowNeed(history: readonly Costed<SessionEvent | null>[]): number {
  return history.reduce((sum, c) => sum + (c.item?.isSynthetic() === true ? 0 : c.tokens), 0);
}

/** Entries as the block lists them (a new array). */
function inLogOrder(entries: readonly RecallBlockEntry[]): RecallBlockEntry[] {
  return [...entries].sort((a, b) => a.position - b.position);
}

/** Fewest hits a block is filled from when `limit` is not given. */
const MIN_RECALL_HITS = 40;
/**
 * Tokens of block per hit asked for when `limit` is not given. Against a flat 200 (LoCoMo, τ-bench,
 * mini-swe-agent at 2k/4k/8k): evidence within 0.1 point, and `assemble` at 10k events on SQLite p95 25 → 14 ms.
 */
const TOKENS_PER_HIT = 40;

/**
 * Hits asked for when `limit` is not given: enough to fill the block's token cap, never more than
 * DEFAULT_RECALL_LIMIT — each hit costs a neighbourhood read, so a small block need not pay for 200.
 */
function hitsFor(cap: number): number {
  return Math.min(DEFAULT_RECALL_LIMIT, Math.max(MIN_RECALL_HITS, Math.ceil(cap / TOKENS_PER_HIT)));
}
export const DEFAULT_RECALL_NEIGHBORS = 2;

/** How many of the best hits are quoted with their neighbours (measured on LoCoMo: more neighbours per hit beats more hits only near the top). */
const NEIGHBOURED_HITS = 8;

/**
 * Counts of quoted lines (with their line break) per estimator, kept across requests: the turns of one conversation
 * quote many of the same events, each line tokenised once. Lines of up to LINE_TOKENS_CHARS characters only (a
 * chat turn; a longer one, such as a tool output, is counted once per request), at most LINE_TOKENS_KEPT of them,
 * cleared when full: at most ~8 MB per estimator.
 */
const LINE_TOKENS_KEPT = 4_096;
const LINE_TOKENS_CHARS = 1_000;
const LINE_TOKENS = new TextTokenMemo({ entries: LINE_TOKENS_KEPT, chars: LINE_TOKENS_KEPT * LINE_TOKENS_CHARS });

/** `request`: the counts of this request's longer lines, which are not kept beyond it. */
function lineTokens(estimator: TokenCountEstimator, line: string, request: Map<string, number>): number {
  if (line.length <= LINE_TOKENS_CHARS) {
    return LINE_TOKENS.get(estimator, line) ?? LINE_TOKENS.set(estimator, line, estimator.estimate(`${line}\n`));
  }
  let tokens = request.get(line);
  if (tokens === undefined) request.set(line, (tokens = estimator.estimate(`${line}\n`)));
  return tokens;
}

/**
 * Rounds of filling the block: the first by estimated costs, each further one with the room the rendered block
 * left. Measured on LoCoMo at 4,000 tokens (events dated): one round used ~1,930 of ~2,390 tokens, three use ~2,350.
 */
const FILL_PASSES = 3;

/**
 * The event at log position `i` of a hit's neighbourhood (the hit at `at`) when it is quoted with it: the hit always,
 * a neighbour when not quoted yet and quotable. A view holds each event at its own log position (logView), so `i`
 * is the event's position.
 */
function quotedAt(
  i: number,
  at: number,
  log: ReadonlyMap<number, SessionEvent>,
  chosen: ReadonlySet<string>,
  quotable: (event: SessionEvent) => boolean,
): SessionEvent | null {
  const e = log.get(i);
  return e !== undefined && (i === at || (!chosen.has(e.id) && quotable(e) && isSearchable(e))) ? e : null;
}

/** What filling the block needs besides the ranking (see ContextAssembler.fill). */
interface FillContext {
  log: ReadonlyMap<number, SessionEvent>;
  position: ReadonlyMap<string, number>;
  neighbors: number;
  quotable: (event: SessionEvent) => boolean;
  entry: (event: SessionEvent) => { text: string; cost: number } | null;
}

/** No single quoted event may take more than this share of the block: one huge tool output must not crowd out the rest. */
const MAX_ENTRY_SHARE = 0.25;

interface Settings {
  maxTokens: number;
  share: number;
  neighbors: number;
  /** Undefined: scaled to the block's token cap (hitsFor). */
  limit: number | undefined;
  placement: RecallPlacement;
}

interface RecallBlock {
  message: Message;
  entries: RecallBlockEntry[];
  tokens: number;
}

/**
 * Builds every prompt with one budget anatomy: system messages, a recall block of archived events that match
 * the request, the active window (summaries included) and a reserve:
 *
 *   maxTokens = system + recall (≤ share × rest) + history (newest first) + reserve, never more.
 *
 * The recall block is one message quoting the retrieved events (and `neighbors` around each) in log order
 * with their times and speakers, as data that cannot open or close the block; events already sent in the
 * history are never quoted again. What does not fit is dropped oldest first and one oversized message is
 * shortened with a visible marker, so assembling never fails because of history; only system messages that
 * alone exceed the budget throw IllegalStateError. The block is built per request and never stored.
 */
export class ContextAssembler {
  readonly tokenCountEstimator: TokenCountEstimator;
  private readonly service: SessionService;
  private readonly retriever: Retriever | undefined;

  constructor(options: ContextAssemblerOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.sessionService === null || options.sessionService === undefined) {
      throw new InvalidArgumentError('sessionService must not be null');
    }
    if (options.retriever !== undefined && typeof options.retriever?.retrieve !== 'function') {
      throw new InvalidArgumentError('retriever must have a retrieve method');
    }
    this.service = options.sessionService;
    // Every retrieval is a span (no-op without an OpenTelemetry SDK).
    this.retriever = options.retriever === undefined ? undefined : instrumentRetriever(options.retriever);
    this.tokenCountEstimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
  }

  async assemble(request: AssembleRequest): Promise<AssembledContext> {
    return (await this.assembleParts(request)).context;
  }

  /**
   * `assemble`, with the parts kept apart for integrations that build a provider's own prompt format
   * (SessionMemory): the history as sent (an event whose message was shortened comes with the shortened
   * message), the pending messages as sent, the recall block and where it goes.
   */
  async assembleParts(request: AssembleRequest): Promise<AssembledParts> {
    const r = validate(request);
    const estimator = this.tokenCountEstimator;
    const budget = r.maxTokens - r.reserveTokens;
    const systemTokens = r.system.reduce((sum, m) => sum + estimator.estimate(formatMessage(m)), 0);
    if (systemTokens > budget) {
      throw new IllegalStateError(
        `the system messages need ${systemTokens} tokens, more than the budget of ${budget} (maxTokens - reserveTokens)`,
      );
    }
    // The retriever's first reads (Bm25Retriever: the session and its log state) go out with the window's: one
    // round trip for both on Redis. Wasted only when the request leaves no room for recall.
    const prepared =
      r.activeEvents === undefined && this.retriever !== undefined && r.recall !== null
        ? this.retriever.prepare?.(r.sessionId)
        : undefined;
    const active = await this.sessionAndWindow(r);
    for (const e of active) {
      if (!(e instanceof SessionEvent) || e.sessionId !== r.sessionId) {
        throw new InvalidArgumentError(`activeEvents must be events of session ${r.sessionId}`);
      }
    }
    const rest = budget - systemTokens;
    const history: Costed<SessionEvent | null>[] = active.map((e) => ({
      item: e,
      message: e.message,
      tokens: estimateEventTokens(e, estimator),
    }));
    const pending: Costed<SessionEvent | null>[] = r.pending.map((m) => ({
      item: null,
      message: m,
      tokens: estimator.estimate(formatMessage(m)),
    }));
    const pendingTokens = pending.reduce((sum, c) => sum + c.tokens, 0);

    if (pendingTokens > rest) {
      // This request alone overflows: it keeps what fits of itself, and nothing older is sent or recalled.
      const fitted = fitNewest(pending, rest, estimator).kept;
      return this.result(r, [], fitted, null, systemTokens);
    }

    const settings = this.retriever === undefined ? null : r.recall;
    const query = r.query ?? defaultQuery(r.pending, active);
    const cap =
      settings === null || query.trim() === ''
        ? 0
        : Math.min(
            settings.maxTokens,
            Math.max(Math.floor(settings.share * rest), rest - pendingTokens - windowNeed(history)),
            rest - pendingTokens,
          );
    let block: RecallBlock | null = null;
    if (cap > 0) {
      // Room for the block is set aside first; whatever it leaves unused goes back to the history below.
      const provisional = fitNewest(history, rest - pendingTokens - cap, estimator).kept;
      block = await this.recallBlock(
        r,
        settings!,
        query,
        cap,
        new Set(provisional.map((c) => c.item!.id)),
        new Set(active.map((e) => e.id)),
        prepared,
      );
    }
    const kept = fitNewest(history, rest - pendingTokens - (block?.tokens ?? 0), estimator).kept;
    if (block !== null) block = this.withoutSent(block, new Set(kept.map((c) => c.item!.id)));
    return this.result(r, kept, pending, block, systemTokens);
  }

  /**
   * The active window (as given, else read), and the check that the session exists (unless it was given). A
   * read window that holds an event is that check: events belong to their session, so only an empty window (or
   * a failed read) needs the lookup, and a turn saves a round trip. Issuing the lookup and the read together
   * instead measured slower on PostgreSQL (two server processes at once: p50 5.9–8.0 → 7.7–10.3 ms at 10,000
   * events, 2 cores, load 4–5). A missing session is reported as such whatever the read did.
   */
  private async sessionAndWindow(r: Validated): Promise<readonly SessionEvent[]> {
    if (r.activeEvents !== undefined) {
      if (r.session === undefined) await this.requireSession(r.sessionId);
      return r.activeEvents;
    }
    const read = () => this.service.getEvents(r.sessionId, (r.filter ?? EventFilter.all()).merge(EventFilter.active()));
    if (r.session !== undefined) return read();
    let events: SessionEvent[];
    try {
      events = await read();
    } catch (error) {
      await this.requireSession(r.sessionId);
      throw error;
    }
    if (events.length === 0) await this.requireSession(r.sessionId);
    return events;
  }

  private async requireSession(sessionId: string): Promise<void> {
    if ((await this.service.findById(sessionId)) === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
  }

  private result(
    r: Validated,
    kept: Costed<SessionEvent | null>[],
    pending: Costed<SessionEvent | null>[],
    block: RecallBlock | null,
    systemTokens: number,
  ): AssembledParts {
    const conversation = [...kept, ...pending].map((c) => c.message);
    const historyTokens = [...kept, ...pending].reduce((sum, c) => sum + c.tokens, 0);
    let blockAt = 0;
    if (block !== null && r.recall?.placement !== 'after-system') {
      blockAt = conversation.length;
      for (let i = conversation.length - 1; i >= 0; i--) {
        if (conversation[i]!.type === 'user') {
          blockAt = i;
          break;
        }
      }
    }
    const messages =
      block === null
        ? [...r.system, ...conversation]
        : [...r.system, ...conversation.slice(0, blockAt), block.message, ...conversation.slice(blockAt)];
    const recallTokens = block?.tokens ?? 0;
    return {
      context: {
        messages,
        recalled: block?.entries.map((e) => e.event) ?? [],
        activeEvents: kept.map((c) => c.item!),
        tokens: {
          system: systemTokens,
          recall: recallTokens,
          history: historyTokens,
          total: systemTokens + recallTokens + historyTokens,
        },
      },
      history: kept.map((c) => ({ event: c.item!, message: c.message })),
      pending: pending.map((c) => c.message),
      block: block === null ? null : { message: block.message, at: blockAt },
    };
  }

  /**
   * Ranks with the retriever, then fills `cap` hit by hit (best first), each with its neighbours; the block
   * lists them in log order. Events in `sent` (the history) are never quoted.
   */
  private async recallBlock(
    r: Validated,
    settings: Settings,
    query: string,
    cap: number,
    sent: ReadonlySet<string>,
    window: ReadonlySet<string>,
    prepared: PreparedRetrieval | undefined,
  ): Promise<RecallBlock | null> {
    const branch = r.filter?.branch ?? null;
    const limit = settings.limit ?? hitsFor(cap);
    const request = {
      sessionId: r.sessionId,
      query,
      // Active events may be hits too (the oldest of a long window are not sent); over-ask by what is sent.
      limit: limit + sent.size,
      includeActive: true,
      branch,
      ...(prepared === undefined ? {} : { prepared }),
    };
    // Every hit is read with the neighbours a quote of it carries (`neighbors`, at least the one either side that
    // ranking in context needs); the best of the ranking whose own are not all read (an event next to hits, ranked
    // on their evidence) are read again, one wider than they are quoted, so that where their neighbourhoods meet
    // an earlier run shows (joinRuns). Reading `neighbors + 1` around every hit instead cost 1 ms more per
    // `assemble` at 10,000 events on SQLite and PostgreSQL (docs/recall.md).
    const narrow = settings.neighbors;
    const wide = settings.neighbors > 0 ? settings.neighbors + 1 : 0;
    const positional = this.retriever!.findEventNeighbours !== undefined && wide <= MAX_NEIGHBOUR_RADIUS;
    // Where the store reads the hits' neighbourhoods with the search (PostgreSQL), one round trip does both.
    const fused = this.retriever!.retrieveWithNeighbours;
    const { hits, neighbours } =
      fused !== undefined && positional
        ? await fused.call(this.retriever, request, narrow)
        : { hits: await this.retriever!.retrieve(request), neighbours: null };
    const permitted = recallFilter(r.filter, branch, r.sessionId, sent, window);
    if (!hits.some((h) => permitted(h.event))) return null;
    let view = await this.neighbourhood(r.sessionId, hits, narrow, neighbours, positional);
    const originals = await this.summarisedOriginals(r.sessionId, view, new Map());
    // A summary is not quoted while the events it stands for can be.
    const quotable = (e: SessionEvent) =>
      permitted(e) &&
      !summarisesRecallable(e, (id) => {
        const at = view.position.get(id);
        const original = at !== undefined ? view.log.get(at) : originals.get(id);
        return original !== undefined && permitted(original);
      });
    // With neighbors 0 only what the retriever returned is quoted; otherwise a neighbour of strong hits may rank too.
    const ranked = rankInContext(hits, view, (e) => quotable(e) && isSearchable(e), {
      withNeighbours: settings.neighbors > 0,
      period: queryPeriod(query, r.now ?? new Date()),
      namesParticipant: namedInQuery(query),
    });
    if (positional && settings.neighbors > 0) {
      const short = lackingNeighbours(ranked.slice(0, NEIGHBOURED_HITS), view, hits, narrow, settings.neighbors);
      if (short.length > 0) {
        const more = await this.retriever!.findEventNeighbours!(r.sessionId, short, wide);
        view = logView(joinRuns(view.runs, more));
        await this.summarisedOriginals(r.sessionId, view, originals);
      }
    }
    const estimator = this.tokenCountEstimator;
    const entryCap = Math.max(1, Math.floor(cap * MAX_ENTRY_SHARE));
    const terms = queryTerms(query);
    // Costs come from the memoised event counts plus the time prefix (counted once per distinct time): no
    // tokenising per entry on the hot path; the rendered block is counted at the end (countLines below).
    const prefixTokens = new Map<string, number>();
    const prefixCost = (event: SessionEvent) => {
      const prefix = `[${formatRecallTime(event.timestamp)}] `;
      let tokens = prefixTokens.get(prefix);
      if (tokens === undefined) prefixTokens.set(prefix, (tokens = estimator.estimate(prefix) + 1));
      return tokens;
    };
    // Each fill pass goes down the same ranking again: an event's entry is worked out once per request.
    const entries = new Map<SessionEvent, { text: string; cost: number } | null>();
    const entry = (event: SessionEvent): { text: string; cost: number } | null => {
      let e = entries.get(event);
      if (e === undefined) entries.set(event, (e = entryOf(event)));
      return e;
    };
    const entryOf = (event: SessionEvent): { text: string; cost: number } | null => {
      const cost = estimateEventTokens(event, estimator) + prefixCost(event);
      if (cost <= entryCap) return { text: formatEvent(event), cost };
      // Too long to quote whole: the parts that match the request, else its head and tail.
      const fits = (t: string) => estimator.estimate(recallEntry(event, null, t)) + 1 <= entryCap;
      const text = matchingExcerpt(formatEvent(event), terms, fits) ?? shortenText(formatEvent(event), fits);
      return text === null ? null : { text, cost: estimator.estimate(recallEntry(event, null, text)) + 1 };
    };
    const overhead = estimator.estimate(formatMessage({ type: 'user', text: renderRecallBlock([]) }));
    const fillContext: FillContext = { log: view.log, position: view.position, neighbors: settings.neighbors, quotable, entry };

    const groups: RecallBlockEntry[][] = [];
    const chosen = new Set<string>();
    let used = overhead;
    // The block's size by its lines: each line's count (with its line break, memoised across requests) added to
    // the frame's with this body's tag. Counting the rendered block whole after every pass was a third of
    // `assemble`. The sum is the whole count where the estimator counts apart at line breaks and every line starts
    // apart from one (countsApartAtLineBreaks: the built-in o200k_base and cl100k_base); elsewhere it is an
    // estimate between passes, and the block is counted whole at the end (a fifth of `assemble` in process when it
    // always was).
    const longLines = new Map<string, number>();
    const countLines = (body: readonly string[], tag: string = recallBlockTag(body)) => {
      let tokens = estimator.estimate(formatMessage({ type: 'user', text: recallBlockFrame(tag) }));
      for (const line of body) tokens += lineTokens(estimator, line, longLines);
      return tokens;
    };
    const linesCost = () => countLines(recallBlockBody(inLogOrder(groups.flat())));
    const byLines = countsApartAtLineBreaks(estimator) ? countLines : undefined;
    // Groups are only ever added or popped at the end, so their count tells whether the block last rendered is the
    // current one.
    let last: { groups: number; block: RecallBlock } | null = null;
    const rendered = () => {
      if (last?.groups !== groups.length) last = { groups: groups.length, block: this.render(groups.flat(), byLines) };
      return last.block;
    };
    // Estimated costs count every entry's time, but the block writes a time only where it changes: the rendered
    // block is smaller, and what it leaves goes to further hits (the same ranking, again) until none fits.
    for (let pass = 0; pass < FILL_PASSES; pass++) {
      const before = groups.length;
      this.fill(ranked.slice(0, limit), groups, chosen, used, cap, fillContext);
      if (groups.length === before) break;
      used = linesCost();
    }
    // Entry costs are estimated one by one; the rendered block is counted whole and trimmed from the worst hit.
    while (groups.length > 0) {
      const block = rendered();
      if (block.tokens <= cap) return block;
      groups.pop();
    }
    return null;
  }

  /**
   * Adds hits of `ranked` (best first) to `groups` while their estimated cost fits `cap` from `used`, each of the
   * NEIGHBOURED_HITS best with its neighbours (alone when only it fits).
   */
  private fill(
    ranked: readonly SessionEvent[],
    groups: RecallBlockEntry[][],
    chosen: Set<string>,
    used: number,
    cap: number,
    { log, position, neighbors, quotable, entry }: FillContext,
  ): void {
    // Every pass walks the whole ranking and most hits no longer fit: costs are summed first, and a group is built
    // only for a hit that is taken.
    for (let rank = 0; rank < ranked.length; rank++) {
      const hit = ranked[rank]!;
      const at = position.get(hit.id);
      if (at === undefined || chosen.has(hit.id)) continue;
      const own = entry(hit);
      if (own === null) continue;
      // The best hits come with their neighbours; the rest alone, so the block reaches further down the ranking.
      let n = rank < NEIGHBOURED_HITS ? neighbors : 0;
      let cost = 0;
      for (let i = at - n; i <= at + n; i++) {
        const e = quotedAt(i, at, log, chosen, quotable);
        if (e !== null) cost += entry(e)?.cost ?? 0;
      }
      if (used + cost > cap) {
        // Without its neighbours the hit may still fit.
        if (used + own.cost > cap) continue;
        n = 0;
        cost = own.cost;
      }
      const group: RecallBlockEntry[] = [];
      for (let i = at - n; i <= at + n; i++) {
        const e = quotedAt(i, at, log, chosen, quotable);
        const quote = e === null ? null : entry(e);
        if (quote === null) continue;
        group.push({ event: e!, position: i, text: quote.text });
        chosen.add(e!.id);
      }
      groups.push(group);
      used += cost;
    }
  }

  /**
   * The part of the log the block is built from: the hits and what lies around them — `radius` on each side.
   * As the retriever read it with the search (`read`), else by position through the retriever (`positional`: an
   * index, or the store's push-down), else from the whole log.
   */
  private async neighbourhood(
    sessionId: string,
    hits: readonly RetrievedEvent[],
    radius: number,
    read: SessionEvent[][] | null,
    positional: boolean,
  ): Promise<NeighbourView> {
    if (!positional) return logView([await this.service.getEvents(sessionId, EventFilter.all())]);
    const ids = [...new Set(hits.filter((h) => h.event.sessionId === sessionId).map((h) => h.event.id))];
    const runs = read ?? (await this.retriever!.findEventNeighbours!(sessionId, ids, radius));
    return logView(runs.map((run) => run.filter((e) => e.sessionId === sessionId)));
  }

  /**
   * Adds to `found` the events the summaries in the view stand for that neither the view nor `found` holds,
   * read by id (radius 0) so that deciding whether a summary's originals are quotable never needs the whole log
   * either. Returns `found`.
   */
  private async summarisedOriginals(
    sessionId: string,
    { log, position }: LogView,
    found: Map<string, SessionEvent>,
  ): Promise<Map<string, SessionEvent>> {
    const read = this.retriever?.findEventNeighbours;
    if (read === undefined) return found;
    const wanted = new Set<string>();
    for (const e of log.values()) {
      if (!e.isSynthetic()) continue;
      const ids = e.metadata[SUMMARY_METADATA.eventIds];
      if (!Array.isArray(ids)) continue;
      for (const id of ids) if (typeof id === 'string' && !position.has(id) && !found.has(id)) wanted.add(id);
    }
    if (wanted.size === 0) return found;
    for (const run of await read.call(this.retriever, sessionId, [...wanted], 0))
      for (const e of run) if (e.sessionId === sessionId) found.set(e.id, e);
    return found;
  }

  /** `byLines`: counts the block from its body's lines, exact when every line starts apart from a line break. */
  private render(entries: RecallBlockEntry[], byLines?: (body: readonly string[], tag: string) => number): RecallBlock {
    const ordered = inLogOrder(entries);
    const body = recallBlockBody(ordered);
    // The tag hashes the whole body: computed once for the text and the count.
    const tag = recallBlockTag(body);
    const message: Message = { type: 'user', text: recallBlockText(body, tag) };
    const tokens =
      byLines !== undefined && body.every(startsApartFromLineBreak)
        ? byLines(body, tag)
        : this.tokenCountEstimator.estimate(formatMessage(message));
    return { message, entries: ordered, tokens };
  }

  /** The block without events that the final history sends anyway (it can only get shorter). */
  private withoutSent(block: RecallBlock, sent: ReadonlySet<string>): RecallBlock | null {
    const entries = block.entries.filter((e) => !sent.has(e.event.id));
    if (entries.length === block.entries.length) return block;
    return entries.length === 0 ? null : this.render(entries);
  }
}

interface Validated {
  sessionId: string;
  maxTokens: number;
  query: string | undefined;
  system: Message[];
  reserveTokens: number;
  recall: Settings | null;
  filter: EventFilter | undefined;
  activeEvents: readonly SessionEvent[] | undefined;
  session: Session | undefined;
  pending: Message[];
  now: Date | undefined;
}

function validate(request: AssembleRequest): Validated {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  const sessionId = requireText(request.sessionId, 'sessionId');
  const maxTokens = requirePositiveInt(request.maxTokens, 'maxTokens');
  const reserveTokens = request.reserveTokens ?? 0;
  if (typeof reserveTokens !== 'number' || !Number.isInteger(reserveTokens) || reserveTokens < 0) {
    throw new InvalidArgumentError('reserveTokens must be >= 0');
  }
  if (reserveTokens >= maxTokens) throw new InvalidArgumentError('reserveTokens must be less than maxTokens');
  if (request.query !== undefined && typeof request.query !== 'string') throw new InvalidArgumentError('query must be a string');
  const system = messages(request.system, 'system');
  if (system.some((m) => m.type !== 'system')) throw new InvalidArgumentError('system must hold system messages only');
  if (request.filter !== undefined && !(request.filter instanceof EventFilter)) {
    throw new InvalidArgumentError('filter must be an EventFilter');
  }
  if (request.activeEvents !== undefined && !Array.isArray(request.activeEvents)) {
    throw new InvalidArgumentError('activeEvents must be an array');
  }
  if (request.session !== undefined && !(request.session instanceof Session && request.session.id === sessionId)) {
    throw new InvalidArgumentError(`session must be the Session ${sessionId}`);
  }
  return {
    sessionId,
    maxTokens,
    query: request.query,
    system,
    reserveTokens,
    recall: recallSettings(request.recall),
    filter: request.filter,
    activeEvents: request.activeEvents,
    session: request.session,
    now: request.now === undefined ? undefined : requireDate(request.now, 'now'),
    pending: messages(request.pending, 'pending'),
  };
}

function messages(value: readonly Message[] | undefined, name: string): Message[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InvalidArgumentError(`${name} must be an array of messages`);
  for (const m of value) {
    if (m === null || typeof m !== 'object' || !isMessageType((m as { type?: unknown }).type)) {
      throw new InvalidArgumentError(`${name} must be an array of messages`);
    }
  }
  return [...value];
}

/** Recall settings with defaults applied; null for `recall: false`. */
export function recallSettings(value: RecallSettings | false | undefined): Settings | null {
  if (value === false) return null;
  const v = value ?? {};
  if (typeof v !== 'object') throw new InvalidArgumentError('recall must be an object or false');
  const share = v.share ?? DEFAULT_RECALL_SHARE;
  if (typeof share !== 'number' || !(share > 0 && share <= 1)) throw new InvalidArgumentError('recall.share must be in (0, 1]');
  const neighbors = v.neighbors ?? DEFAULT_RECALL_NEIGHBORS;
  if (typeof neighbors !== 'number' || !Number.isInteger(neighbors) || neighbors < 0) {
    throw new InvalidArgumentError('recall.neighbors must be >= 0');
  }
  const placement = v.placement ?? 'before-last-user';
  if (placement !== 'before-last-user' && placement !== 'after-system') {
    throw new InvalidArgumentError("recall.placement must be 'before-last-user' or 'after-system'");
  }
  return {
    maxTokens: v.maxTokens === undefined ? Number.MAX_SAFE_INTEGER : requirePositiveInt(v.maxTokens, 'recall.maxTokens'),
    share,
    neighbors,
    limit: v.limit === undefined ? undefined : requirePositiveInt(v.limit, 'recall.limit'),
    placement,
  };
}

/** The text of the last user message: pending first, else the active window's latest real user event. */
function defaultQuery(pending: readonly Message[], active: readonly SessionEvent[]): string {
  for (let i = pending.length - 1; i >= 0; i--) {
    const m = pending[i]!;
    if (m.type === 'user') return m.text;
  }
  for (let i = active.length - 1; i >= 0; i--) {
    const e = active[i]!;
    if (e.messageType === 'user' && !e.isSynthetic()) return e.text ?? '';
  }
  return '';
}

/**
 * Which events may be quoted: this session's, visible to the branch, matching the request's filter (its
 * per-event criteria: the archive is what recall is for), not already sent in the history, and either archived
 * or part of the active window this prompt was built from (an event appended after it — the request's own
 * message, a concurrent append — belongs to the next prompt, not to a quote).
 */
function recallFilter(
  filter: EventFilter | undefined,
  branch: string | null,
  sessionId: string,
  sent: ReadonlySet<string>,
  window: ReadonlySet<string>,
): (event: SessionEvent) => boolean {
  const criteria =
    filter === undefined
      ? null
      : EventFilter.of({ ...filter.toOptions(), excludeArchived: false, lastN: undefined, page: undefined, pageSize: undefined });
  const visible = visibleTo(branch);
  return (e) =>
    e.sessionId === sessionId &&
    !sent.has(e.id) &&
    (e.isArchived() || window.has(e.id)) &&
    visible(e) &&
    (criteria === null || criteria.matches(e));
}
