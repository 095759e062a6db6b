// In-process recall latency and memory: Bm25Retriever on a 10,000-event session (cold first query with the
// index build, warm queries, a query after each append), side by side with a naive linear scan over the same
// log, and the index memory of 100 sessions x 2,000 events.
//
//   node --expose-gc --import tsx benchmarks/recall-latency.ts [--events 10000] [--queries 300]
//
// Text: LoCoMo turns and questions when the recorded data is there ($RECORDED_DIR or $LOCOMO),
// otherwise a deterministic synthetic chat (seeded PRNG over a fixed vocabulary), so the benchmark runs
// anywhere. Latency: wall time of `retrieve` (limit 20, the archive only), p50/p95/max after 20 warm-up
// queries; "cold" is the first query of a fresh retriever (index built from the log), median of 5.
// Writes docs/benchmarks/recall-latency.md and prints it.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  Bm25Retriever,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  SessionEvent,
  SqliteSessionRepository,
  createDefaultLogger,
  type SessionRepository,
} from 'session-compaction';
import type { BatchAppendRepository } from 'session-compaction/spi';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';

const EVENTS = Number(arg('events', '10000'));
const QUERIES = Number(arg('queries', '300'));
const LOCOMO = process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json');
const logger = createDefaultLogger({ silent: true });
const gc = (globalThis as { gc?: () => void }).gc;

const { source, turns, questions } = chatCorpus(LOCOMO);
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => n.toFixed(2);

/** A session of `count` events from the corpus, all but the last 20 archived (recall searches the archive). */
async function fill(
  { service, repository }: { service: DefaultSessionService; repository: SessionRepository & BatchAppendRepository },
  id: string,
  count: number,
  offset = 0,
): Promise<void> {
  await service.create({ id, userId: 'bench' });
  const events: SessionEvent[] = [];
  for (let i = 0; i < count; i++) {
    events.push(SessionEvent.create({ sessionId: id, id: `e${i}`, message: turns[(offset + i) % turns.length]! }));
  }
  await repository.appendEvents(id, events);
  await service.compact(
    id,
    () => true,
    async (r) => new CompactionResult(r.events.slice(-20), r.events.slice(0, -20), 0),
  );
}

/** Word-overlap scoring over every event of the log: what a search without an index has to do per query. */
async function linearScan(service: DefaultSessionService, sessionId: string, query: string): Promise<number> {
  const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])];
  const scored: { id: string; score: number }[] = [];
  for (const e of await service.getEvents(sessionId, EventFilter.all())) {
    if (!e.isArchived() || e.text === null) continue;
    const text = e.text.toLowerCase();
    let score = 0;
    for (const t of terms) if (text.includes(t)) score++;
    if (score > 0) scored.push({ id: e.id, score });
  }
  scored.sort((a, b) => b.score - a.score);
  return scored.slice(0, 20).length;
}

interface Row {
  contender: string;
  cold: number;
  p50: number;
  p95: number;
  max: number;
  /** The same figures in CPU time of this process: what the call costs, without the time spent waiting for a core. */
  cpu: { cold: number; p50: number; p95: number };
}

/** Milliseconds of CPU time (user + system, every thread of the process) since `start`. */
const cpuMs = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** Wall and CPU time of each call, each list sorted. */
async function timed(run: (q: string) => Promise<unknown>, queries: readonly string[]): Promise<number[] & { cpu: number[] }> {
  const times: number[] = [];
  const cpu: number[] = [];
  for (const q of queries) {
    const c = process.cpuUsage();
    const t = performance.now();
    await run(q);
    times.push(performance.now() - t);
    cpu.push(cpuMs(c));
  }
  return Object.assign(
    times.sort((a, b) => a - b),
    { cpu: cpu.sort((a, b) => a - b) },
  );
}

function store(): { service: DefaultSessionService; repository: InMemorySessionRepository } {
  const repository = new InMemorySessionRepository();
  return { repository, service: new DefaultSessionService(repository, { logger }) };
}

const loadAtStart = os.loadavg()[0]!;
const rows: Row[] = [];
const big = store();
const service = big.service;
await fill(big, 'big', EVENTS);
const queries = questions.slice(0, QUERIES);

const colds: number[] = [];
const coldCpu: number[] = [];
for (let i = 0; i < 5; i++) {
  const fresh = new Bm25Retriever({ sessionService: service });
  const c = process.cpuUsage();
  const t = performance.now();
  await fresh.retrieve({ sessionId: 'big', query: queries[i]! });
  colds.push(performance.now() - t);
  coldCpu.push(cpuMs(c));
  fresh.close();
}
colds.sort((a, b) => a - b);
coldCpu.sort((a, b) => a - b);
const retriever = new Bm25Retriever({ sessionService: service });
await retriever.retrieve({ sessionId: 'big', query: queries[0]! });
await timed((q) => retriever.retrieve({ sessionId: 'big', query: q }), queries.slice(0, 20));
const warm = await timed((q) => retriever.retrieve({ sessionId: 'big', query: q }), queries);
rows.push({
  contender: 'Bm25Retriever',
  cold: quantile(colds, 0.5),
  p50: quantile(warm, 0.5),
  p95: quantile(warm, 0.95),
  max: warm.at(-1)!,
  cpu: { cold: quantile(coldCpu, 0.5), p50: quantile(warm.cpu, 0.5), p95: quantile(warm.cpu, 0.95) },
});

