/**
 * Multi-process runs of the compaction lock: several lockWorker.ts processes compact one session at once,
 * and the parent counts overlapping summariser calls from the intervals they recorded; or the holder is
 * killed with SIGKILL mid-summary and the parent times how long the next process waits for the lease.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workerBundle } from '../../support/workerBundle.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface LockBackend {
  backend: 'sqlite' | 'postgres' | 'redis';
  target: string;
  prefix: string;
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  /** Resolves at the first `holding` line (a summary started). */
  holding: Promise<bigint>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  stderr(): string;
}

interface WorkerArgs {
  tag: string;
  attempts: number;
  intervals: string;
  leaseMs: number;
  waitMs: number;
  mode: 'run' | 'hang' | 'unlocked';
}

function startWorker(worker: string[], b: LockBackend, sessionId: string, a: WorkerArgs): Worker {
  const args = [b.backend, b.target, b.prefix, sessionId, a.tag, a.attempts, a.intervals, a.leaseMs, a.waitMs, a.mode];
  const child = spawn(process.execPath, [...worker, ...args.map(String)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  let onHolding: (at: bigint) => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const holding = new Promise<bigint>((resolve) => (onHolding = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
    if (out.includes('holding\n')) onHolding(process.hrtime.bigint());
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  // A worker that dies before it is ready fails the run instead of hanging it.
  void exit.then(({ code }) => code !== 0 && onReady());
  return { child, ready, holding, exit, output: () => out, stderr: () => err };
}

export interface Interval {
  tag: string;
  start: bigint;
  end: bigint;
}

/** Pairs of summariser calls whose intervals intersect. */
export function countOverlaps(intervals: readonly Interval[]): number {
  const sorted = [...intervals].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  let overlaps = 0;
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.start < sorted[i]!.end; j++) overlaps++;
  }
  return overlaps;
}

export interface ContentionRun {
  calls: number;
  overlaps: number;
  /** Skip reasons and commits summed over the processes. */
  tally: Record<string, number>;
  seconds: number;
}

function tallyOf(w: Worker): Record<string, number> {
  const line = w
    .output()
    .split('\n')
    .find((l) => l.startsWith('tally '));
  if (line === undefined) throw new Error(`lock worker ended without a tally: ${w.stderr()}`);
  return JSON.parse(line.slice(6)) as Record<string, number>;
}

/** `processes` workers × `attempts` compactions of one session, started together. */
export async function runContention(
  b: LockBackend,
  sessionId: string,
  options: { processes: number; attempts: number; mode: 'run' | 'unlocked'; leaseMs?: number },
): Promise<ContentionRun> {
  const worker = await workerBundle(join(here, 'lockWorker.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'lock-intervals-'));
  const intervals = join(dir, 'intervals.txt');
  writeFileSync(intervals, '');
  const workers = Array.from({ length: options.processes }, (_, i) =>
    startWorker(worker, b, sessionId, {
      tag: `p${i}`,
      attempts: options.attempts,
      intervals,
      leaseMs: options.leaseMs ?? 2000,
      waitMs: 0,
      mode: options.mode,
    }),
  );
  try {
    await Promise.all(workers.map((w) => w.ready));
    const started = Date.now();
    for (const w of workers) w.child.stdin.end('go\n');
    const exits = await Promise.all(workers.map((w) => w.exit));
    const seconds = (Date.now() - started) / 1000;
    exits.forEach((e, i) => {
      if (e.code !== 0) throw new Error(`lock worker p${i} failed (${e.code ?? e.signal}): ${workers[i]!.stderr()}`);
    });
    const tally: Record<string, number> = {};
    for (const w of workers) for (const [k, v] of Object.entries(tallyOf(w))) tally[k] = (tally[k] ?? 0) + v;
    const calls = readFileSync(intervals, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [tag, start, end] = l.split(' ') as [string, string, string];
        return { tag, start: BigInt(start), end: BigInt(end) };
      });
    return { calls: calls.length, overlaps: countOverlaps(calls), tally, seconds };
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface KillRun {
  /** From the SIGKILL of the holder to the start of the successor's summary. */
  takeoverMs: number;
  successorTally: Record<string, number>;
}

/**
 * Starts a holder whose summary never returns and a successor (ready, waiting up to `waitMs` for the lease);
 * kills the holder with SIGKILL once it is summarising, then lets the successor compact.
 */
export async function runKill(b: LockBackend, sessionId: string, leaseMs: number, waitMs: number): Promise<KillRun> {
  const worker = await workerBundle(join(here, 'lockWorker.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'lock-kill-'));
  const intervals = join(dir, 'intervals.txt');
  writeFileSync(intervals, '');
  const holder = startWorker(worker, b, sessionId, { tag: 'holder', attempts: 1, intervals, leaseMs, waitMs: 0, mode: 'hang' });
  const successor = startWorker(worker, b, sessionId, { tag: 'successor', attempts: 1, intervals, leaseMs, waitMs, mode: 'run' });
  try {
    await Promise.all([holder.ready, successor.ready]);
    holder.child.stdin.end('go\n');
    await holder.holding;
    // Let the holder renew at least once, so the takeover proves expiry of a renewed lease.
    await new Promise((resolve) => setTimeout(resolve, leaseMs / 2));
    holder.child.kill('SIGKILL');
    const killedAt = process.hrtime.bigint();
    await holder.exit;
    successor.child.stdin.end('go\n');
    const takeover = await Promise.race([
      successor.holding,
      successor.exit.then(() => {
        throw new Error(`the successor never summarised: ${successor.output()} ${successor.stderr()}`);
      }),
    ]);
    const exit = await successor.exit;
    if (exit.code !== 0) throw new Error(`successor failed (${exit.code ?? exit.signal}): ${successor.stderr()}`);
    return { takeoverMs: Number(takeover - killedAt) / 1e6, successorTally: tallyOf(successor) };
  } finally {
    for (const w of [holder, successor]) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
