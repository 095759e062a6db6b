// Token estimator speed and accuracy: TiktokenTokenCountEstimator (linear-time) against js-tiktoken's own
// encode() (exact, but quadratic on long runs without whitespace), o200k_base, in one process.
//
//   npx tsx benchmarks/estimator.ts
//
// js-tiktoken is measured on growing prefixes (5 KB, 10 KB, 20 KB …); when the measured growth predicts that the
// full input would take more than 30 s, the full run is skipped and the largest prefix is compared instead.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { TiktokenTokenCountEstimator } from 'session-compaction';
import { mulberry32 } from '../src/bench/prng.js';

const KB = 1024;
const JS_TIKTOKEN_BUDGET_MS = 30_000;
const FIRST_PREFIX = 5 * KB;

function randomFrom(alphabet: string, length: number, seed: number): string {
  const next = mulberry32(seed);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(next() * alphabet.length)];
  return out;
}

/**
 * English prose: the *.txt files of PROSE_DIR when set (the published figures used five English design
 * documents), otherwise this repository's own Markdown. Repeated up to `size` characters.
 */
function prose(size: number): { text: string; corpus: string; distinctChars: number } {
  const shared = process.env.PROSE_DIR ? pathToFileURL(`${path.resolve(process.env.PROSE_DIR)}/`) : null;
  let parts: string[];
  let corpus: string;
  if (shared !== null && existsSync(shared)) {
    const names = readdirSync(shared)
      .filter((n) => n.endsWith('.txt'))
      .sort();
    parts = names.map((n) => readFileSync(new URL(n, shared), 'utf8'));
    corpus = `PROSE_DIR/*.txt (${names.length} English documents)`;
  } else {
    const root = new URL('../', import.meta.url);
    const docs = new URL('docs/', root);
    const names = existsSync(docs) ? readdirSync(docs).filter((n) => n.endsWith('.md')) : [];
    parts = [
      readFileSync(new URL('README.md', root), 'utf8'),
      ...names.sort().map((n) => readFileSync(new URL(n, docs), 'utf8')),
    ];
    corpus = `README.md + docs/*.md`;
  }
  const base = parts.join('\n\n');
  let text = base;
  while (text.length < size) text += '\n\n' + base;
  return { text: text.slice(0, size), corpus, distinctChars: Math.min(base.length, size) };
}

/**
 * CPU time (user + system) of this process, not wall time: on a shared machine other processes inflate wall
 * time but not this. On an idle machine the two are close (the work is single-threaded).
 */
function time<T>(fn: () => T): { ms: number; wallMs: number; value: T } {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(cpu);
  return { ms: (used.user + used.system) / 1000, wallMs: performance.now() - wall, value };
}

interface JsMeasurement {
  size: number;
  ms: number;
  tokens: number;
}

interface JsOutcome {
  full: JsMeasurement | null;
  largest: JsMeasurement;
  predictedFullMs: number;
  exponent: number;
}

/** Measures js-tiktoken on prefixes 5 KB, 10 KB, 20 KB, … and stops before a run predicted to exceed the budget. */
function measureJsTiktoken(encoder: Tiktoken, text: string): JsOutcome {
  const points: JsMeasurement[] = [];
  let size = Math.min(FIRST_PREFIX, text.length);
  // Until two points give a measured exponent, assume the quadratic worst case.
  let exponent = 2;
  for (;;) {
    const { ms, value } = time(() => encoder.encode(text.slice(0, size), [], []).length);
    points.push({ size, ms, tokens: value });
    if (size === text.length) return { full: points.at(-1)!, largest: points.at(-1)!, predictedFullMs: ms, exponent };
    if (points.length >= 2) {
      const [a, b] = points.slice(-2) as [JsMeasurement, JsMeasurement];
      // Below a few ms the timer noise dominates: keep the worst case.
      if (a.ms >= 5) exponent = Math.min(3, Math.max(1, Math.log(b.ms / a.ms) / Math.log(b.size / a.size)));
    }
    const predictedFullMs = ms * Math.pow(text.length / size, exponent);
    const nextSize = Math.min(size * 2, text.length);
    const predictedNextMs = ms * Math.pow(nextSize / size, exponent);
    if (predictedFullMs > JS_TIKTOKEN_BUDGET_MS && predictedNextMs > JS_TIKTOKEN_BUDGET_MS) {
      return { full: null, largest: points.at(-1)!, predictedFullMs, exponent };
    }
    if (nextSize === text.length && predictedFullMs > JS_TIKTOKEN_BUDGET_MS) {
      return { full: null, largest: points.at(-1)!, predictedFullMs, exponent };
    }
    size = nextSize;
  }
}

function fmtMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

function fmtSize(chars: number): string {
  return chars >= KB * KB ? `${(chars / KB / KB).toFixed(0)} MB` : `${(chars / KB).toFixed(0)} KB`;
}

function diff(ours: number, exact: number): string {
  if (ours === exact) return '0 (exact)';
  const d = ours - exact;
  return `${d > 0 ? '+' : ''}${d} (${((100 * d) / exact).toFixed(2)}%)`;
}

const inputs: { name: string; text: string; note?: string }[] = [];
const proseInput = prose(KB * KB);
inputs.push({ name: 'prose', text: proseInput.text, note: proseInput.corpus });
inputs.push({ name: 'one letter (`a` × n)', text: 'a'.repeat(100 * KB) });
inputs.push({
  name: 'random base64',
  text: randomFrom('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 100 * KB, 1),
});
inputs.push({ name: 'random lowercase letters', text: randomFrom('abcdefghijklmnopqrstuvwxyz', 100 * KB, 2) });
inputs.push({ name: '`qqqqqqab` repeated', text: 'qqqqqqab'.repeat((100 * KB) / 8) });

const ours = new TiktokenTokenCountEstimator();
const oursLoad = time(() => ours.estimate('warm-up: loads the o200k_base rank table'));
const jsLoad = time(() => new Tiktoken(o200kBase));
const encoder = jsLoad.value;

console.log(`# Token estimator benchmark (o200k_base)\n`);
console.log(
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.platform()} ${os.arch()}, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)} at start`,
);
console.log(
  'Times are CPU time of this process (user + system), which other load on the machine inflates far less than wall time.',
);
console.log(
  `One run per cell, each input tokenised for the first time (repeats *within* an input hit the piece cache, as in real traffic).`,
);
console.log(`Rank table load: ours ${fmtMs(oursLoad.ms)} (once per process), js-tiktoken new Tiktoken() ${fmtMs(jsLoad.ms)}.`);
console.log(`Prose corpus: ${proseInput.corpus}, ${proseInput.distinctChars} distinct characters repeated to 1 MB.\n`);

const rows: string[] = [];
const footnotes: string[] = [];
for (const input of inputs) {
  const mine = time(() => ours.estimate(input.text));
  const js = measureJsTiktoken(encoder, input.text);
  const size = fmtSize(input.text.length);
  if (js.full !== null) {
    rows.push(
      `| ${input.name} | ${size} | ${fmtMs(mine.ms)} | ${mine.value} | ${fmtMs(js.full.ms)} | ${js.full.tokens} | ${diff(mine.value, js.full.tokens)} |`,
    );
    continue;
  }
  // Compare the counts on the largest prefix js-tiktoken could do in budget.
  const prefix = input.text.slice(0, js.largest.size);
  const minePrefix = time(() => new TiktokenTokenCountEstimator().estimate(prefix));
  rows.push(
    `| ${input.name} | ${size} | ${fmtMs(mine.ms)} | ${mine.value} | skipped: ≈ ${fmtMs(js.predictedFullMs)} predicted¹ | — | — |`,
  );
  rows.push(
    `| ${input.name}, first ${fmtSize(js.largest.size)} | ${fmtSize(js.largest.size)} | ${fmtMs(minePrefix.ms)}² | ${minePrefix.value} | ${fmtMs(js.largest.ms)} | ${js.largest.tokens} | ${diff(minePrefix.value, js.largest.tokens)} |`,
  );
  footnotes.push(
    `${input.name}: js-tiktoken took ${fmtMs(js.largest.ms)} on ${fmtSize(js.largest.size)}; growth exponent ${js.exponent.toFixed(2)} (measured between the last two prefixes, clamped to [1, 3]) ⇒ ≈ ${fmtMs(js.predictedFullMs)} for ${size} (extrapolated, not measured).`,
  );
}

console.log('| input | size | ours: time | ours: tokens | js-tiktoken encode(): time | js-tiktoken: tokens | ours − exact |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
if (footnotes.length > 0) {
  console.log(`\n¹ Skipped because the predicted time exceeds ${JS_TIKTOKEN_BUDGET_MS / 1000} s:`);
  for (const f of footnotes) console.log(`- ${f}`);
  console.log(`² The prefix is a substring of text already estimated, so this run is partly served from the piece cache.`);
}
