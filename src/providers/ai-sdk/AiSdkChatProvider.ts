import type { LanguageModelUsage, ModelMessage } from 'ai';
import { IllegalStateError } from '../../errors.js';
import type { Message } from '../../session/Message.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import type {
  ChatProvider,
  ChatProviderCall,
  ChatProviderOutcome,
  ChatProviderTypes,
  PersistableMessage,
} from '../../chat/ChatProvider.js';
import {
  fromModelMessage,
  pairToolResults,
  toModelMessages,
  type ModelPrompt,
  type PairToolResultsOptions,
} from './AiSdkMessages.js';

/** What SessionMemory needs of a `generateText` / `streamText` result, once the run has finished. */
export interface AiSdkRunResult {
  /** Every message the run generated, over all its steps (AI SDK 7's `responseMessages`). */
  responseMessages: ModelMessage[];
  steps?: ReadonlyArray<{ usage?: Partial<Pick<LanguageModelUsage, 'inputTokens'>> }>;
  finishReason?: string;
}

/** The AI SDK call of one turn: the application's own `generateText` / `streamText` call over the prompt. */
export interface AiSdkRunParams {
  run: (prompt: ModelPrompt) => PromiseLike<AiSdkRunResult>;
}

export interface AiSdkChatTypes extends ChatProviderTypes {
  message: ModelMessage;
  params: AiSdkRunParams;
  prompt: ModelPrompt;
  reply: AiSdkRunResult;
  usage: Partial<Pick<LanguageModelUsage, 'inputTokens'>>;
  chunk: never;
  completion: AiSdkRunResult;
}

/**
 * The AI SDK behind SessionMemory: the prompt is `{ instructions, messages }` for `generateText` /
 * `streamText`, and the "model call" is the application's own call, whose `responseMessages` (every step of
 * a multi-step run: assistant messages, tool calls, tool results) are what gets appended.
 */
export class AiSdkChatProvider implements ChatProvider<AiSdkChatTypes> {
  declare readonly types?: AiSdkChatTypes;

  constructor(private readonly options: PairToolResultsOptions = {}) {}

  /**
   * The history and this turn's messages as one prompt, paired once over the whole of it: the results a turn
   * sends (a client-side tool's, an approval's) answer the calls at the end of the history.
   */
  prompt(history: readonly SessionEvent[], messages: readonly ModelMessage[]): ModelPrompt {
    const fromLog = toModelMessages(history);
    const instructions = [...(fromLog.instructions ?? []), ...messages.filter((m) => m.role === 'system')];
    const rest = pairToolResults([...fromLog.messages, ...messages.filter((m) => m.role !== 'system')], this.options);
    return instructions.length === 0 ? { messages: rest } : { instructions, messages: rest };
  }

  requestMessages(messages: readonly ModelMessage[]): Message[] {
    return messages.map((m) => fromModelMessage(m).message);
  }

  incoming(messages: readonly ModelMessage[]): PersistableMessage[] {
    // The trailing user and tool messages are this turn's new conversation.
    let first = messages.length;
    while (first > 0 && (messages[first - 1]!.role === 'user' || messages[first - 1]!.role === 'tool')) first--;
    return messages.slice(first).map(fromModelMessage);
  }

  async call(call: ChatProviderCall<AiSdkChatTypes>): Promise<ChatProviderOutcome<AiSdkChatTypes>> {
    const result = await call.params.run(call.prompt);
    const usage = result.steps?.[0]?.usage ?? null;
    return {
      reply: result,
      persist: result.responseMessages.map(fromModelMessage),
      usage,
      promptTokens: usage?.inputTokens ?? undefined,
      finishReason: result.finishReason ?? null,
      completion: result,
    };
  }

  stream(): Promise<ChatProviderOutcome<AiSdkChatTypes>> {
    return Promise.reject(new IllegalStateError('AI SDK turns stream through streamText; use AiSdkSessionMemory.streamText'));
  }
}
