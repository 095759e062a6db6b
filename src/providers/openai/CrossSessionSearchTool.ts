import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { InvalidArgumentError } from '../../errors.js';
import { EventFilter, type EventFilterOptions } from '../../filter/EventFilter.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type { SessionService } from '../../service/SessionService.js';
import { hasText, visibleTo } from '../../recall/access.js';
import {
  NO_RESULTS,
  optionalString,
  pageArgument,
  pageSlice,
  parseArguments,
  requireContext,
  recallToolSettings,
  INNER_THOUGHT_PARAMETER,
  PAGE_PARAMETER,
  type RecallToolContext,
} from '../../chat/recallSupport.js';

export interface CrossSessionSearchToolOptions {
  sessionService: SessionService;
  /** Results per page; default 10. */
  pageSize?: number;
}

/** ISO-8601 instant with a zone (`Z` or `±hh:mm`), as Java's Instant.parse-compatible inputs. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * `cross_session_search`: searches every session of the calling user (archived events and summaries included)
 * for comma-separated terms (any/all), optionally since an instant, sorted by time and paginated. Output:
 * `"No results found."` or a JSON array of `{sessionId, timestamp, type, text}`. The user comes from the
 * server-side context, so the model can never reach another user's sessions.
 */
export class CrossSessionSearchTool {
  static readonly NAME = 'cross_session_search';
  static readonly MAX_QUERY_TERMS = 20;

  readonly pageSize: number;
  readonly definition: ChatCompletionFunctionTool = {
    type: 'function',
    function: {
      name: CrossSessionSearchTool.NAME,
      description:
        "Search all of the user's past conversations. Returns a JSON array of {sessionId, timestamp, type, text} " +
        'sorted by time, or "No results found.".',
      parameters: {
        type: 'object',
        properties: {
          innerThought: INNER_THOUGHT_PARAMETER,
          query: {
            type: 'string',
            description: `Comma-separated search terms (at most ${CrossSessionSearchTool.MAX_QUERY_TERMS}), case-insensitive; empty returns everything.`,
          },
          matchMode: { type: 'string', enum: ['any', 'all'], description: "'any' (default) or 'all' of the terms must occur." },
          since: {
            type: 'string',
            description: 'Optional ISO-8601 instant, e.g. 2025-01-31T10:00:00Z: only messages at or after it.',
          },
          page: PAGE_PARAMETER,
        },
        required: ['innerThought', 'query'],
        additionalProperties: false,
      },
    },
  };
  private readonly service: SessionService;

  constructor(options: CrossSessionSearchToolOptions) {
    ({ service: this.service, pageSize: this.pageSize } = recallToolSettings(options));
  }

  async execute(args: unknown, context: RecallToolContext): Promise<string> {
    const { userId, branch } = requireContext(context);
    const a = parseArguments(args);
    const filter = EventFilter.of({
      ...termsFilter(optionalString(a.query), optionalString(a.matchMode)),
      ...sinceFilter(a.since),
      ...(branch !== null ? { branch } : {}),
    });
    const visible = visibleTo(branch);
    const hits: SessionEvent[] = [];
    for (const session of await this.service.findByUserId(userId)) {
      for (const e of await this.service.getEvents(session.id, filter)) if (visible(e) && hasText(e)) hits.push(e);
    }
    // Array.prototype.sort is stable: equal timestamps keep session, then log, order.
    hits.sort((x, y) => x.timestamp.getTime() - y.timestamp.getTime());
    const page = pageSlice(hits, pageArgument(a.page), this.pageSize);
    if (page.length === 0) return NO_RESULTS;
    return JSON.stringify(
      page.map((e) => ({ sessionId: e.sessionId, timestamp: e.timestamp.toISOString(), type: e.messageType, text: e.text })),
    );
  }
}

function termsFilter(query: string | undefined, matchMode: string | undefined): EventFilterOptions {
  if (query === undefined || query.trim() === '') return {};
  const terms = query
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (terms.length === 0) {
    throw new InvalidArgumentError(`query '${query}' contained no usable search terms after splitting on ','`);
  }
  if (terms.length > CrossSessionSearchTool.MAX_QUERY_TERMS) {
    throw new InvalidArgumentError(
      `query contained ${terms.length} search terms; at most ${CrossSessionSearchTool.MAX_QUERY_TERMS} are allowed`,
    );
  }
  if (terms.length === 1) return { keyword: terms[0]! };
  return { keywords: terms, matchMode: matchMode?.toLowerCase() === 'all' ? 'all' : 'any' };
}

function sinceFilter(since: unknown): EventFilterOptions {
  if (since === undefined || since === null || (typeof since === 'string' && since.trim() === '')) return {};
  const text = String(since).trim();
  const time = INSTANT.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new InvalidArgumentError(`since '${String(since)}' is not an ISO-8601 instant (e.g. 2025-01-31T10:00:00Z)`);
  }
  return { from: new Date(time) };
}