// After each append: the index takes the new event (and re-indexes its predecessor) before searching.
let appended = 0;
const afterAppend = await timed(
  async (q) => {
    await service.appendMessage('big', Messages.user(`${q} (asked again ${appended++})`));
    return retriever.retrieve({ sessionId: 'big', query: q });
  },
  queries.slice(0, 100),
);
rows.push({
  contender: 'Bm25Retriever, one append before each query',
  cold: Number.NaN,
  p50: quantile(afterAppend, 0.5),
  p95: quantile(afterAppend, 0.95),
  max: afterAppend.at(-1)!,
  cpu: { cold: Number.NaN, p50: quantile(afterAppend.cpu, 0.5), p95: quantile(afterAppend.cpu, 0.95) },
});

await timed((q) => linearScan(service, 'big', q), queries.slice(0, 20));
const scan = await timed((q) => linearScan(service, 'big', q), queries);
rows.push({
  contender: 'naive linear scan (word overlap, every event)',
  cold: scan[0]!,
  p50: quantile(scan, 0.5),
  p95: quantile(scan, 0.95),
  max: scan.at(-1)!,
  cpu: { cold: scan.cpu[0]!, p50: quantile(scan.cpu, 0.5), p95: quantile(scan.cpu, 0.95) },
});
retriever.close();

// Memory: 100 sessions x 2,000 events, every index built. The in-memory repository hands out the events it
// holds, so the difference is the indexes alone (a SQL repository's rows would be copied into them too).
const SESSIONS = 100;
const PER_SESSION = 2000;
const many = store();
const memoryService = many.service;
for (let s = 0; s < SESSIONS; s++) await fill(many, `m${s}`, PER_SESSION, s * 37);
const heap = () => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
};
const beforeIndexes = heap();
const bounded = new Bm25Retriever({ sessionService: memoryService, maxIndexedSessions: SESSIONS });
const buildStart = performance.now();
for (let s = 0; s < SESSIONS; s++) await bounded.retrieve({ sessionId: `m${s}`, query: queries[s % queries.length]! });
const buildMs = performance.now() - buildStart;
const indexBytes = heap() - beforeIndexes;
// A durable repository hands out freshly decoded events, which the index then holds: measured on SQLite.
const sqlite = new SqliteSessionRepository({ path: ':memory:', logger });
const sqliteService = new DefaultSessionService(sqlite, { logger });
await fill({ service: sqliteService, repository: sqlite }, 'copy', PER_SESSION);
const logStart = heap();
const copies = [];
for (let i = 0; i < 10; i++) copies.push(await sqliteService.getEvents('copy', EventFilter.all()));
const copyBytesPerSession = (heap() - logStart) / copies.length;
await sqlite.close();
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const report = `# In-process recall: latency and memory

Generated by \`node --expose-gc --import tsx benchmarks/recall-latency.ts --events ${EVENTS} --queries ${QUERIES}\` on ${os.cpus().length} × ${
  os.cpus()[0]?.model.trim() ?? 'unknown CPU'
}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Text: ${source}.
Load average (1 min) when the latency runs started: ${loadAtStart.toFixed(1)} on ${os.cpus().length} cores (the machine is shared:
figures above 1 load per core are slowed by other work).

## Retrieval on one ${EVENTS.toLocaleString('en-US')}-event session

${queries.length} questions as queries, limit 20, all but the last 20 events archived, in-memory repository. "cold" is the
first query of a fresh retriever, which builds the index from the log (median of 5); p50/p95/max are measured after
20 warm-up queries. The linear scan reads the log and scores every event by word overlap on each query, as a search
without an index must. Wall time is what a caller waits; CPU time (user + system of this process, every thread) is
what the call itself costs, which is what the wall time comes down to on a core with nothing else to run.

| contender | cold first query (ms) | p50 (ms) | p95 (ms) | max (ms) | CPU: cold / p50 / p95 (ms) |
|---|---:|---:|---:|---:|---:|
${rows
  .map(
    (r) =>
      `| ${r.contender} | ${Number.isNaN(r.cold) ? '—' : ms(r.cold)} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} | ${
        Number.isNaN(r.cpu.cold) ? '—' : ms(r.cpu.cold)
      } / ${ms(r.cpu.p50)} / ${ms(r.cpu.p95)} |`,
  )
  .join('\n')}

## Index memory: ${SESSIONS} sessions × ${PER_SESSION.toLocaleString('en-US')} events

All ${SESSIONS} indexes built (\`maxIndexedSessions: ${SESSIONS}\`) in ${(buildMs / 1000).toFixed(1)} s: **${mb(indexBytes)} MB** of heap
(${mb(indexBytes / SESSIONS)} MB per session, ${((indexBytes / SESSIONS / PER_SESSION) | 0).toLocaleString('en-US')} bytes per event),
measured as the heap growth after a forced GC${gc === undefined ? ' (run with --expose-gc for a stable figure)' : ''}. The in-memory repository hands
the index the event objects it already holds; with SQLite, PostgreSQL or Redis the index keeps its own copy of each
session's events, about ${mb(copyBytesPerSession)} MB per ${PER_SESSION.toLocaleString('en-US')}-event session more. \`maxIndexedSessions\` bounds the total.
`;
mkdirSync('docs/benchmarks', { recursive: true });
writeFileSync('docs/benchmarks/recall-latency.md', report);
console.log(report);
