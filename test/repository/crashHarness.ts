/**
 * SIGKILL crash runs for any durable backend: a child process (crashWorker.ts) appends and compacts one
 * session until it is killed — most kills aimed at a compaction in flight — then the parent checks the log
 * with the history checker.
 *
 *   crashSuite('PostgreSQL', async () => ({ backend: 'postgres', target: PG_URL, prefix, open: () => … }));
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { EventFilter, Session, type SessionRepository } from 'session-compaction';
import { isBatchAppendRepository } from 'session-compaction/spi';
import { workerBundle } from '../support/workerBundle.js';
import { checkHistory, turnEvents } from './faultWorkload.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface CrashBackend {
  backend: 'sqlite' | 'postgres' | 'redis';
  /** The database file or server URL the worker opens. */
  target: string;
  prefix: string;
  /** A repository on the same data, for the parent's checks (closed after each). */
  open(): Promise<SessionRepository>;
  /**
   * Resolves once the killed worker `tag` can no longer change the store. A server still finishes a
   * transaction whose COMMIT reached it before the kill — possibly between the parent's reads of the whole log
   * and of the active window, which then disagree although each is consistent (PostgreSQL).
   */
  settled?(tag: string): Promise<void>;
  /** Extra checks of the store itself after each kill (e.g. SQLite's integrity_check). */
  afterKill?(run: number): void | Promise<void>;
}

export interface CrashRun {
  acked: string[];
  compactions: number;
  /** The victim died between `compacting` and the compaction's end. */
  midCompaction: boolean;
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  output(): string;
  stderr(): string;
  exit: Promise<NodeJS.Signals | null>;
}

function startWorker(worker: string[], b: CrashBackend, sessionId: string, tag: string, mode?: 'fork'): Worker {
  const child = spawn(process.execPath, [...worker, b.backend, b.target, b.prefix, sessionId, tag, ...(mode ? [mode] : [])], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  let onFail: (e: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    onReady = resolve;
    onFail = reject;
  });
  // Awaited later; a worker killed before it was ready must not leave an unhandled rejection behind.
  ready.catch(() => undefined);
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.startsWith('ready\n')) onReady();
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('close', (code, signal) => {
      onFail(new Error(`crash worker ended before it was ready (${code ?? signal}): ${err}`));
      resolve(signal);
    }),
  );
  return { child, ready, output: () => out, stderr: () => err, exit };
}

/**
 * Lets the worker run for a random 30–300 ms, then kills it at the next compaction (or fork) it starts, a
 * random 0–3 ms in (or at once if none starts within 400 ms).
 */
async function runAndKill(w: Worker, startLine: RegExp = /compacting\n$/): Promise<CrashRun> {
  await w.ready;
  let armed = false;
  let killed = false;
  const kill = () => {
    if (killed) return;
    killed = true;
    w.child.kill('SIGKILL');
  };
  w.child.stdout.on('data', () => {
    if (!armed || !startLine.test(w.output())) return;
    // 0 ms means now: a timer of 0 waits at least 1 ms, by when a SQLite compaction has often committed.
    const delay = Math.floor(Math.random() * 4);
    if (delay === 0) kill();
    else setTimeout(kill, delay);
  });
  w.child.stdin.write('go\n');
  setTimeout(
    () => {
      armed = true;
      setTimeout(kill, 400);
    },
    30 + Math.floor(Math.random() * 270),
  );
  const signal = await w.exit;
  if (signal !== 'SIGKILL') throw new Error(`crash worker ended without being killed (${signal}): ${w.stderr()}`);
  // A line cut by the kill is not an acknowledgement.
  const lines = w.output().split('\n').slice(1, -1);
  return {
    acked: lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4)),
    compactions: lines.filter((l) => l === 'compacted').length,
    midCompaction: lines[lines.length - 1] === 'compacting',
  };
}

export interface CrashSummary {
  kills: number;
  midCompaction: number;
  acknowledgedAppends: number;
  acknowledgedCompactions: number;
  committedCompactions: number;
}

/** Kills `kills` workers in a row on one session, checking the whole history after each kill. */
export async function runCrashes(b: CrashBackend, sessionId: string, kills = 20): Promise<CrashSummary> {
  const acked = new Set<string>();
  const summary: CrashSummary = {
    kills,
    midCompaction: 0,
    acknowledgedAppends: 0,
    acknowledgedCompactions: 0,
    committedCompactions: 0,
  };
  // The next victims load their modules while the current one runs: startup, not the kill, is the slow part.
  const queue: Worker[] = [];
  const worker = await workerBundle(join(here, 'crashWorker.ts'));
  const enqueue = (run: number) => run < kills && queue.push(startWorker(worker, b, sessionId, `r${run}`));
  enqueue(0);
  enqueue(1);
  try {
    for (let run = 0; run < kills; run++) {
      const current = queue.shift()!;
      await current.ready;
      enqueue(run + 2);
      const victim = await runAndKill(current);
      await b.settled?.(`r${run}`);
      for (const id of victim.acked) acked.add(id);
      summary.acknowledgedAppends += victim.acked.length;
      summary.acknowledgedCompactions += victim.compactions;
      if (victim.midCompaction) summary.midCompaction++;
      await b.afterKill?.(run);

      const repo = await b.open();
      try {
        const before = summary.committedCompactions;
        summary.committedCompactions = checkHistory({
          all: await repo.findEvents(sessionId, EventFilter.all()),
          active: await repo.findEvents(sessionId, EventFilter.active()),
          version: await repo.getEventVersion(sessionId),
          acknowledged: acked,
          // The kill may fall between a commit and its acknowledgement: at most one unacknowledged commit per run.
          committedAtLeast: before + victim.compactions,
          committedAtMost: before + victim.compactions + 1,
          context: `${b.backend} run ${run}`,
        });
      } finally {
        await repo.close?.();
      }
    }
  } finally {
    for (const w of queue) {
      w.child.kill('SIGKILL');
      await w.exit;
    }
  }
  expect(summary.acknowledgedAppends, 'the victims did real work').to.be.greaterThan(40);
  expect(summary.committedCompactions, 'some compactions committed').to.be.greaterThan(0);
  return summary;
}

