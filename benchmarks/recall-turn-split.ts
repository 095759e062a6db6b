// Where a SessionMemory turn with in-process recall (memory backend, Bm25Retriever) spends its CPU as the archive
// grows: the index search itself (SessionIndex.query: InvertedIndex's top-k ranking, which issue 27 lets grow with the
// corpus) and everything else in the turn (which must not grow). Same turn as benchmarks/recall-scaling.ts: the
// user's question appended, the prompt assembled with recall (40 hits, 2 neighbours), a model that answers at
// once, a 20-event sliding window compacted after every turn; LoCoMo turns and questions.
//   RECORDED_DIR=… node --conditions=session-compaction-source --import tsx benchmarks/recall-turn-split.ts \
//        [--sizes 1000,100000] [--turns 60]
import path from 'node:path';
import os from 'node:os';
import {
  Bm25Retriever,
  DefaultSessionService,
  InMemorySessionRepository,
  RepositoryRetriever,
  createDefaultLogger,
} from 'session-compaction';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';
import { fillArchive } from './support/fillArchive.js';
import { turnMemory } from './support/turnMemory.js';

const SIZES = arg('sizes', '1000,100000').split(',').map(Number);
const TURNS = Number(arg('turns', '60'));
const WARMUP = 5;
const WINDOW = 20;
const logger = createDefaultLogger({ silent: true });
const { source, turns, questions } = chatCorpus(
  process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json'),
);

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The index a Bm25Retriever holds for one session (private: this script measures inside it). */
type QueryFn = (...args: unknown[]) => unknown;
function sessionIndexOf(retriever: RepositoryRetriever, id: string): { query: QueryFn } {
  const fallback = (retriever as unknown as { fallback: Bm25Retriever }).fallback;
  return (fallback as unknown as { indexes: Map<string, { query: QueryFn }> }).indexes.get(id)!;
}

async function measure(size: number): Promise<{ turn: number; search: number; rest: number }> {
  const repository = new InMemorySessionRepository();
  const service = new DefaultSessionService(repository, { logger });
  const retriever = new RepositoryRetriever({ repository, sessionService: service });
  const memory = turnMemory(service, logger, WINDOW, { retriever });
  const id = 'split';
  await fillArchive(service, repository, id, size, WINDOW, turns);
  const turn = (i: number) =>
    memory.call({ sessionId: id, userId: 'bench', messages: [{ role: 'user', content: questions[i % questions.length]! }] });
  for (let i = 0; i < WARMUP; i++) await turn(i);
  // The search is synchronous: CPU time around it is its own.
  let inSearch = 0;
  const index = sessionIndexOf(retriever, id);
  const query = index.query.bind(index);
  index.query = (...args: unknown[]) => {
    const c = process.cpuUsage();
    try {
      return query(...args);
    } finally {
      inSearch += cpuMs(c);
    }
  };
  const turnCpu: number[] = [];
  const searchCpu: number[] = [];
  const restCpu: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    inSearch = 0;
    const c = process.cpuUsage();
    await turn(i + WARMUP);
    const used = cpuMs(c);
    turnCpu.push(used);
    searchCpu.push(inSearch);
    restCpu.push(used - inSearch);
  }
  return { turn: p50(turnCpu), search: p50(searchCpu), rest: p50(restCpu) };
}

const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
console.log(
  `${TURNS} turns after ${WARMUP}, ${source}, Node ${process.version}, load (1 min) ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
);
console.log('| archived | turn CPU p50 (ms) | index search CPU p50 (ms) | rest of the turn CPU p50 (ms) |');
console.log('|---:|---:|---:|---:|');
const rows: { size: number; turn: number; search: number; rest: number }[] = [];
for (const size of SIZES) {
  const row = { size, ...(await measure(size)) };
  rows.push(row);
  console.log(`| ${size.toLocaleString('en-US')} | ${ms(row.turn)} | ${ms(row.search)} | ${ms(row.rest)} |`);
}
if (rows.length >= 2) {
  const [small, large] = [rows[0]!, rows[rows.length - 1]!];
  console.log(
    `large ÷ small: turn ${(large.turn / small.turn).toFixed(2)}×, search ${(large.search / small.search).toFixed(1)}×, rest ${(large.rest / small.rest).toFixed(2)}×`,
  );
}
