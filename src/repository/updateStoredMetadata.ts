import type { Session } from '../session/Session.js';
import {
  isMetadataUpdatingRepository,
  type MetadataUpdatingRepository,
  type SessionMetadataUpdate,
} from './MetadataUpdatingRepository.js';
import type { SessionRepository } from './SessionRepository.js';

/**
 * Where session metadata is read and written: any repository, or an adapter with these methods. When it is
 * a MetadataUpdatingRepository (every built-in repository is) a write is atomic.
 */
export type SessionMetadataStore = Pick<SessionRepository, 'findById' | 'save'> & Partial<MetadataUpdatingRepository>;

/**
 * `update` applied to the stored session's metadata: atomically through `updateSessionMetadata` when the store
 * has it, else a findById then a save (where a concurrent update may be lost). Null when the session is missing.
 */
export async function updateStoredMetadata(
  store: SessionMetadataStore,
  sessionId: string,
  update: SessionMetadataUpdate,
): Promise<Session | null> {
  if (isMetadataUpdatingRepository(store)) return store.updateSessionMetadata(sessionId, update);
  const session = await store.findById(sessionId);
  return session === null ? null : store.save(session.with({ metadata: update(session.metadata) }));
}
