// compact() CPU of observation masking next to a sliding window on the same session, in the same run: does
// masking re-count the tokens of its masked copies on every run? With `minSavedTokens` (the cache-aware
// deferral) the strategy masks every answered tool result again on each run and then defers; each copy gets a
// fresh id, so a token memo keyed by event id alone counts every copy again, every run.
//
//   node --import tsx --conditions=session-compaction-source benchmarks/masking-cost.ts [--turns 500] [--rounds 20]
//
// A session of --turns turns (user, assistant tool call, a ~4 KB JSON tool result, assistant answer) over
// InMemorySessionRepository; then --rounds times: append one turn, compact with a trigger that always fires.
// Reported: the median CPU (user + system) of one compact() per strategy, and its ratio to the sliding window.
import os from 'node:os';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  ObservationMaskingCompactionStrategy,
  SlidingWindowCompactionStrategy,
  createDefaultLogger,
  type CompactionStrategy,
  type Message,
} from 'session-compaction';
import { numberArg } from './support/args.js';
import { mulberry32 } from './src/prng.js';

const TURNS = numberArg('turns', '500');
const ROUNDS = numberArg('rounds', '20');
const WORDS = 'flight booking passenger seat baggage refund cabin payment airport delay gate fare ticket status'.split(' ');

function turn(t: number, next: () => number): Message[] {
  const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(' ');
  const callId = `call_${t}`;
  const result = JSON.stringify({
    reservation: `R${t}`,
    flights: Array.from({ length: 20 }, (_, i) => ({
      flight: `HAT${(t * 31 + i) % 997}`,
      price: 100 + ((t + i) % 400),
      note: sentence(12),
    })),
  });
  return [
    Messages.user(`${sentence(14)} reservation R${t}?`),
    Messages.assistant(null, { toolCalls: [Messages.toolCall(callId, 'get_reservation', JSON.stringify({ id: `R${t}` }))] }),
    Messages.tool([Messages.toolResponse(callId, 'get_reservation', result)]),
    Messages.assistant(`${sentence(30)} (turn ${t}).`),
  ];
}

const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: createDefaultLogger({ silent: true }) });

async function measure(strategy: CompactionStrategy): Promise<number> {
  const session = await service.create({ userId: 'bench' });
  const next = mulberry32(7);
  for (let t = 0; t < TURNS; t++) for (const m of turn(t, next)) await service.appendMessage(session.id, m);
  const cpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const m of turn(TURNS + r, next)) await service.appendMessage(session.id, m);
    const start = process.cpuUsage();
    await service.compact(session.id, () => true, strategy);
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / 1000);
  }
  await service.delete(session.id);
  cpu.sort((a, b) => a - b);
  return cpu[Math.floor(cpu.length / 2)]!;
}

const cases: [string, () => CompactionStrategy][] = [
  ['SlidingWindow (keeps 4 × turns events)', () => new SlidingWindowCompactionStrategy({ maxEvents: 4 * TURNS })],
  ['ObservationMasking (default)', () => new ObservationMaskingCompactionStrategy()],
  [
    'ObservationMasking, minSavedTokens 10^9 (masks every run, defers)',
    () => new ObservationMaskingCompactionStrategy({ minSavedTokens: 1_000_000_000 }),
  ],
];
const load = os.loadavg()[0]!;
await measure(cases[0]![1]()); // JIT and the estimator's rank table, untimed
const rows: [string, number][] = [];
for (const [label, make] of cases) rows.push([label, await measure(make())]);
const base = rows[0]![1];
console.log(
  `masking-cost: ${TURNS} turns, ${ROUNDS} rounds, Node ${process.version}, load ${load.toFixed(1)} on ${os.cpus().length} cores`,
);
console.log('| strategy | compact() CPU median (ms) | ÷ sliding window |');
console.log('|---|---:|---:|');
for (const [label, ms] of rows) console.log(`| ${label} | ${ms.toFixed(2)} | ${(ms / base).toFixed(1)}× |`);
process.exit(0);
