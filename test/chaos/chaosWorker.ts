/**
 * One of the processes of the chaos run (chaosRun.ts). Until its deadline it picks operations at random and
 * runs them through the public service against the shared store: appends of whole turns (some with a tool
 * call and its result) to the shared sessions, compactions (a summarising strategy, `conflictPolicy:
 * 'rebase'`), reverts, redactions, archive purges, forks, creates of sessions of the current "victim" user,
 * erasures of the previous victim user and re-imports of an exported victim session (what `import` does).
 * It prints one line per fact the parent's history checker needs:
 *
 *   ack <sessionId> <eventId> <timestamp>    an append resolved (after retries with the same id)
 *   purge <cutoff>                           an archive purge of events older than cutoff (ms) may have run
 *   erase <userId> <start> <token>           eraseUser(userId) starts at `start` (ms)
 *   erased <token>                           … and returned
 *   op <name> / done                         a lifecycle operation in flight (the parent aims its kills there)
 *   error <op> <ErrorClass> <message>        an operation failed with an error the library documents
 *   violation <text>                         something that must never happen, seen from inside the process
 *
 * It loads, prints `ready`, and starts on a line `go <deadline ms>`.
 *
 *   node chaosWorker.js <sqlite|postgres|redis> <path or URL> <prefix> <tag> <mainSessions> <runId>
 */
import { createInterface } from 'node:readline';
import {
  DefaultSessionService,
  ExtractiveSummarizer,
  IllegalStateError,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  RepositoryConnectionError,
  SessionEvent,
  createDefaultLogger,
  type SessionRepository,
} from 'session-compaction';
import { readSnapshot } from '../../cli/src/admin/sessionSnapshot.js';
import { writeSession } from '../../cli/src/admin/writeSession.js';

const logger = createDefaultLogger({ silent: true });
/** How old an archived event must be before a purge may remove it. */
export const PURGE_AGE_MS = 20_000;
/** How long one victim user lives before another process erases them. */
export const VICTIM_EPOCH_MS = 4_000;

export function victimUser(runId: string, epoch: number): string {
  return `victim-${runId}-${epoch}`;
}

async function open(backend: string, target: string, prefix: string, tag: string): Promise<SessionRepository> {
  switch (backend) {
    case 'sqlite': {
      const { SqliteSessionRepository } = await import('../../src/backends/sqlite/SqliteSessionRepository.js');
      return new SqliteSessionRepository({ path: target, logger, busyTimeoutMs: 30_000 });
    }
    case 'postgres': {
      const { PostgresSessionRepository } = await import('../../src/backends/postgres/PostgresSessionRepository.js');
      // Named after the process, so that the parent can kill its connections.
      const url = new URL(target);
      url.searchParams.set('application_name', `${prefix}-${tag}`);
      return new PostgresSessionRepository({ connectionString: url.toString(), prefix, logger });
    }
    case 'redis': {
      const { RedisSessionRepository } = await import('../../src/backends/redis/RedisSessionRepository.js');
      const url = new URL(target);
      url.searchParams.set('connectionName', `${prefix}-${tag}`);
      return new RedisSessionRepository({ url: url.toString(), prefix, logger, commandTimeoutMs: 10_000 });
    }
    default:
      throw new Error(`unknown backend ${backend}`);
  }
}

/**
 * A shared Redis server busy with another client's long script (BUSY) refuses every command for a while: the
 * machine's other work, not this library's fault. Counted apart, never as a violation.
 */
const busyServer = (error: unknown) => error instanceof Error && error.message.startsWith('BUSY ');

