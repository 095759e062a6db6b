import { AIMessage, HumanMessage, SystemMessage, ToolMessage, trimMessages, type BaseMessage } from '@langchain/core/messages';
import type { Message } from 'session-compaction';
import type { ContenderContext, HistoryItem, PeerRunner, PeerSelection } from '../registry/ContenderRegistry.js';

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { raw: text };
  }
}

/** Our message as LangChain's, with the history index as its id so that the trimmed list maps back. */
export function toLangChainMessage(message: Message, index: number): BaseMessage {
  const id = String(index);
  switch (message.type) {
    case 'user':
      return new HumanMessage({ content: message.text, id });
    case 'system':
      return new SystemMessage({ content: message.text, id });
    case 'assistant':
      return new AIMessage({
        content: message.text ?? '',
        id,
        tool_calls: (message.toolCalls ?? []).map((c) => ({
          id: c.id,
          name: c.name,
          args: parseArgs(c.arguments),
          type: 'tool_call',
        })),
      });
    case 'tool': {
      // Recorded tool events carry one response each; LangChain has one ToolMessage per call.
      const r = message.responses[0]!;
      return new ToolMessage({ content: r.responseData, tool_call_id: r.id, name: r.name, id });
    }
  }
}

/**
 * LangChain.js `trimMessages` (strategy 'last', startOn 'human', system prompt kept) with our token counter:
 * each LangChain message is counted as the event it came from, through the same memoised estimates.
 */
export class LangChainTrimPeer implements PeerRunner {
  private history: readonly HistoryItem[] = [];
  private converted: BaseMessage[] = [];

  constructor(private readonly context: ContenderContext) {}

  prepare(history: readonly HistoryItem[]): void {
    this.history = history;
    this.converted = history.map((h) => toLangChainMessage(h.message, h.index));
  }

  async select(count: number): Promise<PeerSelection> {
    const tokenCounter = (messages: BaseMessage[]): number => {
      let total = 0;
      for (const m of messages) total += this.history[Number(m.id)]!.tokens;
      return total;
    };
    const history = this.converted.slice(0, count);
    const start = performance.now();
    const trimmed = await trimMessages(history, {
      maxTokens: this.context.budgetTokens,
      strategy: 'last',
      startOn: 'human',
      includeSystem: true,
      tokenCounter,
    });
    const libraryMs = performance.now() - start;
    // With includeSystem, when no human message fits after the system prompt, trimMessages (1.4) returns
    // [undefined]: the system prompt is lost too. We count that as an empty context, not a crash.
    const kept = trimmed.filter((m): m is BaseMessage => m !== undefined).map((m) => this.history[Number(m.id)]!);
    return { messages: kept.map((h) => h.message), tokens: kept.reduce((s, h) => s + h.tokens, 0), libraryMs };
  }
}
