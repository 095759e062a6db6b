/**
 * The victim of the crash tests (crashHarness.ts): appends turns and compacts in a loop until it is killed
 * with SIGKILL. It prints `ack <id>` only after an append resolved, `compacting` when a compaction starts and
 * `compacted` / `skipped` when it ends, so the parent knows a lower bound of what must have survived and
 * whether the kill hit a compaction in flight. It loads its modules, prints `ready`, and starts on `go`.
 *
 * In `fork` mode it forks the session again and again instead (`forking <id>` before, `forked <id>` after), so
 * that kills land inside a fork.
 *
 *   node --import tsx crashWorker.ts <sqlite|postgres|redis> <path or URL> <prefix> <sessionId> <tag> [fork]
 */
import { createInterface } from 'node:readline';
import { createDefaultLogger, DefaultSessionService, Session, type SessionRepository } from 'session-compaction';
import { faultStrategy, turnEvents } from './faultWorkload.js';

const logger = createDefaultLogger({ silent: true });

/** Only the backend under test is loaded, so a worker starts fast enough for many kills per test. */
async function open(backend: string, target: string, prefix: string, tag: string): Promise<SessionRepository> {
  switch (backend) {
    case 'sqlite': {
      const { SqliteSessionRepository } = await import('../../src/backends/sqlite/SqliteSessionRepository.js');
      return new SqliteSessionRepository({ path: target, logger });
    }
    case 'postgres': {
      const { PostgresSessionRepository } = await import('../../src/backends/postgres/PostgresSessionRepository.js');
      // Named after the victim, so that the parent can wait for the server to end its connections (crashHarness.ts).
      const url = new URL(target);
      url.searchParams.set('application_name', `${prefix}-${tag}`);
      return new PostgresSessionRepository({ connectionString: url.toString(), prefix, logger });
    }
    case 'redis': {
      const { RedisSessionRepository } = await import('../../src/backends/redis/RedisSessionRepository.js');
      return new RedisSessionRepository({ url: target, prefix, logger });
    }
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}

async function main(): Promise<void> {
  const [backend, target, prefix, sessionId, tag, mode] = process.argv.slice(2) as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  const repo = await open(backend, target, prefix, tag);
  const service = new DefaultSessionService(repo, { logger });
  const out = (line: string) => process.stdout.write(line + '\n');
  service.events.on('compactionStarted', () => out('compacting'));
  service.events.on('compactionCompleted', () => out('compacted'));
  service.events.on('compactionSkipped', (e) => e.reason !== 'trigger-not-fired' && out('skipped'));
  if ((await repo.findById(sessionId)) === null) await repo.save(Session.create({ id: sessionId, userId: 'crash' }));
  // Warm the connection and the statements before the parent starts its clock.
  await repo.findEvents(sessionId);
  out('ready');
  await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()));

  if (mode === 'fork') {
    for (let n = 0; ; n++) {
      const id = `${sessionId}-${tag}-fork-${n}`;
      out(`forking ${id}`);
      await service.forkSession(sessionId, { id });
      out(`forked ${id}`);
    }
  }
  for (let turn = 0; ; turn++) {
    for (const event of turnEvents(sessionId, tag, turn)) {
      await service.appendEvent(event);
      out(`ack ${event.id}`);
    }
    if (turn % 3 === 2) await service.compact(sessionId, () => true, faultStrategy(sessionId, tag, turn));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