const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(Math.random() * items.length)];
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const [backend, target, prefix, tag, mainArg, runId] = process.argv.slice(2) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const mainSessions = mainArg.split(',');
  const repo = await open(backend, target, prefix, tag);
  const service = new DefaultSessionService(repo, { logger, conflictPolicy: 'rebase' });
  const out = (line: string) => process.stdout.write(line + '\n');
  const strategy = new RecursiveSummarizationCompactionStrategy({
    chatClient: new ExtractiveSummarizer(),
    maxEventsToKeep: 6,
    overlapSize: 0,
  });
  // Warms the connection; the parent may kill it meanwhile (a documented, retriable failure).
  for (let attempt = 0; ; attempt++) {
    try {
      await repo.findById(mainSessions[0]!);
      break;
    } catch (error) {
      if (!(error instanceof RepositoryConnectionError) || attempt >= 20) throw error;
    }
  }
  out('ready');
  const go = await new Promise<string>((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
  const deadline = Number(go.split(' ')[1]);

  const lastVersion = new Map<string, number>();
  const acked: Array<[string, string]> = [];
  const victims: string[] = [];
  let turn = 0;

  /** An append repeated with the same id until it is acknowledged (or the session is gone). */
  const append = async (event: SessionEvent): Promise<boolean> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await service.appendEvent(event);
        out(`ack ${event.sessionId} ${event.id} ${event.timestamp.getTime()}`);
        acked.push([event.sessionId, event.id]);
        return true;
      } catch (error) {
        if (error instanceof RepositoryConnectionError || busyServer(error)) continue;
        throw error;
      }
    }
    return false;
  };

  const appendTurn = async (sessionId: string) => {
    const t = `${tag}-${turn++}`;
    const at = () => new Date();
    const events = [SessionEvent.create({ sessionId, id: `${t}-u`, timestamp: at(), message: Messages.user(`question ${t}`) })];
    if (Math.random() < 0.4) {
      events.push(
        SessionEvent.create({
          sessionId,
          id: `${t}-c`,
          timestamp: at(),
          message: Messages.assistant(null, { toolCalls: [Messages.toolCall(`${t}-call`, 'lookup', `{"q":"${t}"}`)] }),
        }),
        SessionEvent.create({
          sessionId,
          id: `${t}-r`,
          timestamp: at(),
          message: Messages.tool([Messages.toolResponse(`${t}-call`, 'lookup', `result ${t}`)]),
        }),
      );
    }
    events.push(SessionEvent.create({ sessionId, id: `${t}-a`, timestamp: at(), message: Messages.assistant(`answer ${t}`) }));
    for (const e of events) if (!(await append(e))) return;
  };

  const epoch = () => Math.floor(Date.now() / VICTIM_EPOCH_MS);

  const operations: Array<[number, string, () => Promise<void>]> = [
    [30, 'append', () => appendTurn(pick(mainSessions)!)],
    [10, 'compact', async () => void (await service.compact(pick(mainSessions)!, () => true, strategy))],
    [
      4,
      'revert',
      async () => {
        const id = pick(mainSessions)!;
        const records = (await service.listCompactions!(id)).filter((r) => r.revertedAt === null);
        const newest = records[0];
        if (newest !== undefined) await service.revertCompaction!(id, newest.id);
      },
    ],
    [
      4,
      'redact',
      async () => {
        const [sessionId, eventId] = pick(acked) ?? [];
        if (sessionId !== undefined && eventId !== undefined) await service.redactEvent(sessionId, eventId, { reason: 'chaos' });
      },
    ],
    [
      2,
      'purge',
      async () => {
        const now = Date.now();
        out(`purge ${now - PURGE_AGE_MS}`);
        // The cutoff the parent allows for is exactly the one used: the service's clock is pinned to `now`.
        const purger = new DefaultSessionService(repo, { logger, now: () => new Date(now) });
        await purger.applyRetention({ archivedEventsOlderThanMs: PURGE_AGE_MS });
      },
    ],
    [
      8,
      'create',
      async () => {
        const s = await service.create({ userId: victimUser(runId, epoch()) });
        victims.push(s.id);
        await appendTurn(s.id);
      },
    ],
    [
      8,
      'victim-append',
      async () => {
        const id = pick(victims.slice(-6));
        if (id !== undefined) await appendTurn(id);
      },
    ],
    [
      8,
      'fork',
      async () => {
        const sources = [
          ...(await service.findByUserId(victimUser(runId, epoch() - 1))),
          ...(await service.findByUserId(victimUser(runId, epoch()))),
        ];
        const source = pick(sources);
        if (source === undefined) return;
        out('op fork');
        await service.forkSession!(source.id);
        out('done');
      },
    ],
    [
      5,
      'erase',
      async () => {
        const user = victimUser(runId, epoch() - 1);
        const token = `${tag}-${turn++}`;
        out('op erase');
        out(`erase ${user} ${Date.now()} ${token}`);
        await service.eraseUser(user);
        out(`erased ${token}`);
        out('done');
      },
    ],
    [
      4,
      'import',
      async () => {
        const id = pick(victims);
        if (id === undefined) return;
        const snapshot = await readSnapshot(repo, id);
        if (snapshot === null) return;
        out('op import');
        // Written back later, as an import of an export taken before an erasure would be.
        await sleep(Math.random() * 1500);
        await writeSession(repo, snapshot);
        out('done');
      },
    ],
  ];
  const total = operations.reduce((sum, [w]) => sum + w, 0);

  while (Date.now() < deadline) {
    let r = Math.random() * total;
    const [, name, run] = operations.find(([w]) => (r -= w) < 0) ?? operations[0]!;
    try {
      await run();
    } catch (error) {
      if (
        error instanceof RepositoryConnectionError ||
        error instanceof IllegalStateError ||
        error instanceof InvalidArgumentError ||
        busyServer(error)
      ) {
        const kind = busyServer(error) ? 'RedisBusy(environment)' : (error as Error).constructor.name;
        out(`error ${name} ${kind} ${(error as Error).message.replace(/\s+/g, ' ').slice(0, 200)}`);
      } else {
        out(
          `violation ${name} threw ${(error as Error).constructor?.name}: ${String((error as Error).message ?? error).slice(0, 300)}`,
        );
      }
    }
    for (const id of mainSessions) {
      try {
        const version = await repo.getEventVersion(id);
        const last = lastVersion.get(id) ?? 0;
        if (version < last) out(`violation version of ${id} went down from ${last} to ${version}`);
        lastVersion.set(id, Math.max(last, version));
      } catch (error) {
        if (!(error instanceof RepositoryConnectionError) && !busyServer(error)) throw error;
      }
    }
  }
  await repo.close?.();
  out('finished');
  // stdin (the `go` line's reader) would keep the process alive.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stdout.write(`violation worker crashed: ${String((error as Error).stack ?? error).replace(/\n/g, ' | ')}\n`);
  process.exit(1);
});
