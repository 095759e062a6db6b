/**
 * The victim of the SQLite crash test (sqlite-crash.test.ts): appends turns and compacts in a loop until it
 * is killed with SIGKILL. It prints `ack <id>` only after an append resolved and `compacted` only after a
 * compaction committed, so the parent knows a lower bound of what must have survived.
 *
 *   node --import tsx sqlite-worker-crash.ts <path> <sessionId> <tag>
 */
import {
  CharacterTokenCountEstimator,
  CompactionResult,
  DefaultSessionService,
  Messages,
  Session,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  createDefaultLogger,
  isTurnStart,
  type CompactionRequest,
  type SessionEvent as Event,
} from '../../src/index.js';

class RecordingRepository extends SqliteSessionRepository {
  lastCompaction: boolean | undefined;
  override async compactEvents(id: string, archived: readonly Event[], retained: readonly Event[], expected: number) {
    this.lastCompaction = await super.compactEvents(id, archived, retained, expected);
    return this.lastCompaction;
  }
}

async function main(): Promise<void> {
  const [path, sessionId, tag] = process.argv.slice(2) as [string, string, string];
  const logger = createDefaultLogger({ silent: true });
  const repo = new RecordingRepository({ path, logger });
  const service = new DefaultSessionService(repo, { logger });
  if ((await repo.findById(sessionId)) === null) await repo.save(Session.create({ id: sessionId, userId: 'crash' }));
  const sliding = new SlidingWindowCompactionStrategy({ maxEvents: 4, tokenCountEstimator: new CharacterTokenCountEstimator() });
  const out = (line: string) => process.stdout.write(line + '\n');
  out('ready');

  for (let turn = 0; ; turn++) {
    for (const [kind, message] of [
      ['u', Messages.user(`question ${tag}.${turn}`)],
      ['a', Messages.assistant(`answer ${tag}.${turn}`)],
    ] as const) {
      const id = `${tag}-${turn}-${kind}`;
      await service.appendEvent(SessionEvent.create({ sessionId, id, message }));
      out(`ack ${id}`);
    }
    if (turn % 3 !== 2) continue;
    repo.lastCompaction = undefined;
    // Alternate the sliding window with a summarising cut, whose new summary supersedes (hard-deletes) the last one.
    const strategy =
      turn % 2 === 0
        ? sliding
        : async (request: CompactionRequest) => {
            const events = request.events;
            const starts = events.flatMap((e, i) => (isTurnStart(e) ? [i] : []));
            if (starts.length < 3) return CompactionResult.noop(events);
            const cut = starts[starts.length - 2]!;
            const summary = SessionEvent.create({
              sessionId,
              id: `${tag}-summary-${turn}`,
              message: Messages.assistant(`summary up to ${tag}.${turn}`),
              metadata: { synthetic: true, compactionSource: 'crash-test' },
            });
            const archived = events.slice(0, cut).filter((e) => !e.isSynthetic());
            return new CompactionResult([summary, ...events.slice(cut)], archived, 0);
          };
    await service.compact(sessionId, () => true, strategy);
    if (repo.lastCompaction === true) out('compacted');
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
