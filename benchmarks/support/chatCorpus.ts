import { existsSync } from 'node:fs';
import { Messages, type Message } from 'session-compaction';
import { loadLocomo } from '../src/loaders/loadLocomo.js';
import { mulberry32 } from '../src/prng.js';
import { toMessage } from '../src/recorded/toMessage.js';

export interface ChatCorpus {
  source: string;
  turns: Message[];
  questions: string[];
}

/**
 * Chat turns and questions for the recall benchmarks: LoCoMo's when `locomoPath` exists, else seeded synthetic
 * sentences over a fixed vocabulary, so the benchmarks run (and say which corpus they used) without the recordings.
 */
export function chatCorpus(locomoPath: string): ChatCorpus {
  if (existsSync(locomoPath)) {
    const sessions = loadLocomo(locomoPath).sessions;
    return {
      source: 'LoCoMo turns and questions',
      turns: sessions.flatMap((s) => s.events.map(toMessage)),
      questions: sessions.flatMap((s) => (s.probes ?? []).filter((p) => p.distractor === undefined).map((p) => p.question)),
    };
  }
  const random = mulberry32(7);
  const words = (
    'trip beach dog garden recipe pasta concert guitar painting sunset marathon knee doctor school teacher ' +
    'project deadline budget meeting flight hotel museum camera puppy kitten bakery coffee novel library ' +
    'hiking mountain lake festival wedding birthday cake present job interview promotion office laptop'
  ).split(' ');
  const pick = () => words[Math.floor(random() * words.length)]!;
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
  return {
    source: 'synthetic chat (seeded; LoCoMo not found)',
    turns: Array.from({ length: 2000 }, (_, i) =>
      i % 2 === 0 ? Messages.user(`I ${sentence(12)}.`) : Messages.assistant(sentence(15)),
    ),
    questions: Array.from({ length: 500 }, () => `What about the ${pick()} and the ${pick()}?`),
  };
}
