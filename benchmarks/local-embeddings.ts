// Semantic recall without a hosted model: what `localEmbeddings` (transformers.js on ONNX Runtime, CPU) costs to
// embed a 10,000-event session and to answer a query on it, side by side with BM25, with the same EmbeddingRetriever
// over a model-free hashed embedding (the retriever's own cost) and with the hybrid of BM25 and the local model.
//
//   npm run bench:local-embeddings -- [--events 10000] [--queries 100]
//   (node --conditions=session-compaction-source --import tsx benchmarks/local-embeddings.ts [...])
//
// No pretrained model can be fetched on this machine (npm registry only), so the models are written by the
// benchmark (test/support/onnxEmbeddingModel.ts), with seeded random weights over the corpus's vocabulary:
// - "lookup": a 384-dimension embedding table and nothing else — the fixed cost of the pipeline (tokenizer, ONNX
//   Runtime session, mean pooling, normalisation);
// - "MLP stand-in": the same table followed by 6 residual feed-forward layers of 384→1536→384, the feed-forward
//   compute of all-MiniLM-L6-v2 (6 layers, hidden 384, intermediate 1536) without its attention (about two thirds
//   of its multiply-adds at chat-turn lengths): a lower bound on what a small sentence-embedding model costs here.
// Their rankings mean nothing (random weights): only time is measured. Text: LoCoMo turns and questions
// ($RECORDED_DIR or $LOCOMO), else a seeded synthetic chat. Writes docs/benchmarks/local-embeddings.md and prints it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  Bm25Retriever,
  CompactionResult,
  DefaultSessionService,
  EmbeddingRetriever,
  HybridRetriever,
  InMemorySessionRepository,
  SessionEvent,
  createDefaultLogger,
  type EmbedFunction,
  type Retriever,
} from 'session-compaction';
import { localEmbeddings } from 'session-compaction/transformers';
import { writeEmbeddingModel } from '../test/support/onnxEmbeddingModel.js';
import { bagOfWordsVector } from '../test/support/fakeOpenAIServer.js';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';

const EVENTS = Number(arg('events', '10000'));
const QUERIES = Number(arg('queries', '100'));
const DIMENSION = 384;
const LOCOMO = process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json');
const logger = createDefaultLogger({ silent: true });
const { source, turns, questions } = chatCorpus(LOCOMO);
const queries = questions.slice(0, QUERIES);
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

// ---- the models, over every word the tokenizer will see (the pre-tokenizer splits \w+ and punctuation runs) ----
const words = new Set<string>();
for (const text of [...turns.map((t) => ('text' in t ? (t.text ?? '') : '')), ...questions]) {
  for (const w of text.toLowerCase().match(/\w+|[^\w\s]+/g) ?? []) words.add(w);
}
let seed = 42;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
const vocab = Object.fromEntries([...words].map((w) => [w, Array.from({ length: DIMENSION }, random)]));
const modelsDir = mkdtempSync(path.join(os.tmpdir(), 'local-embeddings-bench-'));
const lookupModel = writeEmbeddingModel(path.join(modelsDir, 'lookup'), { vocab });
const mlpModel = writeEmbeddingModel(path.join(modelsDir, 'mlp'), { vocab, layers: { count: 6, hidden: 4 * DIMENSION } });

// ---- a 10,000-event session, all but the last 20 archived (recall searches the archive) ----
const repository = new InMemorySessionRepository();
const service = new DefaultSessionService(repository, { logger });
await service.create({ id: 'big', userId: 'bench' });
await repository.appendEvents(
  'big',
  Array.from({ length: EVENTS }, (_, i) =>
    SessionEvent.create({ sessionId: 'big', id: `e${i}`, message: turns[i % turns.length]! }),
  ),
);
await service.compact(
  'big',
  () => true,
  async (r) => new CompactionResult(r.events.slice(-20), r.events.slice(0, -20), 0),
);

const cpuMs = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

interface Row {
  contender: string;
  /** The first query: every event embedded (or indexed), then the query answered. */
  coldMs: number;
  coldCpuMs: number;
  p50: number;
  p95: number;
  cpuP50: number;
  cpuP95: number;
}