/** A source for runForkCrashes: `turns` turns, the older half archived, owned by a user of its own. */
export async function seedForkSource(repo: SessionRepository, sessionId: string, turns = 200): Promise<void> {
  await repo.save(Session.create({ id: sessionId, userId: `${sessionId}-owner` }));
  const events = Array.from({ length: turns }, (_, t) => turnEvents(sessionId, 'src', t)).flat();
  if (isBatchAppendRepository(repo)) await repo.appendEvents(sessionId, events);
  else for (const e of events) await repo.appendEvent(e);
  const half = events.length / 2;
  if (!(await repo.compactEvents(sessionId, events.slice(0, half), events.slice(half), events.length)))
    throw new Error('seedForkSource: the compaction lost its CAS');
}

export interface ForkCrashSummary {
  kills: number;
  /** Kills that landed after a `forking` line and before its `forked`. */
  midFork: number;
  /** Forks found complete in the store, and those of them the victims acknowledged. */
  forksFound: number;
  forksAcknowledged: number;
}

/**
 * Kills `kills` workers in fork mode, each forking `sourceId` (a log the parent wrote, left unchanged) again
 * and again. After each kill every session of the source's owner other than the source must be a whole copy
 * of its log — same ids, order and archived flags, version equal to the events — and every acknowledged fork
 * must be there: a fork is all or nothing.
 */
export async function runForkCrashes(b: CrashBackend, sourceId: string, kills = 10): Promise<ForkCrashSummary> {
  const summary: ForkCrashSummary = { kills, midFork: 0, forksFound: 0, forksAcknowledged: 0 };
  const acknowledged = new Set<string>();
  const queue: Worker[] = [];
  const worker = await workerBundle(join(here, 'crashWorker.ts'));
  const enqueue = (run: number) => run < kills && queue.push(startWorker(worker, b, sourceId, `f${run}`, 'fork'));
  const reader = await b.open();
  const source = await reader.findById(sourceId);
  const expected = (await reader.findEvents(sourceId, EventFilter.all())).map((e) => `${e.id}:${e.archived}`);
  await reader.close?.();
  if (source === null || expected.length === 0) throw new Error('runForkCrashes needs a source session with events');
  enqueue(0);
  enqueue(1);
  try {
    for (let run = 0; run < kills; run++) {
      const current = queue.shift()!;
      await current.ready;
      enqueue(run + 2);
      await runAndKill(current, /forking [^\n]*\n$/);
      await b.settled?.(`f${run}`);
      const lines = current.output().split('\n').slice(1, -1);
      for (const l of lines) if (l.startsWith('forked ')) acknowledged.add(l.slice(7));
      if (lines[lines.length - 1]?.startsWith('forking ')) summary.midFork++;
      await b.afterKill?.(run);
      const repo = await b.open();
      try {
        const forks = (await repo.findByUserId(source.userId)).filter((s) => s.id !== sourceId);
        for (const fork of forks) {
          const log = (await repo.findEvents(fork.id, EventFilter.all())).map((e) => `${e.id}:${e.archived}`);
          expect(log, `${b.backend} run ${run}: fork ${fork.id} is a whole copy (forkedFrom ${sourceId})`).to.deep.equal(
            expected,
          );
          expect(await repo.getEventVersion(fork.id), `${b.backend} run ${run}: version of ${fork.id}`).to.equal(expected.length);
        }
        const found = new Set(forks.map((f) => f.id));
        expect(
          [...acknowledged].filter((id) => !found.has(id)),
          `${b.backend} run ${run}: acknowledged forks present`,
        ).to.deep.equal([]);
        summary.forksFound = forks.length;
      } finally {
        await repo.close?.();
      }
    }
  } finally {
    for (const w of queue) {
      w.child.kill('SIGKILL');
      await w.exit;
    }
  }
  summary.forksAcknowledged = acknowledged.size;
  expect(summary.midFork, 'kills landed inside a fork').to.be.greaterThan(0);
  return summary;
}

export function describeForkCrashSummary(name: string, s: ForkCrashSummary): string {
  return (
    `${name}: ${s.kills} SIGKILLs (${s.midFork} inside a fork), ${s.forksFound} forks in the store ` +
    `(${s.forksAcknowledged} acknowledged), each a whole copy; no empty or partial fork`
  );
}

export function describeCrashSummary(name: string, s: CrashSummary): string {
  return (
    `${name}: ${s.kills} SIGKILLs (${s.midCompaction} inside a compaction), ${s.acknowledgedAppends} acknowledged appends ` +
    `and ${s.committedCompactions} committed compactions (${s.acknowledgedCompactions} acknowledged), all consistent`
  );
}
