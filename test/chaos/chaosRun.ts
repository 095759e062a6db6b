/**
 * The chaos run: several processes (chaosWorker.ts) append, compact, revert, redact, purge, fork, create,
 * erase and re-import on the same sessions of one store for a bounded time, while this process SIGKILLs a
 * worker every few seconds — aimed at a fork, an erasure or an import in flight — and starts another, and (on
 * PostgreSQL and Redis) kills one of the workers' connections every 50–250 ms. Afterwards the history checker
 * reads the store and lists every violation:
 *
 * - every acknowledged append is in its session's log exactly once (unless an archive purge may have removed
 *   it: archived and older than a purge's cutoff);
 * - the active window starts at a turn boundary and holds no tool result without its call;
 * - coverage verifies (no original represented twice);
 * - versions never go down (checked inside each worker after every operation);
 * - every fork holds the event it was forked at (no empty or partial fork);
 * - no data of an erased user is readable: after an acknowledged `eraseUser(u)`, no session of `u` holds an
 *   event, or is a fork, from before the erasure began;
 * - no operation fails with an error the library does not document (only RepositoryConnectionError,
 *   IllegalStateError, InvalidArgumentError).
 *
 *   const report = await runChaos({ backend: 'sqlite', target: '/tmp/chaos.db', prefix: 'chaos', seconds: 60 });
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DefaultSessionService,
  EventFilter,
  Session,
  createDefaultLogger,
  type SessionEvent,
  type SessionRepository,
} from 'session-compaction';
import { isEnumerableRepository, isTurnStart } from 'session-compaction/spi';
import { workerBundle } from '../support/workerBundle.js';

const here = dirname(fileURLToPath(import.meta.url));
const logger = createDefaultLogger({ silent: true });

export interface ChaosOptions {
  backend: 'sqlite' | 'postgres' | 'redis';
  /** The SQLite file or the server URL. */
  target: string;
  prefix: string;
  seconds: number;
  /** Worker processes at any time; default 8. */
  processes?: number;
  /** Shared sessions the workers append to and compact; default 3. */
  sessions?: number;
  /** Mean pause between SIGKILLs (ms); default 3000. 0: no kills. */
  killEveryMs?: number;
  /** Kill one worker connection every 50–250 ms (PostgreSQL, Redis); default true. */
  connectionKills?: boolean;
  /** A repository on the same store, for set-up and the checks. */
  open(): Promise<SessionRepository>;
  /** Kills one connection of a worker (names start with `${prefix}-`); returns how many were killed. */
  killConnection?(): Promise<number>;
}

export interface ChaosReport {
  backend: string;
  seconds: number;
  processesStarted: number;
  sigkills: number;
  /** SIGKILLs that landed while a fork, an erasure or an import was in flight, by operation. */
  sigkillsDuring: Record<string, number>;
  connectionKills: number;
  acknowledgedAppends: number;
  erasuresAcknowledged: number;
  forksChecked: number;
  /** Errors the operations failed with (documented kinds), by operation and class. */
  errors: Record<string, number>;
  /**
   * Tool results in an active window whose call a compaction archived: several workers write interleaved turns
   * into one session, so another worker's user message can follow a call before its result arrives; the call is
   * then abandoned, compaction may archive it, and the result that comes late stays active — the documented
   * late-result case (SessionMemory brings the call back when it builds a prompt), not a split pair.
   */
  lateResults: number;
  violations: string[];
}

interface Worker {
  tag: string;
  child: ChildProcessWithoutNullStreams;
  out: string;
  ready: Promise<void>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  killed: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const processes = options.processes ?? 8;
  const runId = randomBytes(3).toString('hex');
  const mainSessions = Array.from({ length: options.sessions ?? 3 }, (_, i) => `chaos-${runId}-${i}`);
  const setup = await options.open();
  for (const id of mainSessions) await setup.save(Session.create({ id, userId: `chaos-owner-${runId}` }));
  await setup.close?.();

  const report: ChaosReport = {
    backend: options.backend,
    seconds: options.seconds,
    processesStarted: 0,
    sigkills: 0,
    sigkillsDuring: {},
    connectionKills: 0,
    acknowledgedAppends: 0,
    erasuresAcknowledged: 0,
    forksChecked: 0,
    errors: {},
    lateResults: 0,
    violations: [],
  };
  const bundle = await workerBundle(join(here, 'chaosWorker.ts'));
  const workers: Worker[] = [];
  let deadline = 0;
  let serial = 0;

