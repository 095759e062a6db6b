import { IllegalStateError } from '../../errors.js';
import { TOMBSTONE_SCHEMA_VERSION } from '../../repository/ErasureRepository.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import { isMigratableRepository } from '../../repository/MigratableRepository.js';

/**
 * Admin commands do not migrate, so the ones that delete first ask whether the store can keep tombstones
 * (schema version 3 applied); a store without a schema (memory, custom) always can.
 */
export async function hasTombstones(repository: SessionRepository): Promise<boolean> {
  const status = isMigratableRepository(repository) ? await repository.schemaStatus() : undefined;
  return status === undefined || !status.pending.some((step) => step.version === TOMBSTONE_SCHEMA_VERSION);
}

/** Erasure without tombstones would let a deleted id be taken again, so these commands refuse such a store. */
export async function requireTombstones(repository: SessionRepository, where: string, command: string): Promise<void> {
  if (await hasTombstones(repository)) return;
  throw new IllegalStateError(
    `${command} needs the tombstone schema (version ${TOMBSTONE_SCHEMA_VERSION}), which ${where} does not have yet: ` +
      'run `session-compaction migrate` on it first',
  );
}
