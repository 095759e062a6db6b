/**
 * One of the two processes of the SQLite concurrency torture (sqlite-torture.test.ts). It runs its share of
 * appenders and compactors against the shared database file, each on its own connection, and prints one
 * JSON line with what it did and every invariant it saw violated.
 *
 *   node --import tsx tortureWorker.ts <path> <sessionId> <tag> <appenders> <compactors> <rounds> <startAt>
 */
import {
  DefaultSessionService,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  createDefaultLogger,
  type SessionEvent as Event,
} from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';

export interface TortureWorkerReport {
  tag: string;
  /** Event ids whose append resolved, per appender, in append order. */
  appended: string[][];
  replays: number;
  compactions: number;
  committed: number;
  lost: number;
  noops: number;
  versionSamples: number;
  violations: string[];
}

/** A real SQLite repository that remembers what its last compactEvents call returned. */
class RecordingRepository extends SqliteSessionRepository {
  lastCompaction: boolean | undefined;
  override async compactEvents(id: string, archived: readonly Event[], retained: readonly Event[], expected: number) {
    this.lastCompaction = await super.compactEvents(id, archived, retained, expected);
    return this.lastCompaction;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const [path, sessionId, tag, appendersArg, compactorsArg, roundsArg, startAtArg] = process.argv.slice(2);
  const appenders = Number(appendersArg);
  const compactors = Number(compactorsArg);
  const rounds = Number(roundsArg);
  const logger = createDefaultLogger({ silent: true });
  const open = () => new RecordingRepository({ path: path!, logger, busyTimeoutMs: 10_000 });
  const strategy = new SlidingWindowCompactionStrategy({ maxEvents: 6, tokenCountEstimator: new CharacterTokenCountEstimator() });
  const report: TortureWorkerReport = {
    tag: tag!,
    appended: Array.from({ length: appenders }, () => []),
    replays: 0,
    compactions: 0,
    committed: 0,
    lost: 0,
    noops: 0,
    versionSamples: 0,
    violations: [],
  };
  let appendersRunning = appenders;

  async function appender(w: number): Promise<void> {
    const service = new DefaultSessionService(open(), { logger });
    try {
      for (let r = 0; r < rounds; r++) {
        const turn = [
          SessionEvent.create({ sessionId: sessionId!, id: `${tag}a${w}-r${r}-u`, message: Messages.user(`q ${tag}${w}.${r}`) }),
          SessionEvent.create({
            sessionId: sessionId!,
            id: `${tag}a${w}-r${r}-a`,
            message: Messages.assistant(`a ${tag}${w}.${r}`),
          }),
        ];
        for (const e of turn) {
          await service.appendEvent(e);
          report.appended[w]!.push(e.id);
        }
        if (r % 5 === 4) {
          await service.appendEvent(turn[0]!);
          report.replays++;
        }
        await sleep(Math.random() * 6);
      }
    } finally {
      appendersRunning--;
    }
  }

  async function compactor(c: number): Promise<void> {
    const repo = open();
    const service = new DefaultSessionService(repo, { logger });
    for (let r = 0; ; r++) {
      const contended = appendersRunning > 0;
      repo.lastCompaction = undefined;
      // Odd compactors put the sliding window behind a short pause, as a real strategy's work (or an LLM call)
      // would: it widens the gap between reading the version and the CAS write, where others interleave.
      const result = await service.compact(
        sessionId!,
        () => true,
        async (request) => {
          if (c % 2 === 1) await sleep(Math.random() * 4);
          return strategy.compact(request);
        },
      );
      report.compactions++;
      if (repo.lastCompaction === true) {
        report.committed++;
        if (result.isNoop()) report.violations.push(`${tag} compactor ${c}: committed but returned a no-op result`);
      } else if (repo.lastCompaction === false) {
        report.lost++;
        if (!result.isNoop()) {
          report.violations.push(
            `${tag} compactor ${c}: lost the CAS race but returned ${result.archivedEvents.length} archived`,
          );
        }
      } else {
        report.noops++;
      }
      if (r + 1 >= rounds && !contended) break;
      await sleep(Math.random() * 5);
    }
  }

  let monitoring = true;
  async function versionMonitor(): Promise<void> {
    const repo = open();
    let last = 0;
    while (monitoring) {
      const v = await repo.getEventVersion(sessionId!);
      report.versionSamples++;
      if (v < last) report.violations.push(`${tag}: version went back from ${last} to ${v}`);
      last = Math.max(last, v);
      await sleep(1);
    }
  }

  // Both processes start together, after their (slow) module loading.
  await sleep(Math.max(0, Number(startAtArg) - Date.now()));
  const monitor = versionMonitor();
  await Promise.all([
    ...Array.from({ length: appenders }, (_, w) => appender(w)),
    ...Array.from({ length: compactors }, (_, c) => compactor(c)),
  ]);
  monitoring = false;
  await monitor;
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
