import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { IllegalStateError, InvalidArgumentError } from '../../errors.js';
import { Messages, type Message } from '../../session/Message.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { fromOpenAIMessage, toOpenAIMessagesWithSources, validateOpenAIMessage } from './OpenAIMessages.js';
import { incompleteReplyMetadata } from '../../session/incompleteReplies.js';
import { pairOpenAIToolMessages, toolPairingWarning } from './openAIToolPairing.js';
import { InterruptedReplyError } from '../../chat/InterruptedReplyError.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { ChatCompletionChunkAggregator } from './ChatCompletionChunkAggregator.js';
import type {
  ChatProvider,
  ChatProviderCall,
  ChatProviderOutcome,
  ChatProviderTypes,
  PersistableMessage,
} from '../../chat/ChatProvider.js';
import { messagesToPersist, toolNameResolver } from './requestMessages.js';
import type { ProviderTokenUsage } from '../../chat/SessionUsageRecorder.js';

/** Chat parameters a request may add (tools, temperature...): everything but what SessionMemory sets itself. */
export type OpenAIChatParams = Omit<ChatCompletionCreateParamsNonStreaming, 'messages' | 'model' | 'stream' | 'stream_options'>;

/** The OpenAI Chat Completions API, as SessionMemory sees it. */
export interface OpenAIChatTypes extends ChatProviderTypes {
  message: ChatCompletionMessageParam;
  params: OpenAIChatParams;
  prompt: ChatCompletionMessageParam[];
  reply: ChatCompletionMessage;
  usage: CompletionUsage;
  chunk: ChatCompletionChunk;
  completion: ChatCompletion;
}

export interface OpenAIChatProviderOptions {
  /** Ask streaming endpoints for a final usage chunk (`stream_options.include_usage`); default true. */
  streamUsage?: boolean;
  /** Where prompt repairs (unpaired tool messages) are logged; default the library's logger. */
  logger?: Logger;
}

/** Any OpenAI-compatible Chat Completions endpoint through the `openai` SDK client (its `baseURL`). */
export class OpenAIChatProvider implements ChatProvider<OpenAIChatTypes> {
  declare readonly types?: OpenAIChatTypes;
  private readonly streamUsage: boolean;
  private readonly logger: Logger;

  constructor(
    private readonly client: OpenAI,
    options: OpenAIChatProviderOptions = {},
  ) {
    if (client === null || client === undefined) throw new InvalidArgumentError('client must not be null');
    this.streamUsage = options.streamUsage ?? true;
    this.logger = options.logger ?? defaultLogger();
  }

  /**
   * System messages first, then the history and the request's messages, with tool pairing repaired over the
   * whole list (the request usually answers the history's last tool calls), each repair logged at warn.
   */
  prompt(history: readonly SessionEvent[], messages: readonly ChatCompletionMessageParam[]): ChatCompletionMessageParam[] {
    const past = toOpenAIMessagesWithSources(history);
    const all = [
      ...past.messages.map((m, i) => ({ m, source: past.sources[i] })),
      ...messages.map((m) => ({ m, source: undefined })),
    ];
    const isSystem = (x: { m: ChatCompletionMessageParam }) => x.m.role === 'system' || x.m.role === 'developer';
    const ordered = [...all.filter(isSystem), ...all.filter((x) => !isSystem(x))];
    return pairOpenAIToolMessages(
      ordered.map((x) => x.m),
      { sources: ordered.map((x) => x.source), onRepair: (r) => this.logger.warn(...toolPairingWarning(r)) },
    );
  }

  requestMessages(messages: readonly ChatCompletionMessageParam[]): Message[] {
    return messages.map((m) => {
      try {
        return fromOpenAIMessage(m);
      } catch {
        // A role this library does not model still takes room in the prompt.
        return Messages.system(JSON.stringify(m));
      }
    });
  }

  /** Refuses a malformed request message (a JSON body relayed by a server) before anything is written or sent. */
  validate(messages: readonly ChatCompletionMessageParam[]): void {
    messages.forEach((m, i) => validateOpenAIMessage(m, `messages[${i}]`));
  }

  incoming(messages: readonly ChatCompletionMessageParam[], history: readonly SessionEvent[]): PersistableMessage[] {
    return messagesToPersist(messages, toolNameResolver(history, messages)).map((message) => ({ message }));
  }

