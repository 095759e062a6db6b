import { SessionMemory } from '../../chat/SessionMemory.js';
import type { SessionMemoryOptions } from '../../chat/SessionMemoryTypes.js';
import {
  AnthropicChatProvider,
  type AnthropicChatProviderOptions,
  type AnthropicChatTypes,
  type AnthropicClient,
} from './AnthropicChatProvider.js';

export interface AnthropicSessionMemoryOptions
  extends Omit<SessionMemoryOptions<AnthropicChatTypes>, 'client' | 'provider' | 'streamUsage'>, AnthropicChatProviderOptions {
  /** An `@anthropic-ai/sdk` client. */
  client: AnthropicClient;
}

/**
 * SessionMemory over the Anthropic Messages API: `call` / `stream` take Anthropic `messages` (the new ones of
 * this turn) and any Messages API parameter (`system`, `tools`, `thinking`, `max_tokens`...), and return the
 * Anthropic reply; the history, persistence, window guard, calibration and compaction are SessionMemory's.
 */
export class AnthropicSessionMemory extends SessionMemory<AnthropicChatTypes> {
  constructor(options: AnthropicSessionMemoryOptions) {
    const { client, maxTokens, thinking, missingToolResult, cacheBreakpoints, nativeCompaction, ...rest } =
      options ?? ({} as AnthropicSessionMemoryOptions);
    const provider = new AnthropicChatProvider(client, {
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(thinking !== undefined ? { thinking } : {}),
      ...(missingToolResult !== undefined ? { missingToolResult } : {}),
      ...(cacheBreakpoints !== undefined ? { cacheBreakpoints } : {}),
      ...(nativeCompaction !== undefined ? { nativeCompaction } : {}),
      ...(rest.logger !== undefined ? { logger: rest.logger } : {}),
    });
    super({ ...rest, provider });
  }
}
