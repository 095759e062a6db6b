// compact() time versus session size, for each mechanical strategy, over InMemorySessionRepository through
// DefaultSessionService, with the default js-tiktoken estimator.
//
//   node --expose-gc --import tsx benchmarks/compact-scaling.ts      (or: npx tsx benchmarks/compact-scaling.ts)
//
// "first" is the first compact() of a session whose events were never tokenised (the per-event memo is cold;
// the estimator's process-wide piece cache is warm with common words, as in a running server); "repeat"
// appends one more turn and compacts again, so it shows what the per-event token memo saves.
import os from 'node:os';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  TurnWindowCompactionStrategy,
  createDefaultLogger,
  defaultTokenCountEstimator,
  type CompactionStrategy,
  type Message,
  type SessionEvent,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import { mulberry32 } from './src/prng.js';
import { exitOnHelp } from './support/args.js';

exitOnHelp();

const SIZES = [1_000, 10_000, 100_000];
/** Runs per size (fresh session each); the median is reported. 100k runs take seconds, so once. */
const RUNS: Record<number, number> = { 1_000: 7, 10_000: 3, 100_000: 1 };
/** Append-one-turn-and-compact rounds per session after the first compact(). */
const REPEAT_ROUNDS = 5;
const EVENTS_PER_TURN = 4; // user, assistant tool call, tool result, assistant answer

const WORDS = (
  'the a flight booking passenger reservation seat baggage upgrade refund policy economy business cabin ' +
  'certificate payment card airport departure arrival delay cancel change confirm please thanks could would ' +
  'customer agent ticket fare price total segment return outbound date time gate status membership gold ' +
  'silver insurance travel direct connection search available option cost cheaper earlier later morning evening'
).split(' ');

/** A customer-service-like turn: question, tool call, JSON tool result, answer; numbers keep texts distinct. */
function turnMessages(turn: number, next: () => number): Message[] {
  const sentence = (n: number): string => {
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(next() * WORDS.length)]!);
    return words.join(' ');
  };
  const reservation = `R${(turn * 7919).toString(36).toUpperCase()}`;
  const callId = `call_${turn}`;
  const result = JSON.stringify({
    reservation_id: reservation,
    flights: [{ flight_number: `HAT${100 + (turn % 900)}`, date: `2024-05-${10 + (turn % 20)}`, price: 100 + (turn % 400) }],
    note: sentence(12),
  });
  return [
    Messages.user(`${sentence(14)} reservation ${reservation}?`),
    Messages.assistant(null, {
      toolCalls: [Messages.toolCall(callId, 'get_reservation_details', JSON.stringify({ reservation_id: reservation }))],
    }),
    Messages.tool([Messages.toolResponse(callId, 'get_reservation_details', result)]),
    Messages.assistant(`${sentence(30)} (turn ${turn}).`),
  ];
}

interface Case {
  label: string;
  /** Keeps about half of the window, so the repeated call still works on a large window. */
  strategy: (events: number, tokens: number) => CompactionStrategy;
}

const CASES: Case[] = [
  { label: 'SlidingWindow', strategy: (n) => new SlidingWindowCompactionStrategy({ maxEvents: n / 2 }) },
  { label: 'TurnWindow', strategy: (n) => new TurnWindowCompactionStrategy({ maxTurns: n / EVENTS_PER_TURN / 2 }) },
  { label: 'TokenCount', strategy: (_n, tokens) => new TokenCountCompactionStrategy({ maxTokens: Math.floor(tokens / 2) }) },
];

interface Measurement {
  label: string;
  events: number;
  tokens: number;
  firstMs: number;
  firstArchived: number;
  repeatMs: number;
  repeatArchived: number;
}

const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: createDefaultLogger({ silent: true }) });
const estimator = defaultTokenCountEstimator();
const gc = (globalThis as { gc?: () => void }).gc;

/**
 * CPU time (user + system) of this process since `start`, not wall time: on a shared machine other
 * processes inflate wall time but not this. compact() over the in-memory repository never waits on I/O.
 */
