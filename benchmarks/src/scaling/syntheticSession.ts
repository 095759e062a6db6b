import { Messages, type Message } from 'session-compaction';
import { mulberry32 } from '../prng.js';

const WORDS = (
  'flight booking reservation passenger baggage refund policy change cabin economy business seat date ' +
  'airport city weather server request error stack trace module function value return parse config file ' +
  'test build deploy database query index table column user account payment card certificate amount total ' +
  'schedule meeting project deadline review budget report summary question answer reason detail option'
).split(' ');

function sentence(random: () => number, words: number, serial: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(random() * WORDS.length)]!);
  return `${out.join(' ')} #${serial}.`;
}

/**
 * `count` messages of an agent-style chat: each turn is a user request, an assistant tool call, the tool
 * result and the assistant's answer (~20, ~15, ~80 and ~40 words), so that both chat and tool shapes scale.
 */
export function syntheticMessages(count: number, seed = 42): Message[] {
  const random = mulberry32(seed);
  const out: Message[] = [];
  for (let turn = 0; out.length < count; turn++) {
    const id = `call-${turn}`;
    const shape: Message[] = [
      Messages.user(sentence(random, 20, turn)),
      Messages.assistant(null, {
        toolCalls: [Messages.toolCall(id, 'lookup', JSON.stringify({ query: sentence(random, 8, turn) }))],
      }),
      Messages.tool([Messages.toolResponse(id, 'lookup', sentence(random, 80, turn))]),
      Messages.assistant(sentence(random, 40, turn)),
    ];
    for (const m of shape) if (out.length < count) out.push(m);
  }
  return out;
}
