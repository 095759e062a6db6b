import type { OpenAISessionMemory } from 'session-compaction/openai';

type Client = ConstructorParameters<typeof OpenAISessionMemory>[0]['client'];

/** An OpenAI client that answers at once, without a network: what a turn then costs is the library's own work. */
export function instantClient(): Client {
  let n = 0;
  const create = async () => ({
    id: `c${n++}`,
    object: 'chat.completion',
    created: 0,
    model: 'bench',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'Noted.', refusal: null }, finish_reason: 'stop', logprobs: null },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 },
  });
  return { chat: { completions: { create } } } as unknown as Client;
}
