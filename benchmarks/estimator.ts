// Token counting, side by side in one process: TiktokenTokenCountEstimator (ours) against js-tiktoken's
// encode() (the exact reference) and gpt-tokenizer's countTokens() (the fastest exact counter we know of on npm).
//
//   RECORDED_DIR=/path/to/recorded npm run bench:estimator                # o200k_base and cl100k_base, 5 repetitions
//   RECORDED_DIR=/path/to/recorded npm run bench:estimator -- --reps 9 --encodings o200k_base
//   (that is: node --expose-gc --import tsx benchmarks/estimator.ts [--reps 5] [--encodings …] [--budget-ms 10000])
//
// (a) prose: every turn of the LoCoMo conversations ($RECORDED_DIR/locomo/locomo10.json);
// (b) code and tool output: every message and tool-call argument of the mini-swe-agent recordings
//     ($RECORDED_DIR/mini-swe-agent-deepseek/output/**/*.traj.json).
// Each message is counted on its own, as the library counts events. Per repetition every counter starts with
// empty piece caches (ours and gpt-tokenizer's; js-tiktoken has none), so repeats across repetitions are not
// free; repeats within the corpus are, as in real traffic. Counts must equal js-tiktoken's for every message.
// (c) adversarial input: runs without whitespace or punctuation, digit runs, a whitespace run, random
//     code points. Ours at 100, 200 and 400 KB (doubling the input should double the time); js-tiktoken
//     and gpt-tokenizer on growing prefixes until one would exceed the time budget (both are quadratic on runs).
//
// Times are CPU time of this process (user + system): other load on a shared machine inflates it far less
// than wall time. Ratios compare counters measured in the same run, interleaved repetition by repetition.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { TiktokenTokenCountEstimator } from 'session-compaction';
import type { TiktokenEncodingName } from 'session-compaction/spi';
import { counterFor } from '../src/tokens/TiktokenTokenCountEstimator.js';
import { preTokenizerFor } from '../src/tokens/preTokenizers.js';

import { arg } from './support/args.js';

type Encoding = Extract<TiktokenEncodingName, 'o200k_base' | 'cl100k_base'>;

const REPS = Number(arg('reps', '5'));
const ENCODINGS = arg('encodings', 'o200k_base,cl100k_base').split(',') as Encoding[];
const BUDGET_MS = Number(arg('budget-ms', '10000'));
const KB = 1024;

/** CPU time of this process in ms (user + system) and the value. */
function cpu<T>(fn: () => T): { ms: number; value: T } {
  const start = process.cpuUsage();
  const value = fn();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, value };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function fmtMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  return `${ms.toFixed(1)} ms`;
}

const fmtInt = (n: number): string => n.toLocaleString('en-US');

// ---------------------------------------------------------------------------------------------------------
// Data

const recorded = process.env.RECORDED_DIR ? path.resolve(process.env.RECORDED_DIR) : null;

interface Corpus {
  name: string;
  source: string;
  messages: string[];
  bytes: number;
}

function corpus(name: string, source: string, messages: string[]): Corpus {
  const nonEmpty = messages.filter((m) => m.length > 0);
  return { name, source, messages: nonEmpty, bytes: nonEmpty.reduce((n, m) => n + Buffer.byteLength(m, 'utf8'), 0) };
}

interface LocomoTurn {
  text?: string;
  blip_caption?: string;
}

function locomo(dir: string): Corpus | null {
  const file = path.join(dir, 'locomo/locomo10.json');
  if (!existsSync(file)) return null;
  const samples = JSON.parse(readFileSync(file, 'utf8')) as { conversation: Record<string, unknown> }[];
  const messages: string[] = [];
  for (const { conversation } of samples) {
    for (let n = 1; `session_${n}_date_time` in conversation || `session_${n}` in conversation; n++) {
      for (const turn of (conversation[`session_${n}`] as LocomoTurn[] | undefined) ?? []) {
        const text = turn.text ?? '';
        messages.push(turn.blip_caption ? `${text} [shares image: ${turn.blip_caption}]` : text);
      }
    }
  }
  return corpus('(a) prose', 'LoCoMo, all 10 conversations (every turn)', messages);
}

