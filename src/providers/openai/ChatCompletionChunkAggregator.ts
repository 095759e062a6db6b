import type {
  ChatCompletionChunk,
  ChatCompletionMessage,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A streamed reply folded back into the message a non-streaming call would have returned. */
export interface AggregatedCompletion {
  message: ChatCompletionMessage & { reasoning_content?: string };
  usage: CompletionUsage | null;
  finishReason: string | null;
}

/**
 * Folds streamed chunks (first choice only) into one assistant message: content deltas concatenated,
 * tool-call fragments joined by their index, the usage chunk (sent last with `include_usage`) kept.
 */
export class ChatCompletionChunkAggregator {
  private content = '';
  private sawContent = false;
  private reasoning = '';
  private readonly toolCalls = new Map<number, PartialToolCall>();
  private usage: CompletionUsage | null = null;
  private finishReason: string | null = null;

  add(chunk: ChatCompletionChunk): void {
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0];
    if (choice === undefined) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string') {
      this.content += delta.content;
      this.sawContent = true;
    }
    const reasoning = (delta as { reasoning_content?: unknown }).reasoning_content;
    if (typeof reasoning === 'string') this.reasoning += reasoning;
    for (const fragment of delta.tool_calls ?? []) {
      const call = this.toolCalls.get(fragment.index) ?? { id: '', name: '', arguments: '' };
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name += fragment.function.name;
      if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
      this.toolCalls.set(fragment.index, call);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  result(): AggregatedCompletion {
    const toolCalls: ChatCompletionMessageFunctionToolCall[] = [...this.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    const message: AggregatedCompletion['message'] = {
      role: 'assistant',
      content: this.sawContent && (this.content !== '' || toolCalls.length === 0) ? this.content : null,
      refusal: null,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (this.reasoning !== '') message.reasoning_content = this.reasoning;
    return { message, usage: this.usage, finishReason: this.finishReason };
  }
}