  const start = (): Worker => {
    const tag = `w${serial++}`;
    const child = spawn(
      process.execPath,
      [...bundle, options.backend, options.target, options.prefix, tag, mainSessions.join(','), runId],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    report.processesStarted++;
    let onReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    const w: Worker = {
      tag,
      child,
      out: '',
      ready,
      killed: false,
      exit: new Promise((resolve) => child.on('close', (code, signal) => (onReady(), resolve({ code, signal })))),
    };
    let err = '';
    // Writing `go` to a worker killed meanwhile must not end this process.
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (d: Buffer) => {
      w.out += d.toString();
      if (w.out.startsWith('ready\n')) onReady();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    void w.exit.then(({ code }) => {
      if (!w.killed && code !== 0) report.violations.push(`worker ${tag} exited with ${code}: ${err.slice(0, 500)}`);
    });
    // A replacement starts as soon as it is loaded; the first ones together, once all are loaded.
    if (deadline > 0) void ready.then(() => w.child.exitCode === null && child.stdin.write(`go ${deadline}\n`));
    workers.push(w);
    return w;
  };

  // Start-up (module loading, ~1 s each on a loaded machine) is not part of the run's time.
  const first = Array.from({ length: processes }, () => start());
  await Promise.all(first.map((w) => w.ready));
  deadline = Date.now() + options.seconds * 1000;
  for (const w of first) if (w.child.exitCode === null) w.child.stdin.write(`go ${deadline}\n`);

  let stop = false;
  const killer = (async () => {
    const every = options.killEveryMs ?? 3000;
    if (every <= 0) return;
    while (!stop) {
      await sleep(every / 2 + Math.random() * every);
      if (stop || Date.now() > deadline - 1500) break;
      const alive = workers.filter((w) => !w.killed && w.child.exitCode === null);
      // Aim at an operation in flight: wait up to 1 s for one.
      let victim: Worker | undefined;
      let during = 'other';
      for (let waited = 0; waited < 1000 && victim === undefined; waited += 10) {
        for (const w of alive) {
          const lines = w.out.split('\n');
          const last = lines[lines.length - 2] ?? '';
          if (last.startsWith('op ') || (last.startsWith('erase ') && !last.startsWith('erased'))) {
            victim = w;
            during = last.startsWith('erase ') ? 'erase' : last.slice(3);
            break;
          }
        }
        if (victim === undefined) await sleep(10);
      }
      victim ??= alive[Math.floor(Math.random() * alive.length)];
      if (victim === undefined) continue;
      victim.killed = true;
      victim.child.kill('SIGKILL');
      report.sigkills++;
      report.sigkillsDuring[during] = (report.sigkillsDuring[during] ?? 0) + 1;
      start();
    }
  })();
  const connectionKiller = (async () => {
    if (options.connectionKills === false || options.killConnection === undefined) return;
    while (!stop) {
      await sleep(50 + Math.random() * 200);
      if (stop) break;
      try {
        report.connectionKills += await options.killConnection();
      } catch {
        // The admin connection itself may be busy; the next round tries again.
      }
    }
  })();

  await sleep(options.seconds * 1000);
  stop = true;
  await Promise.all([killer, connectionKiller]);
  await Promise.all(workers.map((w) => w.exit));

  await check(options, report, workers, mainSessions);
  return report;
}

async function check(options: ChaosOptions, report: ChaosReport, workers: Worker[], mainSessions: string[]): Promise<void> {
  const acked = new Map<string, Map<string, number>>();
  let purgeCutoff = -Infinity;
  const erasureStart = new Map<string, { user: string; start: number }>();
  const erased = new Map<string, number>();
  for (const w of workers) {
    // A line cut by the kill is not an acknowledgement.
    const lines = w.out.split('\n').slice(0, -1);
    for (const line of lines) {
      const [kind, ...rest] = line.split(' ');
      if (kind === 'ack') {
        const [sessionId, eventId, ts] = rest as [string, string, string];
        if (!acked.has(sessionId)) acked.set(sessionId, new Map());
        acked.get(sessionId)!.set(eventId, Number(ts));
        report.acknowledgedAppends++;
      } else if (kind === 'purge') purgeCutoff = Math.max(purgeCutoff, Number(rest[0]));
      else if (kind === 'erase') erasureStart.set(rest[2]!, { user: rest[0]!, start: Number(rest[1]) });
      else if (kind === 'erased') {
        const e = erasureStart.get(rest[0]!);
        if (e !== undefined) {
          erased.set(e.user, Math.max(erased.get(e.user) ?? 0, e.start));
          report.erasuresAcknowledged++;
        }
      } else if (kind === 'error') {
        const key = `${rest[0]} ${rest[1]}`;
        report.errors[key] = (report.errors[key] ?? 0) + 1;
      } else if (kind === 'violation') report.violations.push(`${w.tag}: ${rest.join(' ')}`);
    }
  }

  const repo = await options.open();
  const service = new DefaultSessionService(repo, { logger });
  try {
    for (const id of mainSessions) {
      const all = await repo.findEvents(id, EventFilter.all());
      const active = await repo.findEvents(id, EventFilter.active());
      const ids = all.map((e) => e.id);
      if (new Set(ids).size !== ids.length) report.violations.push(`${id}: an event id appears twice`);
      const present = new Set(ids);
      for (const [eventId, ts] of acked.get(id) ?? []) {
        // Only an archived event older than a purge's cutoff may be gone.
        if (!present.has(eventId) && !(ts < purgeCutoff))
          report.violations.push(`${id}: acknowledged append ${eventId} is missing`);
      }
      const real = active.filter((e) => !e.isSynthetic());
      if (real.length > 0 && !isTurnStart(real[0]!))
        report.violations.push(`${id}: the active window starts inside a turn (${real[0]!.id})`);
      const archivedCalls = new Set(
        all
          .filter((e) => e.isArchived() && e.message.type === 'assistant')
          .flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []).map((c) => c.id) : [])),
      );
      const unpaired = unpairedResults(id, active, archivedCalls);
      report.violations.push(...unpaired.violations);
      report.lateResults += unpaired.late;
      const coverage = await service.verifyCoverage(id);
      if (coverage.duplicated.length > 0)
        report.violations.push(`${id}: coverage: represented twice: ${coverage.duplicated.slice(0, 5).join(', ')}`);
      if (coverage.uncovered.length > 0)
        report.violations.push(`${id}: coverage: archived and represented nowhere: ${coverage.uncovered.slice(0, 5).join(', ')}`);
    }