interface TrajectoryMessage {
  content?: unknown;
  tool_calls?: { function?: { arguments?: unknown } }[];
}

function trajectories(dir: string, found: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) trajectories(full, found);
    else if (name.endsWith('.traj.json')) found.push(full);
  }
  return found;
}

function miniSweAgent(dir: string): Corpus | null {
  const root = path.join(dir, 'mini-swe-agent-deepseek/output');
  if (!existsSync(root)) return null;
  const files = trajectories(root);
  const messages: string[] = [];
  for (const file of files) {
    const { messages: trajectory } = JSON.parse(readFileSync(file, 'utf8')) as { messages: TrajectoryMessage[] };
    for (const message of trajectory) {
      if (typeof message.content === 'string') messages.push(message.content);
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        if (typeof call.function?.arguments === 'string') messages.push(call.function.arguments);
      }
    }
  }
  return corpus(
    '(b) code and tool output',
    `mini-swe-agent + DeepSeek, ${files.length} runs (messages and tool-call arguments)`,
    messages,
  );
}

// ---------------------------------------------------------------------------------------------------------
// Counters

interface Counter {
  name: string;
  count(text: string): number;
  /** Empties the counter's piece caches, so that a repetition starts cold. */
  reset(): void;
}

interface Loaded {
  counters: Counter[];
  load: { name: string; ms: number; retainedMb: number | null }[];
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Memory (JS heap + array buffers) retained by what `create` builds, when --expose-gc allows measuring it. */
function retained<T>(create: () => T): { value: T; ms: number; mb: number | null } {
  gc?.();
  const before = process.memoryUsage();
  const { ms, value } = cpu(create);
  gc?.();
  const after = process.memoryUsage();
  const mb = gc ? (after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers) / (1024 * 1024) : null;
  return { value, ms, mb };
}

const require = createRequire(import.meta.url);

function ranksOf(encoding: Encoding): TiktokenBPE {
  const loaded = require(`js-tiktoken/ranks/${encoding}`) as TiktokenBPE | { default: TiktokenBPE };
  return 'default' in loaded ? loaded.default : loaded;
}

interface GptTokenizer {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
  clearMergeCache(): void;
}

async function loadCounters(encoding: Encoding): Promise<Loaded> {
  const bpe = ranksOf(encoding);
  const ours = new TiktokenTokenCountEstimator({ encoding });
  const oursLoad = retained(() => counterFor(encoding));
  const jsLoad = retained(() => new Tiktoken(bpe));
  const gptStart = process.cpuUsage();
  gc?.();
  const gptBefore = process.memoryUsage();
  const gpt = (await import(`gpt-tokenizer/encoding/${encoding}`)) as GptTokenizer;
  gpt.countTokens('warm up', { disallowedSpecial: new Set() });
  gc?.();
  const gptAfter = process.memoryUsage();
  const gptUsed = process.cpuUsage(gptStart);
  // Special-token strings count as plain text in all three (js-tiktoken: encode(text, [], [])).
  const plain = { disallowedSpecial: new Set<string>() };
  const jsTiktoken = jsLoad.value;
  return {
    counters: [
      { name: 'ours', count: (t) => ours.estimate(t), reset: () => oursLoad.value.clearCache() },
      { name: 'js-tiktoken', count: (t) => jsTiktoken.encode(t, [], []).length, reset: () => undefined },
      { name: 'gpt-tokenizer', count: (t) => gpt.countTokens(t, plain), reset: () => gpt.clearMergeCache() },
    ],
    load: [
      { name: 'ours', ms: oursLoad.ms, retainedMb: oursLoad.mb },
      { name: 'js-tiktoken', ms: jsLoad.ms, retainedMb: jsLoad.mb },
      {
        name: 'gpt-tokenizer',
        ms: (gptUsed.user + gptUsed.system) / 1000,
        retainedMb: gc
          ? (gptAfter.heapUsed + gptAfter.arrayBuffers - gptBefore.heapUsed - gptBefore.arrayBuffers) / (1024 * 1024)
          : null,
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------
// (a), (b): ordinary text

interface OrdinaryResult {
  corpus: Corpus;
  encoding: Encoding;
  times: Map<string, number[]>;
  totals: Map<string, number>;
  mismatches: Map<string, number>;
}

function countAll(counter: Counter, messages: string[]): number {
  let total = 0;
  for (const m of messages) total += counter.count(m);
  return total;
}

function ordinary(text: Corpus, encoding: Encoding, counters: Counter[]): OrdinaryResult {
  const reference = counters.find((c) => c.name === 'js-tiktoken')!;
  const totals = new Map<string, number>();
  const mismatches = new Map<string, number>();
  // Exactness, message by message, before any timing.
  const expected = text.messages.map((m) => reference.count(m));
  for (const counter of counters) {
    counter.reset();
    let total = 0;
    let wrong = 0;
    text.messages.forEach((m, i) => {
      const n = counter.count(m);
      total += n;
      if (n !== expected[i]) wrong++;
    });
    totals.set(counter.name, total);
    mismatches.set(counter.name, wrong);
  }
  const times = new Map<string, number[]>(counters.map((c) => [c.name, []]));
  for (let rep = 0; rep < REPS; rep++) {
    // Rotate the order so that no counter always runs first (JIT, caches, load drift).
    const order = counters.map((_, i) => counters[(i + rep) % counters.length]!);
    for (const counter of order) {
      counter.reset();
      times.get(counter.name)!.push(cpu(() => countAll(counter, text.messages)).ms);
    }
  }
  return { corpus: text, encoding, times, totals, mismatches };
}

function printOrdinary(results: OrdinaryResult[]): void {
  console.log(
    '| text | encoding | counter | tokens | differing messages | p50 time | MB/s | M tokens/s | ÷ js-tiktoken time | ours ÷ this |',
  );
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const jsMs = median(r.times.get('js-tiktoken')!);
    const oursMs = median(r.times.get('ours')!);
    for (const [name, times] of r.times) {
      const ms = median(times);
      const tokens = r.totals.get(name)!;
      console.log(
        `| ${r.corpus.name} | ${r.encoding} | ${name} | ${fmtInt(tokens)} | ${r.mismatches.get(name)} | ${fmtMs(ms)} | ${(
          r.corpus.bytes /
          1e6 /
          (ms / 1000)
        ).toFixed(
          1,
        )} | ${(tokens / 1e6 / (ms / 1000)).toFixed(2)} | ${(ms / jsMs).toFixed(2)} (${(jsMs / ms).toFixed(2)}× faster) | ${(
          oursMs / ms
        ).toFixed(2)} |`,
      );
    }
  }
}

/** Splitting into pieces alone: our scanner against the encoding's regex (what js-tiktoken and gpt-tokenizer run). */
function preTokenizing(text: Corpus, encoding: Encoding): { scanner: number; regex: number; pieces: number } {
  const pattern = ranksOf(encoding).pat_str;
  const scanner = preTokenizerFor(pattern)!;
  const regex = new RegExp(pattern, 'gu');
  const scan = (): number => {
    let pieces = 0;
    for (const m of text.messages) for (let start = 0; start < m.length; pieces++) start = scanner(m, start);
    return pieces;
  };
  const match = (): number => {
    let pieces = 0;
    for (const m of text.messages) for (const piece of m.matchAll(regex)) pieces += piece[0].length > 0 ? 1 : 0;
    return pieces;
  };
  const pieces = scan();
  if (match() !== pieces) throw new Error(`the scanner and the regex split ${text.name} differently`);
  const times = { scanner: [] as number[], regex: [] as number[] };
  for (let rep = 0; rep < REPS; rep++) {
    times.scanner.push(cpu(scan).ms);
    times.regex.push(cpu(match).ms);
  }
  return { scanner: median(times.scanner), regex: median(times.regex), pieces };
}

// ---------------------------------------------------------------------------------------------------------
// (c): adversarial text

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomFrom(alphabet: string, length: number, seed: number): string {
  const next = random(seed);
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

function randomCodePoints(length: number, seed: number): string {
  const next = random(seed);
  let s = '';
  while (s.length < length) {
    const c = Math.floor(next() * 0x110000);
    if (c < 0xd800 || c > 0xdfff) s += String.fromCodePoint(c);
  }
  return s.slice(0, length);
}

const ADVERSARIAL: { name: string; make: (length: number) => string }[] = [
  { name: 'one letter (`a` × n)', make: (n) => 'a'.repeat(n) },
  { name: 'random lowercase letters', make: (n) => randomFrom('abcdefghijklmnopqrstuvwxyz', n, 2) },
  { name: 'random base64', make: (n) => randomFrom('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', n, 1) },
  { name: 'digits (`7` × n)', make: (n) => '7'.repeat(n) },
  { name: 'spaces (` ` × n, then `x`)', make: (n) => ' '.repeat(n - 1) + 'x' },
  { name: 'random whitespace (space, tab, CR, LF)', make: (n) => randomFrom(' \t\r\n', n, 4) },
  { name: 'random code points', make: (n) => randomCodePoints(n, 5) },
];

const OUR_SIZES = [100 * KB, 200 * KB, 400 * KB];
/** Below this, timer and scheduling noise swamp a growth exponent. */
const MEASURABLE_MS = 20;
const FIRST_PREFIX = 2 * KB;

interface Growth {
  size: number;
  ms: number;
  tokens: number;
}

/** Prefixes 2 KB, 4 KB, … up to `max`, stopping before one predicted (from the measured growth) to exceed the budget. */
function grow(counter: Counter, text: string, max: number): { points: Growth[]; exponent: number } {
  const points: Growth[] = [];
  let exponent = 2; // the worst case until two points measure it
  for (let size = FIRST_PREFIX; size <= max; size *= 2) {
    counter.reset();
    const { ms, value } = cpu(() => counter.count(text.slice(0, size)));
    points.push({ size, ms, tokens: value });
    if (points.length >= 2) {
      const [a, b] = points.slice(-2) as [Growth, Growth];
      if (a.ms >= MEASURABLE_MS) exponent = Math.log(b.ms / a.ms) / Math.log(b.size / a.size);
    }
    if (ms * Math.pow(2, Math.max(exponent, 1)) > BUDGET_MS) break;
  }
  return { points, exponent };
}

function adversarial(counters: Counter[]): void {
  const [ours, jsTiktoken, gptTokenizer] = counters as [Counter, Counter, Counter];
  console.log(
    `| input | ours: ${OUR_SIZES.map((s) => `${s / KB} KB`).join(' / ')} (p50 of 3) | ×2 input ⇒ time × | js-tiktoken: largest prefix in budget, growth exponent | gpt-tokenizer: same | counts on js-tiktoken's largest prefix: ours / js-tiktoken / gpt-tokenizer |`,
  );
  console.log('|---|---:|---:|---:|---:|---|');
  for (const input of ADVERSARIAL) {
    const text = input.make(OUR_SIZES.at(-1)!);
    const oursMs = OUR_SIZES.map((size) => {
      const part = text.slice(0, size);
      return median(
        [0, 1, 2].map(() => {
          ours.reset();
          return cpu(() => ours.count(part)).ms;
        }),
      );
    });
    const doubling = oursMs.slice(1).map((ms, i) => (ms / oursMs[i]!).toFixed(2));
    const js = grow(jsTiktoken, text, OUR_SIZES[0]!);
    const gpt = grow(gptTokenizer, text, OUR_SIZES[0]!);
    const jsLast = js.points.at(-1)!;
    const prefix = text.slice(0, jsLast.size);
    ours.reset();
    gptTokenizer.reset();
    const counts = `${fmtInt(ours.count(prefix))} / ${fmtInt(jsLast.tokens)} / ${fmtInt(gptTokenizer.count(prefix))} (${jsLast.size / KB} KB)`;
    const fmtGrowth = (g: { points: Growth[]; exponent: number }) => {
      const last = g.points.at(-1)!;
      const exponent = g.points.length >= 2 && g.points.at(-2)!.ms >= MEASURABLE_MS ? g.exponent.toFixed(2) : '—';
      return `${fmtMs(last.ms)} on ${last.size / KB} KB, ${exponent}`;
    };
    console.log(
      `| ${input.name} | ${oursMs.map(fmtMs).join(' / ')} | ${doubling.join(', ')} | ${fmtGrowth(js)} | ${fmtGrowth(gpt)} | ${counts} |`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------

const loadStart = os.loadavg()[0]!;
console.log('# Token counting benchmark: ours vs js-tiktoken vs gpt-tokenizer\n');
console.log(
  `Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} CPUs, load average ${loadStart.toFixed(1)} at start; ` +
    `${REPS} repetitions; times are CPU time of this process (user + system).`,
);

const corpora: Corpus[] = [];
if (recorded === null) {
  console.log('\n(a) and (b) skipped: set RECORDED_DIR to the recorded-data directory (docs/benchmarking.md).');
} else {
  for (const [label, loaded] of [
    ['LoCoMo', locomo(recorded)],
    ['mini-swe-agent', miniSweAgent(recorded)],
  ] as const) {
    if (loaded === null) console.log(`\n${label} skipped: not found under ${recorded}.`);
    else corpora.push(loaded);
  }
}
for (const c of corpora) {
  console.log(`- ${c.name}: ${c.source}: ${fmtInt(c.messages.length)} messages, ${(c.bytes / 1e6).toFixed(2)} MB of UTF-8.`);
}

const ordinaryResults: OrdinaryResult[] = [];
const loads: { encoding: Encoding; load: Loaded['load'] }[] = [];
let o200kCounters: Counter[] | null = null;
for (const encoding of ENCODINGS) {
  const { counters, load } = await loadCounters(encoding);
  loads.push({ encoding, load });
  if (encoding === 'o200k_base') o200kCounters = counters;
  for (const c of corpora) ordinaryResults.push(ordinary(c, encoding, counters));
}

console.log('\n## Loading an encoding (once per process)\n');
console.log(`| encoding | counter | CPU time | retained memory${gc ? '' : ' (run with --expose-gc)'} |`);
console.log('|---|---|---:|---:|');
for (const { encoding, load } of loads) {
  for (const l of load) {
    console.log(
      `| ${encoding} | ${l.name} | ${fmtMs(l.ms)} | ${l.retainedMb === null ? '—' : `${l.retainedMb.toFixed(0)} MB`} |`,
    );
  }
}

if (ordinaryResults.length > 0) {
  console.log('\n## (a) prose and (b) code / tool output\n');
  console.log(
    'Each message counted on its own; p50 over the repetitions, each starting with empty piece caches. "differing messages": messages whose count is not js-tiktoken\'s (must be 0).\n',
  );
  printOrdinary(ordinaryResults);
}

if (corpora.length > 0) {
  console.log('\n## Pre-tokenising alone (o200k_base)\n');
  console.log("Splitting every message into pieces, p50: our scanner vs the encoding's regex (same pieces, checked).\n");
  console.log('| text | pieces | scanner | regex | regex ÷ scanner |');
  console.log('|---|---:|---:|---:|---:|');
  for (const c of corpora) {
    const r = preTokenizing(c, 'o200k_base');
    console.log(
      `| ${c.name} | ${fmtInt(r.pieces)} | ${fmtMs(r.scanner)} | ${fmtMs(r.regex)} | ${(r.regex / r.scanner).toFixed(2)} |`,
    );
  }
}

console.log('\n## (c) adversarial input (o200k_base)\n');
console.log(
  `Ours on the whole input at each size; js-tiktoken and gpt-tokenizer on prefixes of 2 KB, 4 KB, … until the next one is predicted to take more than ${BUDGET_MS / 1000} s. Growth exponent: log(time ratio) / log(size ratio) between their last two prefixes (1 = linear, 2 = quadratic; — when the times are too small to tell).\n`,
);
const counters = o200kCounters ?? (await loadCounters('o200k_base')).counters;
adversarial(counters);
console.log(`\nLoad average ${os.loadavg()[0]!.toFixed(1)} at the end.`);
