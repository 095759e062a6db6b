/**
 * Concurrency torture for any SessionRepository (issue 4): concurrent appenders and compactors (sliding
 * window, through DefaultSessionService) on one session, then the invariants that must hold whatever the
 * interleaving. Returns statistics and the list of violated invariants (empty when the repository is sound).
 *
 *   const stats = await runTorture({ makeRepository: () => repo, appenders: 8, compactors: 4, rounds: 40 });
 *   expect(stats.violations).to.deep.equal([]);
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  Session,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type CompactionResult,
  type SessionRepository,
  type SessionService,
  createDefaultLogger,
} from 'session-compaction';
import { CharacterTokenCountEstimator, isTurnStart, type SessionLike } from 'session-compaction/spi';

export interface TortureOptions {
  /** The repository worker `w` (appenders first, then compactors) uses: one shared instance, or one per "app instance". */
  makeRepository: (worker: number) => SessionRepository | Promise<SessionRepository>;
  /** The service over a (recording) repository; default a DefaultSessionService with a silent logger. */
  makeService?: (repository: SessionRepository) => SessionService;
  appenders?: number;
  compactors?: number;
  /** Turns per appender; each compactor tries at least this many times and keeps going while appenders run. */
  rounds?: number;
  /**
   * Upper bound of the random pause (ms) an appender takes after each turn, as a user reading an answer.
   * Without it the appenders bump the version faster than any compaction can commit. Default 40.
   */
  thinkMs?: number;
  /** Sliding window size (root real events kept). */
  maxEvents?: number;
  sessionId?: string;
}

export interface TortureStats {
  sessionId: string;
  /** Distinct events appended. */
  appended: number;
  /** Re-appends of an already appended event (must be no-ops). */
  replays: number;
  compactions: number;
  /** Compactions whose CAS write succeeded. */
  committed: number;
  /** Of those, the ones that committed while appenders were still running. */
  committedWhileAppending: number;
  /** Compactions whose CAS write lost to a concurrent append or compaction. */
  lost: number;
  /** Compactions where the strategy proposed nothing, so nothing was written. */
  noops: number;
  finalVersion: number;
  archivedEvents: number;
  activeEvents: number;
  durationMs: number;
  violations: string[];
}

