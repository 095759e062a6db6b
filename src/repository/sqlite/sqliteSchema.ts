import { InvalidArgumentError } from '../../errors.js';

const PREFIX_PATTERN = /^[a-z_][a-z0-9_]*$/i;

/** Table names derived from a validated prefix: the only identifiers ever interpolated into SQL. */
export interface SqliteTables {
  sessions: string;
  events: string;
  migrations: string;
}

export const DEFAULT_SQLITE_PREFIX = 'session_compaction';

/** Same naming as the PostgreSQL repository, so one prefix means the same tables on either backend. */
export function sqliteTables(prefix: string): SqliteTables {
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError(`prefix must match ${String(PREFIX_PATTERN)} (got '${String(prefix)}')`);
  }
  // SQLite identifiers are case-insensitive; folding keeps names and logs consistent.
  const p = prefix.toLowerCase();
  return { sessions: `${p}_sessions`, events: `${p}_events`, migrations: `${p}_migrations` };
}

export interface SqliteMigration {
  version: number;
  name: string;
  sql: (t: SqliteTables) => string;
}

/**
 * Append-only: a released migration is never edited, a schema change is a new entry. Each runs inside the
 * migrating transaction, so a crash leaves either all of it or none.
 */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = Object.freeze([
  {
    version: 1,
    name: 'sessions and events',
    sql: (t: SqliteTables) => `
      CREATE TABLE ${t.sessions} (
        id TEXT NOT NULL PRIMARY KEY,
        user_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        metadata TEXT NOT NULL DEFAULT '{}',
        event_version INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX ${t.sessions}_user_id ON ${t.sessions} (user_id);
      CREATE INDEX ${t.sessions}_expires_at ON ${t.sessions} (expires_at) WHERE expires_at IS NOT NULL;

      -- seq (AUTOINCREMENT: never reused) is the log order; event ids are unique per session only.
      CREATE TABLE ${t.events} (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        message_type TEXT NOT NULL CHECK (message_type IN ('user', 'assistant', 'system', 'tool')),
        text TEXT,
        data TEXT,
        synthetic INTEGER NOT NULL DEFAULT 0 CHECK (synthetic IN (0, 1)),
        archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
        branch TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, id)
      ) STRICT;
      -- The active window (compaction deletes and re-reads only these rows) ...
      CREATE INDEX ${t.events}_active ON ${t.events} (session_id, archived, seq);
      -- ... and the whole log in order (findEvents(all()), lastN over archived history).
      CREATE INDEX ${t.events}_log ON ${t.events} (session_id, seq);
    `,
  },
]);
