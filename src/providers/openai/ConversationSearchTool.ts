import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { EventFilter } from '../../filter/EventFilter.js';
import type { SessionService } from '../../service/SessionService.js';
import { hasText, ownSession, visibleTo } from '../../recall/access.js';
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

export interface ConversationSearchToolOptions {
  sessionService: SessionService;
  /** Results per page; default 10. */
  pageSize?: number;
}

/**
 * `conversation_search`: keyword search over the caller's whole conversation — archived events and summaries
 * included, so facts compacted out of the context window stay reachable. Output: `"No results found."` or a
 * JSON array of `{timestamp, type, text}`. Scoped to the caller's session, user and branch (context).
 */
export class ConversationSearchTool {
  static readonly NAME = 'conversation_search';

  readonly pageSize: number;
  readonly definition: ChatCompletionFunctionTool = {
    type: 'function',
    function: {
      name: ConversationSearchTool.NAME,
      description:
        'Search the full history of this conversation, including older messages no longer in your context, ' +
        'for a keyword (case-insensitive). Returns a JSON array of {timestamp, type, text} or "No results found.".',
      parameters: {
        type: 'object',
        properties: {
          innerThought: INNER_THOUGHT_PARAMETER,
          query: { type: 'string', description: 'Keyword to search for (case-insensitive substring match).' },
          page: PAGE_PARAMETER,
        },
        required: ['innerThought', 'query'],
        additionalProperties: false,
      },
    },
  };
  private readonly service: SessionService;

  constructor(options: ConversationSearchToolOptions) {
    ({ service: this.service, pageSize: this.pageSize } = recallToolSettings(options));
  }

  /** `args` as the model sent them (JSON text or parsed); `context` from the server, never from the model. */
  async execute(args: unknown, context: RecallToolContext): Promise<string> {
    const { sessionId, userId, branch } = requireContext(context);
    const a = parseArguments(args);
    const query = optionalString(a.query) ?? '';
    const page = pageArgument(a.page);
    if ((await ownSession(this.service, sessionId, userId)) === null) return NO_RESULTS;
    const matches = (
      await this.service.getEvents(sessionId, EventFilter.of({ keyword: query, ...(branch !== null ? { branch } : {}) }))
    ).filter(visibleTo(branch));
    // Blank texts are dropped after paging, as in the Java tool: a page can come back short.
    const hits = pageSlice(matches, page, this.pageSize).filter(hasText);
    if (hits.length === 0) return NO_RESULTS;
    return JSON.stringify(hits.map((e) => ({ timestamp: e.timestamp.toISOString(), type: e.messageType, text: e.text })));
  }
}
