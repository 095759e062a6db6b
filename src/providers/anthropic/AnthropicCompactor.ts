import type Anthropic from '@anthropic-ai/sdk';
import { InvalidArgumentError, requirePositiveInt, requireText } from '../../errors.js';
import {
  ANTHROPIC_NATIVE_COMPACTION,
  type NativeCompactionInput,
  type NativeCompactionOutput,
  type NativeCompactor,
} from '../../compaction/nativeCompaction.js';
import { ANTHROPIC_COMPACTION_BETA } from './AnthropicChatProvider.js';
import { toAnthropicMessages } from './AnthropicMessages.js';

/** The part of the `@anthropic-ai/sdk` client a compaction request goes through. */
export type AnthropicCompactionClient = Pick<Anthropic, 'beta'>;

export interface AnthropicCompactorOptions {
  /** The model that summarises (the conversation's own model, so that its cache is reused). */
  model: string;
  /** `max_tokens` of the compaction request; default 8192. */
  maxTokens?: number;
  /**
   * Other request parameters the conversation needs, sent as they are: `tools` above all (the API wants the
   * definitions of the tools the conversation used), `system`. Leave out reply-shaping parameters
   * (`tool_choice` any/tool, `output_config.format`, `stop_sequences`) and `context_management`: a compaction
   * request returns no reply, and the API refuses them with it.
   */
  params?: Record<string, unknown>;
  /** Betas sent with the request besides `compact-2026-09-04`. */
  betas?: readonly string[];
}

interface CompactionBlock {
  type: 'compaction';
  content?: string | null;
  [key: string]: unknown;
}

/**
 * Anthropic's compaction (`POST /v1/messages?beta=true` with `compaction: { type: 'summarize' }`, beta
 * `compact-2026-09-04`): the conversation in `messages` is summarised and the reply holds only a signed
 * `compaction` block (`stop_reason: 'compaction'`), which later requests send first in `messages` in place of
 * the messages it summarises. The payload stored is the reply's `content`, exactly as received; the block's
 * readable `content` is returned as `text`. A reply without a block with content (the server's failed
 * compaction) is a failure: the strategy falls back to the library's summariser.
 */
export class AnthropicCompactor implements NativeCompactor {
  static readonly DEFAULT_MAX_TOKENS = 8192;
  readonly provider = ANTHROPIC_NATIVE_COMPACTION;
  readonly model: string;
  readonly maxTokens: number;
  private readonly params: Record<string, unknown>;
  private readonly betas: string[];

  constructor(
    private readonly client: AnthropicCompactionClient,
    options: AnthropicCompactorOptions,
  ) {
    if (client === null || client === undefined) throw new InvalidArgumentError('client must not be null');
    if (typeof client.beta?.messages?.create !== 'function') {
      throw new InvalidArgumentError('client must have beta.messages.create (an @anthropic-ai/sdk client)');
    }
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.model = requireText(options.model, 'model');
    this.maxTokens = requirePositiveInt(options.maxTokens ?? AnthropicCompactor.DEFAULT_MAX_TOKENS, 'maxTokens');
    this.params = { ...(options.params ?? {}) };
    const betas = [...(options.betas ?? [])];
    this.betas = betas.includes(ANTHROPIC_COMPACTION_BETA) ? betas : [...betas, ANTHROPIC_COMPACTION_BETA];
  }

  async compact(input: NativeCompactionInput): Promise<NativeCompactionOutput> {
    // A prior Anthropic compaction of the range goes back first, verbatim; the API summarises it with the rest.
    const prompt = toAnthropicMessages(input.events);
    const instructions = input.instructions.length > 0 ? input.instructions.join('\n') : undefined;
    const system = prompt.system ?? (this.params.system as string | undefined);
    const body = {
      ...this.params,
      model: this.model,
      max_tokens: this.maxTokens,
      ...(system !== undefined ? { system } : {}),
      messages: prompt.messages,
      compaction: { type: 'summarize' as const, ...(instructions !== undefined ? { instructions } : {}) },
      betas: this.betas,
      stream: false as const,
    };
    const reply = await this.client.beta.messages.create(body as never);
    const content = (reply as unknown as { content?: unknown }).content;
    const blocks = Array.isArray(content) ? (content as Array<{ type?: unknown }>) : [];
    const block = blocks.find((b): b is CompactionBlock => b?.type === 'compaction');
    if (block === undefined || typeof block.content !== 'string' || block.content === '') {
      throw new Error('the compaction request returned no compaction block with content');
    }
    const usage = (reply as unknown as { usage?: Record<string, unknown> }).usage;
    return {
      payload: content,
      text: block.content,
      usage: usageOf(usage),
      ...(typeof reply.model === 'string' ? { model: reply.model } : {}),
    };
  }
}

/**
 * The compaction's own tokens: its `compaction` iteration entries when the reply has them (their tokens are
 * not in the top-level fields), else the top-level fields.
 */
function usageOf(usage: Record<string, unknown> | undefined): NativeCompactionOutput['usage'] {
  if (usage === undefined || usage === null) return null;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const iterations = Array.isArray(usage.iterations)
    ? (usage.iterations as Array<Record<string, unknown>>).filter((i) => i?.type === 'compaction')
    : [];
  const parts = iterations.length > 0 ? iterations : [usage];
  let prompt = 0;
  let cached = 0;
  let output = 0;
  for (const p of parts) {
    prompt += num(p.input_tokens) + num(p.cache_creation_input_tokens) + num(p.cache_read_input_tokens);
    cached += num(p.cache_read_input_tokens);
    output += num(p.output_tokens);
  }
  return { promptTokens: prompt, completionTokens: output, totalTokens: prompt + output, cachedPromptTokens: cached };
}