    if (isEnumerableRepository(repo)) {
      let cursor: string | null = null;
      do {
        const page = await repo.listSessionIds({ cursor, limit: 500 });
        for (const id of page.ids) {
          const session = await repo.findById(id);
          const origin = session?.metadata.forkedFrom as { atEventId?: string | null } | undefined;
          if (session === null || origin === undefined) continue;
          report.forksChecked++;
          const log = await repo.findEvents(id, EventFilter.all());
          if (origin.atEventId !== null && origin.atEventId !== undefined && !log.some((e) => e.id === origin.atEventId))
            report.violations.push(`fork ${id}: lacks the event it was forked at (${log.length} events)`);
        }
        cursor = page.cursor;
      } while (cursor !== null);
    }

    for (const [user, start] of erased) {
      for (const session of await repo.findByUserId(user)) {
        const origin = session.metadata.forkedFrom as { forkedAt?: string } | undefined;
        if (origin?.forkedAt !== undefined && Date.parse(origin.forkedAt) < start)
          report.violations.push(`erased user ${user}: fork ${session.id} made before the erasure is readable`);
        const old = (await repo.findEvents(session.id, EventFilter.all())).filter((e) => e.timestamp.getTime() < start);
        if (old.length > 0)
          report.violations.push(
            `erased user ${user}: session ${session.id} holds ${old.length} event(s) from before the erasure`,
          );
      }
    }
  } finally {
    await repo.close?.();
  }
}

/** Tool results in the active window whose call is not in an assistant message before them in the window. */
function unpairedResults(
  sessionId: string,
  active: readonly SessionEvent[],
  archivedCalls: ReadonlySet<string>,
): { violations: string[]; late: number } {
  const calls = new Set<string>();
  const out: string[] = [];
  let late = 0;
  for (const e of active) {
    const m = e.message;
    if (m.type === 'assistant') for (const c of m.toolCalls ?? []) calls.add(c.id);
    if (m.type === 'tool')
      for (const r of m.responses) {
        if (calls.has(r.id)) continue;
        if (archivedCalls.has(r.id)) late++;
        else out.push(`${sessionId}: tool result ${e.id} without its call`);
      }
  }
  return { violations: out, late };
}

export function describeChaos(r: ChaosReport): string {
  const during = Object.entries(r.sigkillsDuring)
    .map(([op, n]) => `${n} during ${op}`)
    .join(', ');
  return (
    `${r.backend}, ${r.seconds} s: ${r.processesStarted} processes, ${r.sigkills} SIGKILLs (${during || 'none'}), ` +
    `${r.connectionKills} connections killed, ${r.acknowledgedAppends} acknowledged appends, ` +
    `${r.erasuresAcknowledged} erasures, ${r.forksChecked} forks checked, ${r.lateResults} late tool results after an archived call: ${r.violations.length} violations`
  );
}
