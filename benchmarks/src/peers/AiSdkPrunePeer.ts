import { pruneMessages, type ModelMessage } from 'ai';
import { Messages, type Message, type ToolCall } from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import type { ContenderContext, HistoryItem, PeerRunner, PeerSelection } from '../registry/ContenderRegistry.js';

type PruneOptions = Omit<Parameters<typeof pruneMessages>[0], 'messages'>;

/** The AI SDK documentation's own example setting. */
export const DEFAULT_PRUNE_OPTIONS: PruneOptions = {
  reasoning: 'before-last-message',
  toolCalls: 'before-last-2-messages',
  emptyMessages: 'remove',
};

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function toModelMessage(message: Message): ModelMessage {
  switch (message.type) {
    case 'user':
      return { role: 'user', content: message.text };
    case 'system':
      return { role: 'system', content: message.text };
    case 'assistant': {
      const parts: Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string> = [];
      if (message.text !== null && message.text !== '') parts.push({ type: 'text', text: message.text });
      for (const c of message.toolCalls ?? [])
        parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: parseInput(c.arguments) });
      return { role: 'assistant', content: parts };
    }
    case 'tool':
      return {
        role: 'tool',
        content: message.responses.map((r) => ({
          type: 'tool-result' as const,
          toolCallId: r.id,
          toolName: r.name,
          output: { type: 'text' as const, value: r.responseData },
        })),
      };
  }
}

export function fromModelMessage(message: ModelMessage): Message {
  if (message.role === 'system') return Messages.system(message.content);
  if (message.role === 'user') {
    const content = message.content;
    return Messages.user(typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join(''));
  }
  if (message.role === 'assistant') {
    if (typeof message.content === 'string') return Messages.assistant(message.content);
    let text = '';
    const calls: ToolCall[] = [];
    for (const p of message.content) {
      if (p.type === 'text') text += p.text;
      else if (p.type === 'tool-call')
        calls.push(Messages.toolCall(p.toolCallId, p.toolName, typeof p.input === 'string' ? p.input : JSON.stringify(p.input)));
    }
    return Messages.assistant(text === '' && calls.length > 0 ? null : text, { toolCalls: calls });
  }
  return Messages.tool(
    message.content.flatMap((p) =>
      p.type === 'tool-result'
        ? [Messages.toolResponse(p.toolCallId, p.toolName, p.output.type === 'text' ? p.output.value : JSON.stringify(p.output))]
        : [],
    ),
  );
}

/**
 * Vercel AI SDK `pruneMessages`: it takes no token budget — it strips tool calls/results and reasoning
 * before the last messages — so it applies only to sessions with tool calls, and its "budget" is whatever
 * remains. Pruned messages are re-rendered and counted with the shared estimator.
 */
export class AiSdkPrunePeer implements PeerRunner {
  private converted: ModelMessage[] = [];
  private readonly tokensByText = new Map<string, number>();

  constructor(
    private readonly context: ContenderContext,
    private readonly options: PruneOptions = DEFAULT_PRUNE_OPTIONS,
  ) {}

  prepare(history: readonly HistoryItem[]): void {
    this.converted = history.map((h) => toModelMessage(h.message));
    this.tokensByText.clear();
  }

  async select(count: number): Promise<PeerSelection> {
    const history = this.converted.slice(0, count);
    const start = performance.now();
    const pruned = pruneMessages({ messages: history, ...this.options });
    const libraryMs = performance.now() - start;
    const messages = pruned.map(fromModelMessage);
    let tokens = 0;
    for (const m of messages) {
      const text = formatMessage(m);
      let t = this.tokensByText.get(text);
      if (t === undefined) {
        t = this.context.estimator.estimate(text);
        this.tokensByText.set(text, t);
      }
      tokens += t;
    }
    return { messages, tokens, libraryMs };
  }
}
