// What the OpenTelemetry instrumentation costs per compact() when the application installs no SDK (the
// API's no-op tracer and meter), side by side with the instrumentation switched off.
//
//   node --expose-gc --import tsx benchmarks/telemetry-overhead.ts [--rounds 9] [--sessions 200] [--events 120]
//
// Per backend (in-memory: the worst case, every repository call takes microseconds; a SQLite file): each
// round prepares 2 × --sessions sessions of --events events and warms their token memo outside the timing (a
// running server has counted its events before it compacts), then compacts them once each, switching the
// instrumentation on and off from one compaction to the next, so that drift and other load on a shared
// machine hit both modes alike. Per round and mode the median compact() is taken; the table gives the
// median over rounds. The turn window is the strategy: summarising strategies only add model latency,
// which the spans do not change. Writes docs/benchmarks/telemetry-overhead.md.
import { trace } from '@opentelemetry/api';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDefaultLogger,
  DefaultSessionService,
  InMemorySessionRepository,
  SessionEvent,
  SqliteSessionRepository,
  TurnCountTrigger,
  TurnWindowCompactionStrategy,
  type SessionRepository,
} from 'session-compaction';
import { isBatchAppendRepository } from 'session-compaction/spi';
import { configureTelemetry } from 'session-compaction/telemetry';
import { syntheticMessages } from '../src/bench/scaling/syntheticSession.js';
import { numberArg } from './support/args.js';

const ROUNDS = numberArg('rounds', '9');
const SESSIONS = numberArg('sessions', '200');
const EVENTS = numberArg('events', '120');
const OUT = fileURLToPath(new URL('../docs/benchmarks/telemetry-overhead.md', import.meta.url));
const gc = (globalThis as { gc?: () => void }).gc;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

if (trace.getTracer('probe').startSpan('probe').isRecording()) {
  throw new Error('an OpenTelemetry SDK is installed; this benchmark measures the no-SDK case');
}

const logger = createDefaultLogger({ silent: true });
const messages = syntheticMessages(EVENTS, 7);
const trigger = new TurnCountTrigger(4);
const strategy = new TurnWindowCompactionStrategy({ maxTurns: 4 });
let round = 0;

/** The service as it would be without any instrumentation: its repository unwrapped, spans switched off. */
class UninstrumentedSessionService extends DefaultSessionService {
  constructor(repository: SessionRepository) {
    super(repository, { logger });
    (this as unknown as { repository: SessionRepository }).repository = repository;
  }
}

/** One round; per mode, the median compact() in µs. */
async function runRound(repository: SessionRepository): Promise<{ off: number; on: number }> {
  configureTelemetry({ enabled: true });
  const service = new DefaultSessionService(repository, { logger });
  const bare = new UninstrumentedSessionService(repository);
  const ids: string[] = [];
  round++;
  for (let s = 0; s < 2 * SESSIONS; s++) {
    const session = await service.create({ userId: 'bench', id: `r${round}-s${s}` });
    const events = messages.map((message, k) =>
      SessionEvent.create({ sessionId: session.id, id: `r${round}-s${s}-e${k}`, message }),
    );
    if (isBatchAppendRepository(repository)) await repository.appendEvents(session.id, events);
    else for (const e of events) await repository.appendEvent(e);
    await service.previewCompaction(session.id, trigger, strategy);
    ids.push(session.id);
  }
  gc?.();
  const times = { off: [] as number[], on: [] as number[] };
  for (const [i, id] of ids.entries()) {
    // Alternate which mode goes first in each pair, so neither always follows the other.
    const instrumented = i % 4 === 0 || i % 4 === 3;
    configureTelemetry({ enabled: instrumented });
    const t0 = performance.now();
    await (instrumented ? service : bare).compact(id, trigger, strategy);
    (instrumented ? times.on : times.off).push((performance.now() - t0) * 1000);
  }
  configureTelemetry({ enabled: true });
  return { off: median(times.off), on: median(times.on) };
}

interface Row {
  backend: string;
  off: number;
  on: number;
  rounds: number[];
}

async function measure(name: string, repository: SessionRepository): Promise<Row> {
  await runRound(repository); // warm-up: JIT, statement caches
  const off: number[] = [];
  const on: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const result = await runRound(repository);
    off.push(result.off);
    on.push(result.on);
  }
  const row = { backend: name, off: median(off), on: median(on), rounds: on.map((x, i) => x / off[i]! - 1) };
  process.stderr.write(`${name}: off ${row.off.toFixed(1)} µs, on ${row.on.toFixed(1)} µs, ${pct(row.on / row.off - 1)}\n`);
  return row;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'otel-overhead-'));
try {
  const load = os.loadavg()[0]!;
  const rows = [
    await measure('in-memory', new InMemorySessionRepository()),
    await measure(
      'SQLite file (WAL, synchronous=NORMAL)',
      new SqliteSessionRepository({ path: path.join(dir, 'b.db'), synchronous: 'NORMAL', logger }),
    ),
  ];
  const lines = [
    '# Telemetry overhead per compact() without an OpenTelemetry SDK',
    '',
    `Generated by \`node --expose-gc --import tsx benchmarks/telemetry-overhead.ts --rounds ${ROUNDS} --sessions ${SESSIONS} --events ${EVENTS}\``,
    `on ${new Date().toISOString().slice(0, 10)} (Node ${process.version}, ${os.cpus().length} CPU cores shared with other work, load average ${load.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end).`,
    '',
    `Each round compacts ${2 * SESSIONS} sessions of ${EVENTS} events (turn window of 4 turns, ${EVENTS - 16} events archived per compaction, token`,
    'memo warm), switching between instrumentation on (spans and metrics through `@opentelemetry/api` with no SDK installed:',
    'the no-op tracer and meter) and off (`configureTelemetry({ enabled: false })` and the repository not wrapped by',
    '`instrumentRepository`) from one compaction to the next. Per round',
    `and mode the median compact() is taken; the table gives the median over ${ROUNDS} rounds and the spread of the rounds.`,
    '',
    '| repository | instrumentation off | on, no SDK | overhead | per round: median (min … max) |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.backend} | ${r.off.toFixed(1)} µs | ${r.on.toFixed(1)} µs | ${pct(r.on / r.off - 1)} | ${pct(median(r.rounds))} (${pct(Math.min(...r.rounds))} … ${pct(Math.max(...r.rounds))}) |`,
    ),
    '',
  ];
  writeFileSync(OUT, lines.join('\n'));
  console.log(lines.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
