import { eventFingerprint, sessionFingerprint } from './canonical.js';
import type { SessionSnapshot } from './sessionSnapshot.js';

export interface SessionMismatch {
  sessionId: string;
  reason: string;
}

/**
 * Null when `target` holds the same session and the same log as `source` (ids, order, archived flags and
 * every field of every event) at a version no lower than the source's; else why not.
 */
export function compareSnapshots(source: SessionSnapshot, target: SessionSnapshot | null): SessionMismatch | null {
  const sessionId = source.session.id;
  const mismatch = (reason: string) => ({ sessionId, reason });
  if (target === null) return mismatch('missing in the target');
  if (sessionFingerprint(source.session) !== sessionFingerprint(target.session)) return mismatch('session fields differ');
  if (source.events.length !== target.events.length)
    return mismatch(`${source.events.length} events in the source, ${target.events.length} in the target`);
  for (let i = 0; i < source.events.length; i++) {
    const s = source.events[i]!;
    const t = target.events[i]!;
    if (s.id !== t.id) return mismatch(`event ${i} is ${s.id} in the source, ${t.id} in the target`);
    if (s.archived !== t.archived) return mismatch(`event ${s.id} is ${s.archived ? '' : 'not '}archived in the source only`);
    if (eventFingerprint(s) !== eventFingerprint(t)) return mismatch(`event ${s.id} differs`);
  }
  if (target.version < source.version)
    return mismatch(`target version ${target.version} is lower than the source's ${source.version}`);
  return null;
}
