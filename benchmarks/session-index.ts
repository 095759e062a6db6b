// The in-process recall index alone (SessionIndex, what Bm25Retriever holds per session): heap held, build time
// and query CPU at each size, for LoCoMo questions and for long queries (20 LoCoMo turns pasted as one message,
// about 380 words). Run it on two commits to compare index implementations; nothing is written.
//   RECORDED_DIR=… node --expose-gc --conditions=session-compaction-source --import tsx benchmarks/session-index.ts \
//        [--sizes 1000,100000] [--queries 100]
import os from 'node:os';
import path from 'node:path';
import { SessionEvent } from 'session-compaction';
import { SessionIndex } from '../src/recall/SessionIndex.js';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';

const SIZES = arg('sizes', '1000,100000').split(',').map(Number);
const QUERIES = Number(arg('queries', '100'));
const WARMUP = 20;
const { source, turns, questions } = chatCorpus(
  process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json'),
);
const longQueries = Array.from({ length: 50 }, (_, i) =>
  turns
    .slice(i * 20, i * 20 + 20)
    .map((m) => (m.type === 'tool' ? '' : (m.text ?? '')))
    .join(' '),
);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

/** CPU milliseconds (user + system) of `f` for each of QUERIES queries after WARMUP: p50 and p95. */
function cpu(queries: readonly string[], f: (q: string) => unknown): { p50: number; p95: number } {
  for (let i = 0; i < WARMUP; i++) f(queries[i % queries.length]!);
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const start = process.cpuUsage();
    f(queries[(i + WARMUP) % queries.length]!);
    const used = process.cpuUsage(start);
    times.push((used.user + used.system) / 1000);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(QUERIES / 2)]!, p95: times[Math.min(QUERIES - 1, Math.floor(QUERIES * 0.95))]! };
}

const f = (n: number) => (n < 10 ? n.toFixed(3) : n.toFixed(1));
console.log(`${source}; Node ${process.version}; load (1 min) ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);
console.log(
  '| events | heap held (MB) | build (ms) | questions, 40 hits: CPU p50 / p95 (ms) | 200 hits | long queries, 200 hits |',
);
console.log('|---:|---:|---:|---:|---:|---:|');
for (const size of SIZES) {
  const events = Array.from({ length: size }, (_, i) =>
    SessionEvent.create({ sessionId: 'bench', id: `e${i}`, message: turns[i % turns.length]! }).asArchived(),
  );
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const start = performance.now();
  const index = new SessionIndex('bench', 'bench', 0);
  index.append(events, { version: size, purgeGeneration: 0 });
  const build = performance.now() - start;
  gc();
  gc();
  const heap = (process.memoryUsage().heapUsed - before) / 1e6;
  const archived = (e: SessionEvent) => e.archived;
  const q40 = cpu(questions, (q) => index.query(q, archived, 40));
  const q200 = cpu(questions, (q) => index.query(q, archived, 200));
  const long = cpu(longQueries, (q) => index.query(q, archived, 200));
  console.log(
    `| ${size.toLocaleString('en-US')} | ${heap.toFixed(1)} | ${build.toFixed(0)} | ${f(q40.p50)} / ${f(q40.p95)} | ${f(q200.p50)} / ${f(q200.p95)} | ${f(long.p50)} / ${f(long.p95)} |`,
  );
}
