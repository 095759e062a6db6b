import type Anthropic from '@anthropic-ai/sdk';
import type {
  Message as AnthropicReply,
  MessageCreateParamsNonStreaming,
  MessageParam,
  MessageStreamEvent,
  Usage,
} from '@anthropic-ai/sdk/resources/messages';
import { InvalidArgumentError, requirePositiveInt } from '../../errors.js';
import type { Logger } from '../../logging.js';
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
  anthropicPrompt,
  fromAnthropicMessage,
  fromAnthropicReply,
  renderAnthropicPrompt,
  type AnthropicPrompt,
  type ToAnthropicOptions,
} from './AnthropicMessages.js';
import {
  countCacheBreakpoints,
  limitStoredBreakpoints,
  MAX_CACHE_BREAKPOINTS,
  stableHistoryEnd,
  withCacheBreakpoints,
} from './cacheBreakpoints.js';
import type { ProviderRefusal } from '../../chat/contextOverflow.js';
import { anthropicRefusal } from './anthropicRefusal.js';

/** Request parameters a SessionMemory request may add (tools, thinking, temperature...); `max_tokens` defaults. */
export type AnthropicChatParams = Omit<MessageCreateParamsNonStreaming, 'messages' | 'model' | 'stream' | 'max_tokens'> & {
  max_tokens?: number;
};

/** The Anthropic Messages API, as SessionMemory sees it. */
export interface AnthropicChatTypes extends ChatProviderTypes {
  message: MessageParam;
  params: AnthropicChatParams;
  prompt: AnthropicPrompt;
  reply: AnthropicReply;
  usage: Usage;
  chunk: MessageStreamEvent;
  completion: AnthropicReply;
}

/**
 * The part of the `@anthropic-ai/sdk` client this provider calls: `messages`, and `beta.messages` for a prompt
 * that opens with a stored compaction block (without `beta`, such a summary is sent as its text).
 */
export type AnthropicClient = Pick<Anthropic, 'messages'> & Partial<Pick<Anthropic, 'beta'>>;

/** The beta that compaction requests and compaction blocks need (`compaction: { type: 'summarize' }`). */
export const ANTHROPIC_COMPACTION_BETA = 'compact-2026-09-04';

export interface AnthropicChatProviderOptions extends ToAnthropicOptions {
  /** `max_tokens` of a request that does not set it; default 4096. */
  maxTokens?: number;
  /**
   * Prompt-cache breakpoints (`cache_control: { type: 'ephemeral' }`), which a caller cannot put on history
   * messages the library builds. 'auto' (default): one on the end of the stable history — the last block
   * before the recall block (which is rebuilt every turn), or the last block of the prompt when there is no
   * recall block; none there with recall placed 'after-system' — and one on the system prompt's last block,
   * in that order of priority, only as far as the request keeps at most 4 counting the caller's own (tools,
   * system, messages, top-level `cache_control`). 'off': no breakpoints are added.
   *
   * Breakpoints stored with the history (a caller's `cache_control` is kept with its message and so comes
   * back on every later turn) never push a request over the API's 4: with 'auto' none of them is sent (the
   * history end covers their prefixes); with 'off' they are sent while they fit after this request's own,
   * the oldest left out first. The stored events keep them.
   */
  cacheBreakpoints?: 'auto' | 'off';
  /** Where 'off' reports the stored breakpoints it left out (at debug); without one, nowhere. */
  logger?: Logger;
}

