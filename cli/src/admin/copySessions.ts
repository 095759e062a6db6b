import type { SessionRepository } from 'session-compaction';
import { compareSnapshots, type SessionMismatch } from './compareSessions.js';
import { collectSessionIds } from './sessionIds.js';
import { forEachConcurrently } from './forEachConcurrently.js';
import { readSnapshot } from './sessionSnapshot.js';
import { writeSession, type WriteOutcome } from './writeSession.js';

export interface CopyProgress {
  start(total: number, phase: 'copy' | 'verify'): void;
  tick(sessionId: string): void;
  stop(): void;
}

export interface CopyOptions {
  /** Sessions copied at once; default 4. */
  concurrency?: number;
  /** Replace target sessions whose log differs from the source's; default false (reported as failures). */
  overwrite?: boolean;
  /** Compare every session after copying; default true. */
  verify?: boolean;
  batchSize?: number;
  progress?: CopyProgress;
  /** Copy only these sessions instead of every session of the source. */
  sessionIds?: readonly string[];
}

export interface CopyReport {
  sessions: number;
  written: number;
  resumed: number;
  unchanged: number;
  overwritten: number;
  eventsAppended: number;
  versionBumps: number;
  failures: { sessionId: string; error: string }[];
  /** Null when verification was skipped. */
  verification: { checked: number; mismatches: SessionMismatch[] } | null;
  copyMs: number;
  verifyMs: number;
}

/**
 * Copies sessions from one repository to another (any backends), then checks that the target holds each one
 * identically. Idempotent and resumable: every session is written with writeSession, so a run that was killed
 * is completed by running it again, with nothing duplicated or lost.
 */
export async function copySessions(
  from: SessionRepository,
  to: SessionRepository,
  options: CopyOptions = {},
): Promise<CopyReport> {
  const concurrency = options.concurrency ?? 4;
  const ids = options.sessionIds !== undefined ? [...options.sessionIds] : await collectSessionIds(from);
  const report: CopyReport = {
    sessions: ids.length,
    written: 0,
    resumed: 0,
    unchanged: 0,
    overwritten: 0,
    eventsAppended: 0,
    versionBumps: 0,
    failures: [],
    verification: null,
    copyMs: 0,
    verifyMs: 0,
  };
  const count = (outcome: WriteOutcome) => {
    report[outcome.status]++;
    report.eventsAppended += outcome.appended;
    report.versionBumps += outcome.versionBumps;
  };

  let started = performance.now();
  options.progress?.start(ids.length, 'copy');
  await forEachConcurrently(ids, concurrency, async (id) => {
    try {
      const snapshot = await readSnapshot(from, id);
      if (snapshot !== null)
        count(
          await writeSession(to, snapshot, {
            overwrite: options.overwrite ?? false,
            ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
          }),
        );
    } catch (error) {
      report.failures.push({ sessionId: id, error: error instanceof Error ? error.message : String(error) });
    }
    options.progress?.tick(id);
  });
  options.progress?.stop();
  report.copyMs = performance.now() - started;

  if (options.verify !== false) {
    started = performance.now();
    const mismatches: SessionMismatch[] = [];
    options.progress?.start(ids.length, 'verify');
    await forEachConcurrently(ids, concurrency, async (id) => {
      const source = await readSnapshot(from, id);
      if (source !== null) {
        const mismatch = compareSnapshots(source, await readSnapshot(to, id));
        if (mismatch !== null) mismatches.push(mismatch);
      }
      options.progress?.tick(id);
    });
    options.progress?.stop();
    report.verification = { checked: ids.length, mismatches };
    report.verifyMs = performance.now() - started;
  }
  return report;
}
