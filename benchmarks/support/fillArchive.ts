import { CompactionResult, SessionEvent, type DefaultSessionService, type Message } from 'session-compaction';
import type { BatchAppendRepository } from 'session-compaction/spi';

/**
 * Creates session `id` with `archived` archived events and an active window of `window` after them, the way a
 * long conversation gets there: batches of 2,000 appended, each followed by a compaction that archives all but
 * the last `keep` (so the archive is written by the library's own compaction path, not inserted as archived).
 * Texts cycle through `turns`.
 */
export async function fillArchive(
  service: DefaultSessionService,
  repository: BatchAppendRepository,
  id: string,
  archived: number,
  window: number,
  turns: readonly Message[],
): Promise<void> {
  await service.create({ id, userId: 'bench' });
  const total = archived + window;
  const batch = 2_000;
  for (let from = 0; from < total; from += batch) {
    const events: SessionEvent[] = [];
    for (let i = from; i < Math.min(total, from + batch); i++) {
      events.push(SessionEvent.create({ sessionId: id, id: `e${i}`, message: turns[i % turns.length]! }));
    }
    await repository.appendEvents(id, events);
    const keep = Math.max(window, total - (from + batch) + window);
    await service.compact(
      id,
      () => true,
      async (r) =>
        r.events.length <= keep
          ? CompactionResult.noop(r.events)
          : new CompactionResult(r.events.slice(-keep), r.events.slice(0, -keep), 0),
    );
  }
}
