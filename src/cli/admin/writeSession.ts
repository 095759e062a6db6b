import { IllegalStateError } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { isBatchAppendRepository } from '../../repository/BatchAppendRepository.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { SessionEvent } from '../../session/SessionEvent.js';
import { eventFingerprint, sessionFingerprint } from './canonical.js';
import type { SessionSnapshot } from './sessionSnapshot.js';

export interface WriteOptions {
  /** Events per appendEvents call; default 500. */
  batchSize?: number;
  /** Delete and rewrite a target session whose log is not a prefix of the snapshot's; default false (refuse). */
  overwrite?: boolean;
}

export interface WriteOutcome {
  sessionId: string;
  /** 'written': the target had none of the log; 'resumed': a prefix; 'unchanged': everything already. */
  status: 'written' | 'resumed' | 'unchanged' | 'overwritten';
  appended: number;
  /** Empty compactions that raised a new target's version to the snapshot's (see writeSession). */
  versionBumps: number;
}

/**
 * Makes the target hold exactly the snapshot's session and log, idempotently, so an import or copy that was
 * killed can simply run again:
 * - the session row is upserted (refused when the target's session belongs to another user);
 * - the target's log must be a prefix of the snapshot's (event by event, content included); the rest is
 *   appended in order with each event's archived flag, so order, ids and flags come out identical;
 * - versions never go down: a target that starts empty first takes `snapshot.version - events` empty
 *   compactions (each +1, touching no event), so after the appends its version equals the source's. When
 *   compactions left fewer version steps than events (summaries inserted by a compaction), the target's
 *   version ends higher than the source's, which a CAS client sees as "changed", never as "unchanged";
 * - an overwritten log's version is never reached again: the rewritten session ends above it (and so above
 *   the source's when the replaced one was higher), so a writer or an index holding the replaced log's
 *   version sees "changed".
 */
export async function writeSession(
  target: SessionRepository,
  snapshot: SessionSnapshot,
  options: WriteOptions = {},
): Promise<WriteOutcome> {
  const id = snapshot.session.id;
  const batchSize = options.batchSize ?? 500;
  const existing = await target.findById(id);
  if (existing !== null && existing.userId !== snapshot.session.userId && options.overwrite !== true) {
    throw new IllegalStateError(`session ${id} exists in the target with another owner; refusing to take it over`);
  }
  let current = existing === null ? [] : await target.findEvents(id, EventFilter.all());
  let overwritten = false;
  let replacedVersion = -1;
  const diverges =
    current.length > snapshot.events.length ||
    current.some((e, i) => eventFingerprint(e) !== eventFingerprint(snapshot.events[i]!));
  if (diverges || (existing !== null && existing.userId !== snapshot.session.userId)) {
    if (options.overwrite !== true) {
      throw new IllegalStateError(
        `session ${id}: the target's log differs from the source's; rerun with overwrite to replace it`,
      );
    }
    replacedVersion = await target.getEventVersion(id);
    await target.delete(id);
    current = [];
    overwritten = true;
  }
  const saved = existing === null || overwritten || sessionFingerprint(existing) !== sessionFingerprint(snapshot.session);
  if (saved) await target.save(snapshot.session);

  let versionBumps = 0;
  if (current.length === 0) {
    // A replaced log's version is never reached again: a CAS write or a warm recall index of the old log must
    // see "changed" (each append below adds one, so the base sits past the replaced version minus them).
    const base = Math.max(snapshot.version, replacedVersion + 1) - snapshot.events.length;
    let version = await target.getEventVersion(id);
    while (version < base) {
      // Nothing archived, nothing retained, on an empty log: only the version moves.
      if (await target.compactEvents(id, [], [], version)) versionBumps++;
      version = await target.getEventVersion(id);
    }
  }

  const rest = snapshot.events.slice(current.length);
  let appended = 0;
  for (let i = 0; i < rest.length; i += batchSize) appended += await appendAll(target, id, rest.slice(i, i + batchSize));
  const status = overwritten
    ? 'overwritten'
    : !saved && versionBumps === 0 && rest.length === 0
      ? 'unchanged'
      : current.length === 0
        ? 'written'
        : 'resumed';
  return { sessionId: id, status, appended, versionBumps };
}

/** The events follow the target's log, so each one is new. */
async function appendAll(target: SessionRepository, sessionId: string, events: readonly SessionEvent[]): Promise<number> {
  if (isBatchAppendRepository(target)) return target.appendEvents(sessionId, events);
  for (const e of events) await target.appendEvent(e);
  return events.length;
}
