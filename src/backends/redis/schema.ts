import type { Redis } from 'ioredis';

/** What a Redis migration step gets: the client and the repository's key prefix. */
export interface RedisMigrationContext {
  client: Redis;
  prefix: string;
}

export interface RedisMigration {
  version: number;
  name: string;
  /** What the step changes, as `migrate --dry-run` prints it. */
  statements: readonly string[];
  /**
   * Rewrites keys. Redis cannot roll a multi-key change back, so a step must be idempotent: a run cut short
   * is simply run again, since its version is recorded only after it finishes.
   */
  run?: (context: RedisMigrationContext) => Promise<void>;
}

/**
 * Append-only, like the SQL lists: a released step is never edited, a layout change is a new version.
 * Version 1 is the layout that existed before versions were recorded, so recording it changes no key.
 */
export const REDIS_MIGRATIONS: readonly RedisMigration[] = Object.freeze([
  {
    version: 1,
    name: 'sessions and events',
    statements: [
      '<prefix>:{<id>}:session hash (userId, createdAt, expiresAt, metadata, version)',
      '<prefix>:{<id>}:events hash (event id -> archived flag + JSON), :active and :archived id lists, :pending set',
      '<prefix>:user:<userId> set of session ids, <prefix>:expiry sorted set (expiresAt)',
    ],
  },
  {
    // No key changes: the new hash appears with a session's first recorded compaction. Recording the version
    // keeps an older release (whose delete would leave the records, and their content, behind) off these keys.
    version: 2,
    name: 'compaction records (reversible compaction)',
    statements: ["<prefix>:{<id>}:compactions hash ('c:<compaction id>' -> record JSON, 'r:<compaction id>' -> reverted at)"],
  },
  {
    // No key changes: the field appears with a session's first archive purge (absent reads as 0). Recording
    // the version keeps an older release, whose purges would not count, off these keys.
    version: 3,
    name: 'purge generation of each session',
    statements: ["<prefix>:{<id>}:session hash field 'purgeGeneration' (archive purges that removed events)"],
  },
  {
    // No key changes: the set appears with a session's next compaction or metadata write, and the hash fields
    // it replaces are dropped by those writes. Recording the version keeps an older release off these keys: its
    // delete would leave the set behind, and its re-sent metadata writes, looking for their token in a field
    // this version drops, could apply twice.
    version: 4,
    name: 'applied-write tokens of each session',
    statements: [
      '<prefix>:{<id>}:applied sorted set (token of each compaction and metadata write -> applied at, ms; ' +
        "expires a retention period after the newest), replacing the session hash fields 'compaction' and 'metadataWrite'",
    ],
  },
]);