async function measure(contender: string, retriever: Retriever): Promise<Row> {
  const request = (query: string) => ({ sessionId: 'big', query, limit: 20 });
  let c = process.cpuUsage();
  let t = performance.now();
  await retriever.retrieve(request(queries[0]!));
  const coldMs = performance.now() - t;
  const coldCpuMs = cpuMs(c);
  for (const q of queries.slice(0, 10)) await retriever.retrieve(request(q));
  const wall: number[] = [];
  const cpu: number[] = [];
  for (const q of queries) {
    c = process.cpuUsage();
    t = performance.now();
    await retriever.retrieve(request(q));
    wall.push(performance.now() - t);
    cpu.push(cpuMs(c));
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const row = {
    contender,
    coldMs,
    coldCpuMs,
    p50: quantile(wall, 0.5),
    p95: quantile(wall, 0.95),
    cpuP50: quantile(cpu, 0.5),
    cpuP95: quantile(cpu, 0.95),
  };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
}

const hashed: EmbedFunction = async (texts) => texts.map((t) => bagOfWordsVector(t, DIMENSION));
const embedding = (embed: EmbedFunction) => new EmbeddingRetriever({ sessionService: service, embed });
const lookup = localEmbeddings({ modelPath: lookupModel });
const mlp = localEmbeddings({ modelPath: mlpModel });
// Load both models before timing: the load (a one-off per process) is reported on its own.
let loadStart = performance.now();
await lookup(['warm up']);
const lookupLoadMs = performance.now() - loadStart;
loadStart = performance.now();
await mlp(['warm up']);
const mlpLoadMs = performance.now() - loadStart;

const loadAtStart = os.loadavg();
const rows: Row[] = [];
rows.push(await measure('Bm25Retriever', new Bm25Retriever({ sessionService: service })));
rows.push(await measure('EmbeddingRetriever, hashed bag of words (no model)', embedding(hashed)));
rows.push(await measure('EmbeddingRetriever, localEmbeddings "lookup"', embedding(lookup)));
const mlpRetriever = embedding(mlp);
rows.push(await measure('EmbeddingRetriever, localEmbeddings "MLP stand-in"', mlpRetriever));
// The hybrid shares the stand-in's warm vector cache: its cold figure is BM25's index build plus one query.
rows.push(
  await measure(
    'HybridRetriever (BM25 + "MLP stand-in", RRF)',
    new HybridRetriever({ retrievers: [new Bm25Retriever({ sessionService: service }), mlpRetriever] }),
  ),
);
// One query's embedding alone (what the model adds to each recall).
const queryEmbed: number[] = [];
for (const q of queries) {
  const t = performance.now();
  await mlp([q]);
  queryEmbed.push(performance.now() - t);
}
queryEmbed.sort((a, b) => a - b);
const loadAtEnd = os.loadavg();
await lookup.dispose();
await mlp.dispose();
rmSync(modelsDir, { recursive: true, force: true });

const f = (n: number, digits = 1) => n.toFixed(digits);
const perSecond = (ms: number) => Math.round((EVENTS - 20) / (ms / 1000)).toLocaleString('en-US');
const report = `# Local embeddings: throughput and recall latency

Generated by \`node --import tsx --conditions=session-compaction-source benchmarks/local-embeddings.ts --events ${EVENTS} --queries ${QUERIES}\`
on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${new Date()
  .toISOString()
  .slice(0, 10)}. Text: ${source}. Load average (1/5/15 min) at the start of the timed part: ${loadAtStart
  .map((l) => f(l))
  .join(' / ')}; at the end: ${loadAtEnd.map((l) => f(l)).join(' / ')} on ${os.cpus().length} cores — a shared
machine: wall times are inflated by other work, CPU times (this process, every thread, ONNX Runtime's included) less so.

The models are written by the benchmark with random weights (no pretrained model can be fetched here): "lookup" is a
${DIMENSION}-dimension embedding table alone (the pipeline's fixed cost), "MLP stand-in" adds 6 residual feed-forward
layers ${DIMENSION}→${4 * DIMENSION}→${DIMENSION} (all-MiniLM-L6-v2's feed-forward compute, without its attention): a
lower bound for a small real model. Model load (first call, once per process): lookup ${f(lookupLoadMs, 0)} ms,
MLP stand-in ${f(mlpLoadMs, 0)} ms. Vocabulary: ${words.size.toLocaleString('en-US')} words.

## One ${EVENTS.toLocaleString('en-US')}-event session (${(EVENTS - 20).toLocaleString('en-US')} archived), ${queries.length} questions, limit 20

"cold" is the first query of a fresh retriever: every archived event embedded (batches of 128 texts, 32 per forward
pass) or indexed, then the query answered. p50/p95 after 10 warm-up queries, every event vector cached.

| contender | cold, wall | cold, CPU | events embedded per second (cold, wall) | warm p50 | warm p95 | warm CPU p50 | warm CPU p95 |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows
  .map(
    (r) =>
      `| ${r.contender} | ${f(r.coldMs, 0)} ms | ${f(r.coldCpuMs, 0)} ms | ${
        r.contender.startsWith('EmbeddingRetriever') ? perSecond(r.coldMs) : '—'
      } | ${f(r.p50, 2)} ms | ${f(r.p95, 2)} ms | ${f(r.cpuP50, 2)} ms | ${f(r.cpuP95, 2)} ms |`,
  )
  .join('\n')}

One question embedded by the MLP stand-in alone: p50 ${f(quantile(queryEmbed, 0.5), 2)} ms, p95 ${f(
  quantile(queryEmbed, 0.95),
  2,
)} ms (wall).
`;
const out = path.resolve('docs/benchmarks/local-embeddings.md');
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, report);
process.stdout.write(report);
