import type OpenAI from 'openai';
import { SessionMemory } from '../../chat/SessionMemory.js';
import type { SessionMemoryOptions } from '../../chat/SessionMemoryTypes.js';
import { OpenAIChatProvider, type OpenAIChatTypes } from './OpenAIChatProvider.js';

export interface OpenAISessionMemoryOptions extends Omit<SessionMemoryOptions<OpenAIChatTypes>, 'client' | 'provider'> {
  /** The `openai` SDK client: any OpenAI-compatible endpoint through its `baseURL`. */
  client: OpenAI;
}

/**
 * SessionMemory over the OpenAI Chat Completions API (or any compatible endpoint): `call` / `stream` take
 * `ChatCompletionMessageParam`s and Chat Completions parameters and return the OpenAI reply.
 */
export class OpenAISessionMemory extends SessionMemory<OpenAIChatTypes> {
  constructor(options: OpenAISessionMemoryOptions) {
    const { client, ...rest } = options ?? ({} as OpenAISessionMemoryOptions);
    const provider = new OpenAIChatProvider(client, { streamUsage: rest.streamUsage, logger: rest.logger });
    super({ ...rest, provider });
  }
}