function cpuMs(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function appendTurns(sessionId: string, from: number, count: number, next: () => number): Promise<void> {
  for (let t = from; t < from + count; t++) {
    for (const message of turnMessages(t, next)) await service.appendMessage(sessionId, message);
  }
}

async function measure(c: Case, events: number, tokensPerSize: Map<number, number>): Promise<Measurement> {
  const session = await service.create({ userId: 'bench' });
  const next = mulberry32(events);
  const turns = events / EVENTS_PER_TURN;
  await appendTurns(session.id, 0, turns, next);
  // The budget comes from a *copy* of the same texts, so this session's events stay untokenised.
  const tokens = tokensPerSize.get(events)!;
  // Fires on both calls (the window stays around half the session), counting every event of the window.
  const trigger = new TokenCountTrigger({ threshold: Math.floor(tokens / 4) });
  const strategy = c.strategy(events, tokens);

  gc?.();
  let start = process.cpuUsage();
  const first = await service.compact(session.id, trigger, strategy);
  const firstMs = cpuMs(start);

  // Several append-one-turn-then-compact rounds; their median is the repeat figure.
  const repeats: number[] = [];
  let repeatArchived = 0;
  for (let round = 0; round < REPEAT_ROUNDS; round++) {
    await appendTurns(session.id, turns + round, 1, next);
    gc?.();
    start = process.cpuUsage();
    const repeat = await service.compact(session.id, trigger, strategy);
    repeats.push(cpuMs(start));
    repeatArchived = repeat.archivedEvents.length;
  }

  await service.delete(session.id);
  return {
    label: c.label,
    events,
    tokens,
    firstMs,
    firstArchived: first.archivedEvents.length,
    repeatMs: median(repeats),
    repeatArchived,
  };
}

/** Token total of a session of `events` events, counted on a throw-away copy with other ids. */
async function sessionTokens(events: number): Promise<number> {
  const session = await service.create({ userId: 'bench-sizing' });
  await appendTurns(session.id, 0, events / EVENTS_PER_TURN, mulberry32(events));
  const all: SessionEvent[] = await service.getEvents(session.id);
  const tokens = estimateEventsTokens(all, estimator);
  await service.delete(session.id);
  return tokens;
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

const loadAtStart = os.loadavg()[0]!;
estimator.estimate('warm-up: loads the rank table before anything is timed');
const tokensPerSize = new Map<number, number>();
for (const n of SIZES) tokensPerSize.set(n, await sessionTokens(n));

// One untimed round first, so JIT warm-up does not land on the 1k row.
for (const c of CASES) await measure(c, SIZES[0]!, tokensPerSize);

// Sizes outermost and strategies innermost, so every strategy meets the same process state (piece cache,
// heap) at each size: the strategies are then comparable with each other.
const runsByCase = new Map<string, Measurement[]>();
for (const n of SIZES) {
  for (let i = 0; i < RUNS[n]!; i++) {
    for (const c of CASES) {
      const key = `${c.label}/${n}`;
      runsByCase.set(key, [...(runsByCase.get(key) ?? []), await measure(c, n, tokensPerSize)]);
    }
  }
}
const results: Measurement[] = [];
for (const c of CASES) {
  for (const n of SIZES) {
    const runs = runsByCase.get(`${c.label}/${n}`)!;
    results.push({ ...runs[0]!, firstMs: median(runs.map((r) => r.firstMs)), repeatMs: median(runs.map((r) => r.repeatMs)) });
  }
}

console.log(`# compact() scaling (InMemorySessionRepository, DefaultSessionService, o200k_base)\n`);
console.log(
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.arch()}, ${os.cpus().length} CPUs, load average ${loadAtStart.toFixed(1)} at start${gc ? ', gc between runs' : ''}`,
);
console.log(
  `Sessions of 4-event turns (question, tool call, JSON tool result, answer); trigger TokenCountTrigger(¼ of the session's tokens);` +
    ` each strategy keeps about half the session. "repeat" = append one turn, compact again (median of ${REPEAT_ROUNDS} rounds).` +
    ` CPU time of this process (user + system).` +
    ` Median of ${SIZES.map((n) => RUNS[n]).join('/')} runs (fresh session each) for ${SIZES.map((n) => n / 1000 + 'k').join('/')} events.\n`,
);
console.log('| strategy | events | tokens | first compact() | archived | repeat compact() | archived |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.label} | ${r.events.toLocaleString('en')} | ${r.tokens.toLocaleString('en')} | ${fmt(r.firstMs)} | ${r.firstArchived.toLocaleString('en')} | ${fmt(r.repeatMs)} | ${r.repeatArchived} |`,
  );
}

console.log('\nGrowth factor per 10× more events (time at 10n ÷ time at n):\n');
console.log('| strategy | first: 1k→10k | first: 10k→100k | repeat: 1k→10k | repeat: 10k→100k |');
console.log('|---|---:|---:|---:|---:|');
for (const c of CASES) {
  const rows = results.filter((r) => r.label === c.label);
  const g = (a: number, b: number): string => `${(b / a).toFixed(1)}×`;
  console.log(
    `| ${c.label} | ${g(rows[0]!.firstMs, rows[1]!.firstMs)} | ${g(rows[1]!.firstMs, rows[2]!.firstMs)} | ${g(rows[0]!.repeatMs, rows[1]!.repeatMs)} | ${g(rows[1]!.repeatMs, rows[2]!.repeatMs)} |`,
  );
}
