import type { Logger, SessionRepository } from 'session-compaction';
import type { SchemaStatus } from 'session-compaction/spi';
import { explainSchemaError, requireSchema } from './admin/storeSchema.js';
import type { CliIo } from './CliIo.js';
import { describeLocation, openRepository, type OpenOptions, type RepositoryLocation } from './openRepository.js';

/** What every admin command gets: where to write, the library logger, and the exit code to set. */
export class AdminContext {
  exitCode = 0;

  constructor(
    readonly io: CliIo,
    readonly logger: Logger,
  ) {}

  /**
   * Opens the repository, runs `work`, and always closes it (connections would keep the process alive). A
   * command that neither migrates nor creates (`initializeSchema`, `createIfMissing`) gets only a store that
   * exists and has a schema; errors about a schema behind the library name `session-compaction migrate`.
   */
  async withRepository<T>(
    url: string,
    options: Omit<OpenOptions, 'logger'>,
    work: (repository: SessionRepository, where: string, location: RepositoryLocation) => Promise<T>,
  ): Promise<T> {
    const { repository, location } = await openRepository(url, { ...options, logger: this.logger });
    const where = describeLocation(location);
    let status: SchemaStatus | null = null;
    try {
      if (options.initializeSchema !== true && options.createIfMissing !== true)
        status = await requireSchema(repository, location, where);
      return await work(repository, where, location);
    } catch (error) {
      throw explainSchemaError(error, status, location);
    } finally {
      await repository.close?.();
    }
  }

  /** 1 = the command found a problem (a violation, a mismatch); errors exit with 2. */
  fail(): void {
    this.exitCode = Math.max(this.exitCode, 1);
  }
}

/** Options every admin command that opens one store takes. */
export interface UrlFlags {
  url: string;
  prefix?: string;
  json?: boolean;
  progress?: boolean;
}
