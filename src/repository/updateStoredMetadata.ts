import type { Session } from '../session/Session.js';
import type { SessionMetadataUpdate, SessionRepository } from './SessionRepository.js';

/**
 * Where session metadata is read and written: any repository, or an adapter with these methods. With the
 * optional `updateSessionMetadata` (every built-in repository has it) a write is atomic.
 */
export type SessionMetadataStore = Pick<SessionRepository, 'findById' | 'save' | 'updateSessionMetadata'>;

/**
 * `update` applied to the stored session's metadata: atomically through `updateSessionMetadata` when the store
 * has it, else a findById then a save (where a concurrent update may be lost). Null when the session is missing.
 */
export async function updateStoredMetadata(
  store: SessionMetadataStore,
  sessionId: string,
  update: SessionMetadataUpdate,
): Promise<Session | null> {
  if (typeof store.updateSessionMetadata === 'function') return store.updateSessionMetadata(sessionId, update);
  const session = await store.findById(sessionId);
  return session === null ? null : store.save(session.with({ metadata: update(session.metadata) }));
}
