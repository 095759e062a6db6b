import { hasMethods } from './hasMethods.js';

/**
 * A repository that can make the bytes of erased, rewritten or purged data unrecoverable from its own files
 * (SQLite with `secureDelete`). The service calls it once after each erasure, redaction and retention pass.
 */
export interface StorageReclaimingRepository {
  reclaimStorage(): Promise<void>;
}

/** Whether `repository` is a StorageReclaimingRepository: it has every one of its methods. */
export function isStorageReclaimingRepository<R>(repository: R): repository is R & StorageReclaimingRepository {
  return hasMethods(repository, ['reclaimStorage']);
}