/** Prompt tokens as billed: uncached input plus what was written to and read from the prompt cache. */
export function anthropicPromptTokens(
  usage: Pick<Usage, 'input_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens'>,
): number {
  return usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/** The Messages API through an `@anthropic-ai/sdk` client (`new Anthropic({ baseURL })` for any compatible endpoint). */
export class AnthropicChatProvider implements ChatProvider<AnthropicChatTypes> {
  static readonly DEFAULT_MAX_TOKENS = 4096;
  declare readonly types?: AnthropicChatTypes;
  readonly maxTokens: number;
  readonly cacheBreakpoints: 'auto' | 'off';
  private readonly promptOptions: ToAnthropicOptions;
  private readonly logger: Logger | undefined;

  constructor(
    private readonly client: AnthropicClient,
    options: AnthropicChatProviderOptions = {},
  ) {
    if (client === null || client === undefined) throw new InvalidArgumentError('client must not be null');
    const { maxTokens, cacheBreakpoints, logger, ...promptOptions } = options ?? {};
    this.maxTokens = requirePositiveInt(maxTokens ?? AnthropicChatProvider.DEFAULT_MAX_TOKENS, 'maxTokens');
    if (cacheBreakpoints !== undefined && cacheBreakpoints !== 'auto' && cacheBreakpoints !== 'off') {
      throw new InvalidArgumentError("cacheBreakpoints must be 'auto' or 'off'");
    }
    this.cacheBreakpoints = cacheBreakpoints ?? 'auto';
    // A compaction block goes only through the beta endpoint: without one, summaries are sent as their text.
    this.promptOptions =
      typeof client.beta?.messages?.create === 'function' ? promptOptions : { ...promptOptions, nativeCompaction: 'text' };
    this.logger = logger;
    // Validates the thinking policy now rather than on the first request.
    anthropicPrompt([], [], undefined, promptOptions);
  }

  prompt(history: readonly SessionEvent[], messages: readonly MessageParam[], params: AnthropicChatParams): AnthropicPrompt {
    // This request's own breakpoints (tools, system, its messages, top-level) always go as they are.
    const own = countCacheBreakpoints(
      { ...(params.system === undefined ? {} : { system: params.system }), messages: [...messages] },
      params,
    );
    const off = this.cacheBreakpoints === 'off';
    const limited = limitStoredBreakpoints(history, off ? MAX_CACHE_BREAKPOINTS - own : 0);
    const rendered = renderAnthropicPrompt(limited.history, messages, params.system, this.promptOptions);
    const { prompt } = rendered;
    if (off) {
      if (limited.dropped > 0) {
        this.logger?.debug('stored cache_control breakpoints left out: a request takes at most 4', {
          stored: limited.stored,
          dropped: limited.dropped,
          own,
        });
      }
      return prompt;
    }
    return withCacheBreakpoints(prompt, params, stableHistoryEnd(limited.history, rendered));
  }

  requestMessages(messages: readonly MessageParam[], params: AnthropicChatParams): Message[] {
    const all = params.system === undefined ? messages : [{ role: 'system' as const, content: params.system }, ...messages];
    return all.flatMap((m) => fromAnthropicMessage(m).map((e) => e.message));
  }

  incoming(messages: readonly MessageParam[], history: readonly SessionEvent[]): PersistableMessage[] {
    // The trailing user messages are this turn's new conversation (the API combines them into one turn).
    let first = messages.length;
    while (first > 0 && messages[first - 1]!.role === 'user') first--;
    const names = new Map<string, string>();
    for (const e of history) {
      if (e.message.type === 'assistant') for (const c of e.message.toolCalls ?? []) names.set(c.id, c.name);
    }
    for (const m of messages) {
      if (m.role !== 'assistant' || typeof m.content === 'string') continue;
      for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
    }
    const resolveToolName = (id: string) => names.get(id);
    return messages.slice(first).flatMap((m) => fromAnthropicMessage(m, { resolveToolName }));
  }

  async call(call: ChatProviderCall<AnthropicChatTypes>): Promise<ChatProviderOutcome<AnthropicChatTypes>> {
    const options = {
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.timeoutMs === undefined ? {} : { timeout: call.timeoutMs }),
    };
    const body = { ...this.body(call), stream: false as const };
    const reply = hasCompactionBlock(body.messages)
      ? ((await this.client.beta!.messages.create(withCompactionBeta(body) as never, options)) as unknown as AnthropicReply)
      : await this.client.messages.create(body, options);
    return outcome(reply, true);
  }

  async stream(
    call: ChatProviderCall<AnthropicChatTypes>,
    onChunk: (chunk: MessageStreamEvent) => void,
  ): Promise<ChatProviderOutcome<AnthropicChatTypes>> {
    // The SDK's own accumulator folds the events (text, tool input JSON, thinking and signature deltas).
    const options = {
      ...(call.signal === undefined ? {} : { signal: call.signal }),
      ...(call.timeoutMs === undefined ? {} : { timeout: call.timeoutMs }),
    };
    const body = this.body(call);
    const stream = hasCompactionBlock(body.messages)
      ? (this.client.beta!.messages.stream(withCompactionBeta(body) as never, options) as unknown as ReturnType<
          Anthropic['messages']['stream']
        >)
      : this.client.messages.stream(body, options);
    for await (const event of stream) onChunk(event);
    return outcome(await stream.finalMessage(), false);
  }

  refusalOf(error: unknown): ProviderRefusal | null {
    return anthropicRefusal(error);
  }

  private body(call: ChatProviderCall<AnthropicChatTypes>): MessageCreateParamsNonStreaming {
    const { system: _requestSystem, ...params } = call.params;
    return {
      ...params,
      max_tokens: call.params.max_tokens ?? this.maxTokens,
      model: call.model,
      ...(call.prompt.system !== undefined ? { system: call.prompt.system } : {}),
      messages: call.prompt.messages,
    };
  }
}

/** True when the prompt replays a stored compaction block (see `ToAnthropicOptions.nativeCompaction`). */
function hasCompactionBlock(messages: readonly MessageParam[]): boolean {
  const first = messages[0];
  return first !== undefined && Array.isArray(first.content) && first.content.some((b) => (b.type as string) === 'compaction');
}

/** The body with the compaction beta added to the caller's own betas (a beta request takes them as `betas`). */
function withCompactionBeta(body: MessageCreateParamsNonStreaming): Record<string, unknown> {
  const own = (body as { betas?: unknown }).betas;
  const betas = Array.isArray(own) ? (own as string[]) : [];
  return { ...body, betas: betas.includes(ANTHROPIC_COMPACTION_BETA) ? betas : [...betas, ANTHROPIC_COMPACTION_BETA] };
}

function outcome(reply: AnthropicReply, withCompletion: boolean): ChatProviderOutcome<AnthropicChatTypes> {
  return {
    reply,
    persist: fromAnthropicReply(reply),
    usage: reply.usage ?? null,
    promptTokens: reply.usage === undefined || reply.usage === null ? undefined : anthropicPromptTokens(reply.usage),
    ...(reply.usage !== undefined && reply.usage !== null
      ? {
          tokens: {
            inputTokens: anthropicPromptTokens(reply.usage),
            cachedInputTokens: reply.usage.cache_read_input_tokens ?? 0,
            cacheWriteTokens: reply.usage.cache_creation_input_tokens ?? 0,
            outputTokens: reply.usage.output_tokens ?? 0,
          },
        }
      : {}),
    finishReason: reply.stop_reason ?? null,
    ...(withCompletion ? { completion: reply } : {}),
  };
}
