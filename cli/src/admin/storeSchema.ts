import { IllegalStateError, type SessionRepository } from 'session-compaction';
import { isMigratableRepository, type SchemaStatus } from 'session-compaction/spi';
import { migrateCommandFor, type RepositoryLocation } from '../openRepository.js';

/**
 * Admin commands do not migrate. A store without any schema version (never migrated, or another prefix) is
 * refused before the command runs, naming `migrate`; returns the status, or null for a store without a
 * schema (memory, custom).
 */
export async function requireSchema(
  repository: SessionRepository,
  location: RepositoryLocation,
  where: string,
): Promise<SchemaStatus | null> {
  if (!isMigratableRepository(repository)) return null;
  const status = await repository.schemaStatus();
  if (status.applied.length === 0) {
    throw new IllegalStateError(
      `${where} holds no session-compaction schema (a store not created yet, or another --prefix): ` +
        `run \`${migrateCommandFor(location)}\` to create it`,
    );
  }
  return status;
}

/** The library's advice for code (`migrate()`, `initializeSchema`) replaced by the command to run. */
const CODE_ADVICE = /:? ?call migrate\(\) or construct with initializeSchema: true\.?/;

/**
 * The library's refusal of a store whose schema is behind it, as the command line says it: the command that
 * migrates the store instead of the API's options. Any other error is returned as it is.
 */
export function explainSchemaError(error: unknown, status: SchemaStatus | null, location: RepositoryLocation): unknown {
  if (!(error instanceof IllegalStateError) || !CODE_ADVICE.test(error.message)) return error;
  const pending =
    status === null || status.pending.length === 0
      ? ''
      : ` (pending schema versions: ${status.pending.map((s) => s.version).join(', ')})`;
  return new IllegalStateError(`${error.message.replace(CODE_ADVICE, '')}${pending}: run \`${migrateCommandFor(location)}\``, {
    cause: error,
  });
}
