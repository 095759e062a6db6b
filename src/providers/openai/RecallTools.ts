import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import { InvalidArgumentError } from '../../errors.js';
import type { SessionService } from '../../service/SessionService.js';
import { ConversationSearchTool } from './ConversationSearchTool.js';
import { CrossSessionSearchTool } from './CrossSessionSearchTool.js';
import type { RecallToolContext } from '../../chat/recallSupport.js';

export interface RecallToolsOptions {
  sessionService: SessionService;
  /** Results per page of both tools; default 10. */
  pageSize?: number;
}

/**
 * Both recall tools behind one dispatcher: pass `definitions` as the request's `tools`, and hand each tool call
 * the model makes to `execute` with the trusted server-side context. Bad arguments from the model (too many
 * terms, an unparsable `since`, no usable terms) come back as the tool's text ("Error: …") so the model can
 * correct itself; an access violation is thrown, never shown to the model.
 */
export class RecallTools {
  readonly conversationSearch: ConversationSearchTool;
  readonly crossSessionSearch: CrossSessionSearchTool;

  constructor(options: RecallToolsOptions) {
    this.conversationSearch = new ConversationSearchTool(options);
    this.crossSessionSearch = new CrossSessionSearchTool(options);
  }

  get definitions(): ChatCompletionFunctionTool[] {
    return [this.conversationSearch.definition, this.crossSessionSearch.definition];
  }

  handles(toolCall: ChatCompletionMessageToolCall): boolean {
    return (
      toolCall.type === 'function' &&
      (toolCall.function.name === ConversationSearchTool.NAME || toolCall.function.name === CrossSessionSearchTool.NAME)
    );
  }

  async execute(toolCall: ChatCompletionMessageToolCall, context: RecallToolContext): Promise<ChatCompletionToolMessageParam> {
    if (!this.handles(toolCall) || toolCall.type !== 'function') {
      throw new InvalidArgumentError(
        `not a recall tool call: ${toolCall.type === 'function' ? toolCall.function.name : toolCall.type}`,
      );
    }
    const tool = toolCall.function.name === ConversationSearchTool.NAME ? this.conversationSearch : this.crossSessionSearch;
    let content: string;
    try {
      content = await tool.execute(toolCall.function.arguments, context);
    } catch (error) {
      if (!(error instanceof InvalidArgumentError)) throw error;
      content = `Error: ${error.message}`;
    }
    return { role: 'tool', tool_call_id: toolCall.id, content };
  }
}
