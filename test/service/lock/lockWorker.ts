/**
 * One process of the multi-process compaction-lock tests (lockHarness.ts). It appends a turn and compacts
 * the shared session `attempts` times; its summariser writes each call's interval (CLOCK_MONOTONIC, which
 * every process on the host shares) to the intervals file, so the parent can count overlapping calls.
 * Mode 'hang': the first summary never returns (the parent kills the process with SIGKILL mid-summary).
 * Prints `ready`, starts on `go`, prints `holding` when a summary starts and a JSON tally at the end.
 *
 *   node --import tsx lockWorker.ts <sqlite|postgres|redis> <target> <prefix> <sessionId> <tag> <attempts>
 *        <intervalsFile> <leaseMs> <waitMs> <run|hang|unlocked>
 */
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createDefaultLogger,
  DefaultSessionService,
  type CompactionLock,
  RecursiveSummarizationCompactionStrategy,
  type SessionRepository,
  Session,
  type ChatClient,
} from 'session-compaction';
import { CharacterTokenCountEstimator, isAtomicInsertRepository } from 'session-compaction/spi';
import { turnEvents } from '../../repository/faultWorkload.js';

const logger = createDefaultLogger({ silent: true });

/** Only the backend under test is loaded. */
async function open(backend: string, target: string, prefix: string): Promise<{ repo: SessionRepository; lock: CompactionLock }> {
  switch (backend) {
    case 'sqlite': {
      const { SqliteSessionRepository } = await import('../../../src/backends/sqlite/SqliteSessionRepository.js');
      const { SqliteCompactionLock } = await import('../../../src/backends/sqlite/SqliteCompactionLock.js');
      return { repo: new SqliteSessionRepository({ path: target, logger }), lock: new SqliteCompactionLock({ path: target }) };
    }
    case 'postgres': {
      const { PostgresSessionRepository } = await import('../../../src/backends/postgres/PostgresSessionRepository.js');
      const { PostgresCompactionLock } = await import('../../../src/backends/postgres/PostgresCompactionLock.js');
      return {
        repo: new PostgresSessionRepository({ connectionString: target, prefix, logger }),
        lock: new PostgresCompactionLock({ connectionString: target, prefix, logger }),
      };
    }
    case 'redis': {
      const { RedisSessionRepository } = await import('../../../src/backends/redis/RedisSessionRepository.js');
      const { RedisCompactionLock } = await import('../../../src/backends/redis/RedisCompactionLock.js');
      return {
        repo: new RedisSessionRepository({ url: target, prefix, logger }),
        lock: new RedisCompactionLock({ url: target, prefix, logger }),
      };
    }
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}

async function main(): Promise<void> {
  const [backend, target, prefix, sessionId, tag, attemptsArg, intervalsFile, leaseArg, waitArg, mode] = process.argv.slice(
    2,
  ) as [string, string, string, string, string, string, string, string, string, string];
  const { repo, lock } = await open(backend, target, prefix);
  const out = (line: string) => process.stdout.write(line + '\n');
  const chatClient: ChatClient = {
    async call() {
      const start = process.hrtime.bigint();
      out('holding');
      // Hangs with the process alive (a timer keeps it running) until the parent kills it.
      if (mode === 'hang') await new Promise(() => setInterval(() => undefined, 1000));
      // Long enough that two unguarded summaries would overlap.
      await sleep(8 + Math.random() * 8);
      appendFileSync(intervalsFile, `${tag} ${start} ${process.hrtime.bigint()}\n`);
      return `summary by ${tag}`;
    },
  };
  const service = new DefaultSessionService(repo, {
    logger,
    // Appends are not locked: a summary that lost its CAS to them is re-committed on top, not wasted.
    conflictPolicy: 'rebase',
    // Measures lock contention only: the default stats write after each commit would lengthen every lease.
    recordCompactionStats: false,
    ...(mode === 'unlocked' ? {} : { compactionLock: { lock, leaseMs: Number(leaseArg), waitMs: Number(waitArg) } }),
  });
  const strategy = new RecursiveSummarizationCompactionStrategy({
    chatClient,
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: new CharacterTokenCountEstimator(),
    logger,
  });
  const tally: Record<string, number> = { committed: 0 };
  service.events.on('compactionCompleted', () => tally.committed!++);
  service.events.on('compactionSkipped', (e) => (tally[e.reason] = (tally[e.reason] ?? 0) + 1));
  const session = Session.create({ id: sessionId, userId: 'lock' });
  // Four processes create the session at once: only one insert may win, none may overwrite.
  if ((await repo.findById(sessionId)) === null) {
    await (isAtomicInsertRepository(repo) ? repo.saveIfAbsent(session) : repo.save(session));
  }
  await repo.findEvents(sessionId);
  out('ready');
  const input = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => input.once('line', () => resolve()));
  // An open stdin would keep the process alive after its last attempt.
  input.close();
  process.stdin.destroy();

  const attempts = Number(attemptsArg);
  // The holder to be killed needs a window with something to summarise on its only attempt.
  if (mode === 'hang') for (const event of turnEvents(sessionId, `${tag}-pre`, 0)) await service.appendEvent(event);
  for (let turn = 0; turn < attempts; turn++) {
    for (const event of turnEvents(sessionId, tag, turn)) await service.appendEvent(event);
    await service.compact(sessionId, () => true, strategy);
    await sleep(Math.random() * 4);
  }
  out(`tally ${JSON.stringify(tally)}`);
  await lock.close?.();
  await repo.close?.();
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
