import { hasMethods } from './hasMethods.js';

/**
 * What a reader of the log compares to tell whether something it derived from it (a search index) is stale:
 * the CAS version, which every append, compaction and rewrite bumps, and the purge generation, which counts
 * the operations that remove events without bumping it — archive purges (retention), which leave the
 * version alone so that no compaction loses its CAS to them. Both are plain values on the session, so the
 * read costs the same whatever the log's length.
 */
export interface EventLogState {
  /** As `getEventVersion`: 0 for a missing session. */
  version: number;
  /**
   * Archive purges that removed at least one event, counted per session (0 for a missing session or one
   * never purged); it never decreases while the session exists, and appends and compactions leave it
   * alone. Null when the store cannot tell (a repository without the counter, a store whose schema
   * predates it): a reader then has the version alone.
   */
  purgeGeneration: number | null;
}

/**
 * A repository that reports the version and the purge generation together, so that an index in any process
 * (and `forkSession`) sees an archive purge, which does not change the version. Without it, readers compare
 * the version alone.
 */
export interface EventLogStateRepository {
  /**
   * The version and the purge generation, read together (one consistent read). `{ version: 0,
   * purgeGeneration: 0 }` when the session is missing.
   */
  getEventLogState(id: string): Promise<EventLogState>;
}

/** Whether `repository` is an EventLogStateRepository: it has every one of its methods. */
export function isEventLogStateRepository<R>(repository: R): repository is R & EventLogStateRepository {
  return hasMethods(repository, ['getEventLogState']);
}
