import type { SessionRepository } from '../../repository/SessionRepository.js';
import { isStorageReclaimingRepository } from '../../repository/StorageReclaimingRepository.js';

/**
 * After an erasure, redaction or retention pass: lets the store make the bytes just removed unrecoverable,
 * where it can (SQLite with secureDelete); a no-op for any other store.
 */
export async function reclaimStorage(repository: SessionRepository): Promise<void> {
  if (isStorageReclaimingRepository(repository)) await repository.reclaimStorage();
}
