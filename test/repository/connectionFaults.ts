/**
 * Connection chaos for a durable repository: concurrent appenders and compactors on one session while a
 * killer terminates the repositories' server connections every 5–25 ms, for at most `chaosMs`: how far the
 * appends get under such a killer depends on how long the server takes to accept a new connection (PostgreSQL's
 * 400 appends took 35–124 s on one machine in one day), so the killer stops after its time and the rest of the
 * work completes on a quiet server, still checked. Appenders retry a failed append with
 * the same event id until it is acknowledged (what a client does); every failure must be the documented
 * RepositoryConnectionError. Afterwards the history checker compares every acknowledged append with the
 * final log.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  RepositoryConnectionError,
  Session,
  createDefaultLogger,
  type SessionRepository,
} from 'session-compaction';
import { checkHistory, faultStrategy, turnEvents } from './faultWorkload.js';

const logger = createDefaultLogger({ silent: true });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ChaosOptions {
  sessionId: string;
  /** The appenders' repository and the compactors' one (e.g. a pool the repository owns and a caller's pool). */
  appendRepository: SessionRepository;
  compactRepository: SessionRepository;
  /** Terminates one or more of the two repositories' connections; returns how many it ended. */
  kill: () => Promise<number>;
  /** Waits until whatever the store may still be running for the victims has run (before the final read). */
  settle?: () => Promise<void>;
  /** A repository on the same data for the final read. */
  open: () => Promise<SessionRepository>;
  appenders?: number;
  /** Appends in total (two per turn). */
  appends?: number;
  compactors?: number;
  /** How long the killer runs at most, from the start (default 30 s). */
  chaosMs?: number;
}

export interface ChaosStats {
  durationMs: number;
  /** How long the killer ran (at most `chaosMs`). */
  killingMs: number;
  kills: number;
  appends: number;
  /** Append calls that failed with RepositoryConnectionError (each retried until acknowledged). */
  appendFailures: number;
  compactions: number;
  committed: number;
  /** Compactions that failed with RepositoryConnectionError (outcome unknown to the caller). */
  compactionFailures: number;
  /** Anything else thrown: must stay empty. */
  otherErrors: string[];
}

function classify(error: unknown, stats: ChaosStats): boolean {
  if (error instanceof RepositoryConnectionError && error.retriable && error.cause !== undefined) return true;
  stats.otherErrors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  return false;
}

export async function runConnectionChaos(o: ChaosOptions): Promise<ChaosStats> {
  const appenders = o.appenders ?? 4;
  const turnsPerAppender = Math.ceil((o.appends ?? 400) / appenders / 2);
  const stats: ChaosStats = {
    durationMs: 0,
    killingMs: 0,
    kills: 0,
    appends: 0,
    appendFailures: 0,
    compactions: 0,
    committed: 0,
    compactionFailures: 0,
    otherErrors: [],
  };
  const appendService = new DefaultSessionService(o.appendRepository, { logger });
  // Without the in-process lock the compactors really race each other, as two app instances would; 'rebase'
  // re-commits over the appends that won the race, so compactions do commit under a constant append load.
  const compactService = new DefaultSessionService(o.compactRepository, {
    logger,
    lockCompactions: false,
    conflictPolicy: 'rebase',
  });
  await o.appendRepository.save(Session.create({ id: o.sessionId, userId: 'chaos' }));

  const acked = new Set<string>();
  let appending = true;
  let chaos = true;
  const started = Date.now();

  const chaosMs = o.chaosMs ?? 30_000;
  const killer = (async () => {
    while (chaos && Date.now() - started < chaosMs) {
      await sleep(5 + Math.random() * 20);
      if (!chaos) break;
      try {
        stats.kills += await o.kill();
      } catch (error) {
        stats.otherErrors.push(`killer: ${String(error)}`);
      }
    }
    stats.killingMs = Date.now() - started;
  })();

  const appender = async (w: number) => {
    for (let turn = 0; turn < turnsPerAppender; turn++) {
      for (const event of turnEvents(o.sessionId, `w${w}`, turn)) {
        for (let attempt = 0; ; attempt++) {
          try {
            await appendService.appendEvent(event);
            acked.add(event.id);
            stats.appends++;
            break;
          } catch (error) {
            if (!classify(error, stats) || attempt >= 200) return;
            stats.appendFailures++;
            await sleep(Math.random() * 5);
          }
        }
      }
      // A user reading the answer: without a pause the appenders bump the version faster than any compaction commits.
      await sleep(Math.random() * 30);
    }
  };

  const compactor = async (c: number) => {
    for (let round = 0; appending; round++) {
      stats.compactions++;
      try {
        const result = await compactService.compact(o.sessionId, () => true, faultStrategy(o.sessionId, `c${c}`, round));
        if (result.archivedEvents.length > 0) stats.committed++;
      } catch (error) {
        if (!classify(error, stats)) return;
        stats.compactionFailures++;
      }
      await sleep(5 + Math.random() * 10);
    }
  };

  const compactors = Array.from({ length: o.compactors ?? 2 }, (_, c) => compactor(c));
  await Promise.all(Array.from({ length: appenders }, (_, w) => appender(w)));
  appending = false;
  await Promise.all(compactors);
  chaos = false;
  await killer;
  stats.durationMs = Date.now() - started;

  await o.settle?.();
  // The next call works, on the very repositories that saw the faults.
  expect(await o.appendRepository.getEventVersion(o.sessionId)).to.be.greaterThan(0);
  expect((await o.compactRepository.findEvents(o.sessionId, EventFilter.lastN(1))).length).to.equal(1);

  const repo = await o.open();
  try {
    checkHistory({
      all: await repo.findEvents(o.sessionId, EventFilter.all()),
      active: await repo.findEvents(o.sessionId, EventFilter.active()),
      version: await repo.getEventVersion(o.sessionId),
      acknowledged: acked,
      committedAtLeast: stats.committed,
      committedAtMost: stats.committed + stats.compactionFailures,
      context: 'after the connection chaos',
    });
  } finally {
    await repo.close?.();
  }
  expect(stats.otherErrors, 'every failure is a RepositoryConnectionError').to.deep.equal([]);
  expect(acked.size, 'every append was eventually acknowledged').to.equal(appenders * turnsPerAppender * 2);
  return stats;
}

export function describeChaos(name: string, s: ChaosStats): string {
  return (
    `${name}: ${s.kills} connection kills in ${s.killingMs} ms (${s.durationMs} ms in all); ${s.appends} appends acknowledged after ` +
    `${s.appendFailures} RepositoryConnectionError retries; ${s.compactions} compactions, ${s.committed} committed, ` +
    `${s.compactionFailures} failed with RepositoryConnectionError; history consistent`
  );
}