/** Delegates to a real repository, remembering the outcome of the last compactEvents call. */
class CasRecorder implements SessionRepository {
  lastCompaction: boolean | undefined;
  constructor(private readonly inner: SessionRepository) {}
  save(session: SessionLike) {
    return this.inner.save(session);
  }
  findById(id: string) {
    return this.inner.findById(id);
  }
  findByUserId(userId: string) {
    return this.inner.findByUserId(userId);
  }
  findExpiredSessionIds(before: Date) {
    return this.inner.findExpiredSessionIds(before);
  }
  delete(id: string) {
    return this.inner.delete(id);
  }
  appendEvent(event: SessionEvent) {
    return this.inner.appendEvent(event);
  }
  getEventVersion(id: string) {
    return this.inner.getEventVersion(id);
  }
  findEvents(id: string, filter?: EventFilter) {
    return this.inner.findEvents(id, filter);
  }
  async compactEvents(id: string, archived: readonly SessionEvent[], retained: readonly SessionEvent[], expectedVersion: number) {
    this.lastCompaction = await this.inner.compactEvents(id, archived, retained, expectedVersion);
    return this.lastCompaction;
  }
}

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function runTorture(options: TortureOptions): Promise<TortureStats> {
  const appenders = options.appenders ?? 8;
  const compactors = options.compactors ?? 4;
  const rounds = options.rounds ?? 30;
  const thinkMs = options.thinkMs ?? 40;
  // A cheap estimator: the run measures the repository, not tokenisation (which would starve the event loop).
  const strategy = new SlidingWindowCompactionStrategy({
    maxEvents: options.maxEvents ?? 6,
    tokenCountEstimator: new CharacterTokenCountEstimator(),
  });
  const sessionId = options.sessionId ?? `torture-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const logger = createDefaultLogger({ silent: true });
  const makeService = options.makeService ?? ((repository) => new DefaultSessionService(repository, { logger }));
  const violations: string[] = [];
  const stats = { appended: 0, replays: 0, compactions: 0, committed: 0, committedWhileAppending: 0, lost: 0, noops: 0 };
  const started = Date.now();

  const first = await options.makeRepository(0);
  await first.save(Session.create({ id: sessionId, userId: 'torture' }));

  const appendedBy: string[][] = Array.from({ length: appenders }, () => []);
  let appendersRunning = appenders;

  async function appender(w: number): Promise<void> {
    const service = makeService(await options.makeRepository(w));
    try {
      for (let r = 0; r < rounds; r++) {
        const turn = [
          SessionEvent.create({ sessionId, id: `a${w}-r${r}-u`, message: Messages.user(`question ${w}.${r}`) }),
          SessionEvent.create({ sessionId, id: `a${w}-r${r}-a`, message: Messages.assistant(`answer ${w}.${r}`) }),
        ];
        for (const e of turn) {
          await service.appendEvent(e);
          appendedBy[w]!.push(e.id);
          stats.appended++;
        }
        if (r % 5 === 4) {
          // A client retrying after a timeout: the same event again must change nothing.
          await service.appendEvent(turn[0]!);
          stats.replays++;
        }
        await sleep(Math.random() * thinkMs);
      }
    } finally {
      appendersRunning--;
    }
  }

  async function compactor(c: number): Promise<void> {
    const recorder = new CasRecorder(await options.makeRepository(appenders + c));
    const service = makeService(recorder);
    // Keeps going while appenders run, and makes one last attempt after they stop, so that the final
    // window is compacted and at least one compaction commits whatever the interleaving was.
    for (let r = 0; ; r++) {
      const contended = appendersRunning > 0;
      recorder.lastCompaction = undefined;
      const result: CompactionResult = await service.compact(sessionId, () => true, strategy);
      stats.compactions++;
      if (recorder.lastCompaction === true) {
        stats.committed++;
        if (contended) stats.committedWhileAppending++;
        if (result.isNoop()) violations.push(`compactor ${c}: committed a compaction but returned a no-op result`);
      } else if (recorder.lastCompaction === false) {
        stats.lost++;
        if (!result.isNoop()) {
          violations.push(`compactor ${c}: lost the CAS race but returned ${result.archivedEvents.length} archived events`);
        }
      } else {
        stats.noops++;
      }
      if (r + 1 >= rounds && !contended) break;
      await sleep(Math.random() * (thinkMs / 4));
    }
  }

  let monitoring = true;
  async function versionMonitor(): Promise<void> {
    let last = 0;
    while (monitoring) {
      const v = await first.getEventVersion(sessionId);
      if (v < last) violations.push(`version went back from ${last} to ${v}`);
      last = Math.max(last, v);
      await pause();
    }
  }

  const monitor = versionMonitor();
  await Promise.all([
    ...Array.from({ length: appenders }, (_, w) => appender(w)),
    ...Array.from({ length: compactors }, (_, c) => compactor(c)),
  ]);
  monitoring = false;
  await monitor;

  const all = await first.findEvents(sessionId, EventFilter.all());
  const active = await first.findEvents(sessionId, EventFilter.active());
  const finalVersion = await first.getEventVersion(sessionId);

  const seen = new Map<string, number>();
  all.forEach((e, i) => {
    if (seen.has(e.id)) violations.push(`event ${e.id} present twice (positions ${seen.get(e.id)} and ${i})`);
    seen.set(e.id, i);
  });
  const expected = appendedBy.flat();
  for (const id of expected) if (!seen.has(id)) violations.push(`appended event ${id} missing from findEvents(all())`);
  if (seen.size !== expected.length) violations.push(`log holds ${seen.size} distinct events, ${expected.length} were appended`);
  appendedBy.forEach((ids, w) => {
    for (let i = 1; i < ids.length; i++) {
      if ((seen.get(ids[i]!) ?? -1) < (seen.get(ids[i - 1]!) ?? -1)) {
        violations.push(`appender ${w}: ${ids[i]} precedes ${ids[i - 1]} in the log`);
        break;
      }
    }
  });
  const firstActive = all.findIndex((e) => !e.archived);
  if (firstActive >= 0 && all.slice(firstActive).some((e) => e.archived))
    violations.push('an archived event follows the active window');
  if (active.length > 0 && !isTurnStart(active[0]!))
    violations.push(`the active window starts with ${active[0]!.id}, not at a turn start`);
  if (
    active.map((e) => e.id).join() !==
    all
      .filter((e) => !e.archived)
      .map((e) => e.id)
      .join()
  ) {
    violations.push('findEvents(active()) differs from the non-archived part of findEvents(all())');
  }
  if (finalVersion !== expected.length + stats.committed) {
    violations.push(`final version ${finalVersion} != ${expected.length} appends + ${stats.committed} committed compactions`);
  }
  if (stats.committed === 0) violations.push('no compaction committed: the run proved nothing about CAS');

  return {
    sessionId,
    ...stats,
    finalVersion,
    archivedEvents: all.length - active.length,
    activeEvents: active.length,
    durationMs: Date.now() - started,
    violations,
  };
}

/**
 * The torture as a mocha test: 8 appenders and 4 compactors spread over the repositories `makeInstances`
 * returns (two "app instances" with their own connections, for a networked store), 40 rounds each.
 */
export function tortureSuite(label: string, makeInstances: () => SessionRepository[]): void {
  describe('concurrency torture', function () {
    it(`8 appenders and 4 compactors over ${label}: no event lost or duplicated, CAS losers no-op`, async function () {
      this.timeout(120_000);
      const instances = makeInstances();
      try {
        const stats = await runTorture({
          makeRepository: (w) => instances[w % instances.length]!,
          appenders: 8,
          compactors: 4,
          rounds: 40,
          thinkMs: 100,
        });
        expect(stats.violations).to.deep.equal([]);
        expect(stats.appended).to.equal(8 * 40 * 2);
        console.log(`      torture: ${JSON.stringify({ ...stats, violations: undefined })}`);
      } finally {
        await Promise.all([...new Set(instances)].map((r) => r.close?.()));
      }
    });
  });
}
