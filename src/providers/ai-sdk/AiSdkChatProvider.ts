import type { LanguageModelUsage, ModelMessage, SystemModelMessage } from 'ai';
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
import type { ProviderRefusal } from '../../chat/contextOverflow.js';
import { aiSdkRefusal } from './aiSdkRefusal.js';

/** What SessionMemory needs of a `generateText` / `streamText` result, once the run has finished. */
export interface AiSdkRunResult {
  /** Every message the run generated, over all its steps (AI SDK 7's `responseMessages`). */
  responseMessages: ModelMessage[];
  steps?: ReadonlyArray<{ usage?: Partial<Pick<LanguageModelUsage, 'inputTokens'>> }>;
  finishReason?: string;
}

/** What `prepareStep` is given by the SDK, as far as the memory reads it. */
export interface AiSdkStepInput {
  /** Every message the run's finished steps generated so far. */
  responseMessages: readonly ModelMessage[];
}

/** What the memory's `prepareStep` may return: the step's messages (and instructions) after a compaction. */
export interface AiSdkStepOverride {
  messages?: ModelMessage[];
  instructions?: SystemModelMessage[];
}

/**
 * The prompt handed to the application's `generateText` / `streamText` call: `{ instructions, messages }` and
 * `prepareStep`, which stores each finished step and asks the compaction trigger before the next model call.
 * Spread it into the call (`generateText({ model, tools, ...prompt })`); an application with a `prepareStep` of
 * its own calls this one first and keeps its `messages` unless it means to replace them.
 */
export interface AiSdkRunPrompt extends ModelPrompt {
  prepareStep?: (step: AiSdkStepInput) => Promise<AiSdkStepOverride>;
}

/** The AI SDK call of one turn: the application's own `generateText` / `streamText` call over the prompt. */
export interface AiSdkRunParams {
  run: (prompt: AiSdkRunPrompt) => PromiseLike<AiSdkRunResult>;
  /** The run's output goes to the application as it comes (`streamText`): it cannot be sent again. */
  streamed?: boolean;
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
    const steps = call.steps;
    // A run sent again (after an overflow) continues from the steps already stored and still in the window.
    const resumed = (steps?.stored ?? []).filter((s) => s.active).map((s) => s.original as ModelMessage);
    const prompt: ModelPrompt =
      resumed.length === 0 ? call.prompt : { ...call.prompt, messages: [...call.prompt.messages, ...resumed] };
    // Response messages of this run already handed to the step check (and so stored).
    let handed = 0;
    const prepareStep =
      steps === undefined
        ? undefined
        : async ({ responseMessages }: AiSdkStepInput): Promise<AiSdkStepOverride> => {
            const finished = responseMessages.slice(handed);
            handed = responseMessages.length;
            if (finished.length === 0) return {};
            const window = await steps.beforeStep(finished.map((m) => ({ persist: fromModelMessage(m), original: m })));
            if (window === null) return {};
            const active = window.steps.filter((s) => s.active).map((s) => s.original as ModelMessage);
            return {
              messages: [...window.prompt.messages, ...active],
              ...(window.prompt.instructions !== undefined ? { instructions: window.prompt.instructions } : {}),
            };
          };
    const result = await call.params.run(prepareStep === undefined ? prompt : { ...prompt, prepareStep });
    const usage = result.steps?.[0]?.usage ?? null;
    return {
      reply: result,
      persist: result.responseMessages.slice(handed).map(fromModelMessage),
      usage,
      promptTokens: usage?.inputTokens ?? undefined,
      finishReason: result.finishReason ?? null,
      completion: result,
    };
  }

  refusalOf(error: unknown): ProviderRefusal | null {
    return aiSdkRefusal(error);
  }

  retryable(params: AiSdkRunParams): boolean {
    return params.streamed !== true;
  }

  stream(): Promise<ChatProviderOutcome<AiSdkChatTypes>> {
    return Promise.reject(new IllegalStateError('AI SDK turns stream through streamText; use AiSdkSessionMemory.streamText'));
  }
}