  async call(call: ChatProviderCall<OpenAIChatTypes>): Promise<ChatProviderOutcome<OpenAIChatTypes>> {
    const completion = await this.client.chat.completions.create(
      { ...call.params, model: call.model, messages: call.prompt, stream: false },
      requestOptions(call),
    );
    const choice = completion.choices[0];
    if (choice === undefined) throw new IllegalStateError('the model returned no choices');
    return outcome(choice.message, completion.usage ?? null, choice.finish_reason ?? null, completion);
  }

  async stream(
    call: ChatProviderCall<OpenAIChatTypes>,
    onChunk: (chunk: ChatCompletionChunk) => void,
  ): Promise<ChatProviderOutcome<OpenAIChatTypes>> {
    const aggregator = new ChatCompletionChunkAggregator();
    try {
      const stream = await this.client.chat.completions.create(
        {
          ...call.params,
          model: call.model,
          messages: call.prompt,
          stream: true,
          ...(this.streamUsage ? { stream_options: { include_usage: true } } : {}),
        },
        requestOptions(call),
      );
      for await (const chunk of stream) {
        aggregator.add(chunk);
        onChunk(chunk);
      }
    } catch (error) {
      const reason = call.signal?.aborted === true || isTimeout(error) ? 'aborted' : 'error';
      throw new InterruptedReplyError(reason, partialReply(aggregator, reason), error);
    }
    // The SDK ends the iteration quietly when the signal aborts it: what came is a fragment, not a reply.
    if (call.signal?.aborted === true) {
      throw new InterruptedReplyError('aborted', partialReply(aggregator, 'aborted'), call.signal.reason);
    }
    const { message, usage, finishReason } = aggregator.result();
    return outcome(message, usage, finishReason);
  }
}

/** The caller's signal and the configured timeout on every request, even on a client the caller built. */
function requestOptions(call: ChatProviderCall<OpenAIChatTypes>): { signal?: AbortSignal; timeout?: number } {
  return {
    ...(call.signal === undefined ? {} : { signal: call.signal }),
    ...(call.timeoutMs === undefined ? {} : { timeout: call.timeoutMs }),
  };
}

/**
 * The text received before a stream stopped. Tool calls are left out: their arguments may be cut mid-JSON
 * and no result will ever answer them.
 */
function partialReply(aggregator: ChatCompletionChunkAggregator, reason: string): PersistableMessage | null {
  const { message } = aggregator.result();
  if (typeof message.content !== 'string' || message.content === '') return null;
  return { message: Messages.assistant(message.content), metadata: incompleteReplyMetadata(reason) };
}

const isTimeout = (error: unknown) => error instanceof Error && error.name === 'APIConnectionTimeoutError';

/** Finish reasons of a reply that ended as the model meant it to. */
const COMPLETE = new Set(['stop', 'tool_calls', 'function_call']);

function outcome(
  message: ChatCompletionMessage,
  usage: CompletionUsage | null,
  finishReason: string | null,
  completion?: ChatCompletion,
): ChatProviderOutcome<OpenAIChatTypes> {
  // 'length' or 'content_filter': the API cut the reply short; it is stored marked incomplete.
  const incomplete = finishReason !== null && !COMPLETE.has(finishReason);
  return {
    reply: message,
    persist: { message: fromOpenAIMessage(message), ...(incomplete ? { metadata: incompleteReplyMetadata(finishReason) } : {}) },
    usage,
    promptTokens: usage?.prompt_tokens,
    ...(usage !== null ? { tokens: openAITokenUsage(usage) } : {}),
    finishReason,
    ...(completion !== undefined ? { completion } : {}),
  };
}

/**
 * `prompt_tokens_details.cached_tokens` is OpenAI's cache read. OpenAI bills no cache writes; proxies in front
 * of a provider that does (LiteLLM for Anthropic) add `cache_creation_input_tokens`, read when present.
 */
export function openAITokenUsage(usage: CompletionUsage): ProviderTokenUsage {
  const writes = (usage as { cache_creation_input_tokens?: unknown }).cache_creation_input_tokens;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: typeof writes === 'number' ? writes : 0,
    outputTokens: usage.completion_tokens ?? 0,
  };
}
