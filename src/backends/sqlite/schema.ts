import { InvalidArgumentError } from '../../errors.js';
import { COMPACTION_RECORD_SCHEMA_VERSION, COMPACTION_SUMMARY_SCHEMA_VERSION } from '../../repository/CompactionRecord.js';
import { TOMBSTONE_SCHEMA_VERSION, TOMBSTONED_MARKER } from '../../repository/ErasureRepository.js';
import { USER_ERASURE_SCHEMA_VERSION } from '../../repository/UserErasureRepository.js';
import { MAX_INDEXED_CHARACTERS } from '../../repository/eventSearch.js';

const PREFIX_PATTERN = /^[a-z_][a-z0-9_]*$/i;

/** Table names derived from a validated prefix: the only identifiers ever interpolated into SQL. */
export interface SqliteTables {
  sessions: string;
  events: string;
  migrations: string;
  /**
   * The contentless FTS5 index over each event's text and data (it stores words, not a copy of the text);
   * since schema version 5 it is told a deleted row's words (see FORGETTING_FTS_SCHEMA_VERSION).
   */
  fts: string;
  tombstones: string;
  compactions: string;
  /** Marks of user erasures in progress (UserErasureRepository), since USER_ERASURE_SCHEMA_VERSION. */
  userErasures: string;
}

export const DEFAULT_SQLITE_PREFIX = 'session_compaction';

/** Same naming as the PostgreSQL repository, so one prefix means the same tables on either backend. */
export function sqliteTables(prefix: string): SqliteTables {
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError(`prefix must match ${String(PREFIX_PATTERN)} (got '${String(prefix)}')`);
  }
  // SQLite identifiers are case-insensitive; folding keeps names and logs consistent.
  const p = prefix.toLowerCase();
  return {
    sessions: `${p}_sessions`,
    events: `${p}_events`,
    migrations: `${p}_migrations`,
    fts: `${p}_events_fts`,
    tombstones: `${p}_tombstones`,
    compactions: `${p}_compactions`,
    userErasures: `${p}_user_erasures`,
  };
}

/**
 * The schema version whose full-text index takes each deleted row's words out at delete time (FTS5
 * 'delete' commands with the old values; with `secureDelete`, FTS5's secure-delete mode removes them from
 * the index pages themselves).
 */
export const FORGETTING_FTS_SCHEMA_VERSION = 5;

/**
 * The schema version that adds each session's purge generation (`purge_generation`, see EventLogState):
 * what a reader compares, with the version, to see an archive purge in one row read.
 */
export const SQLITE_PURGE_GENERATION_SCHEMA_VERSION = 6;

/**
 * The schema version whose full-text index holds a bounded prefix of each event's searchable text
 * (MAX_INDEXED_CHARACTERS), as on every backend. Not 7: versions are unique across branches, and 7 and 8 are
 * left to work landing beside it (orderedMigrations applies a lower version a database lacks).
 */
export const BOUNDED_SEARCH_INDEX_SCHEMA_VERSION = 9;

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
  {
    version: 2,
    name: 'full-text index over event text and tool data',
    // A contentless index (the words, not a copy of the text) fed by triggers, so every write path — append,
    // compaction (which deletes the old active window and re-inserts the retained events under new seq
    // values), session delete (the cascade fires them) — keeps it exact inside the writing transaction;
    // archiving in place changes neither text nor data and touches no entry. An event is found by its text
    // and by the string values of its data (tool-call names and arguments, tool results, reasoning), so an
    // identifier seen only in a tool output can be recalled. The backfill indexes the events an existing
    // database already holds.
    sql: (t: SqliteTables) => {
      const body = searchableBody;
      return `
      CREATE VIRTUAL TABLE ${t.fts} USING fts5(
        body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER ${t.events}_fts_insert AFTER INSERT ON ${t.events} BEGIN
        INSERT INTO ${t.fts} (rowid, body) VALUES (new.seq, ${body('new')});
      END;
      CREATE TRIGGER ${t.events}_fts_delete AFTER DELETE ON ${t.events} BEGIN
        DELETE FROM ${t.fts} WHERE rowid = old.seq;
      END;
      CREATE TRIGGER ${t.events}_fts_update AFTER UPDATE OF text, data ON ${t.events} BEGIN
        DELETE FROM ${t.fts} WHERE rowid = old.seq;
        INSERT INTO ${t.fts} (rowid, body) VALUES (new.seq, ${body('new')});
      END;
      INSERT INTO ${t.fts} (rowid, body) SELECT e.seq, ${body('e')} FROM ${t.events} e;
    `;
    },
  },
  {
    version: TOMBSTONE_SCHEMA_VERSION,
    name: 'tombstones of deleted sessions',
    // The trigger makes the refusal atomic with every insert path (save, saveIfAbsent, a concurrent
    // process): a deleted id cannot come back between a check and a write.
    sql: (t: SqliteTables) => `
      CREATE TABLE ${t.tombstones} (
        id TEXT NOT NULL PRIMARY KEY,
        owner_hash TEXT NOT NULL,
        deleted_at INTEGER NOT NULL,
        expires_at INTEGER
      ) STRICT;
      CREATE INDEX ${t.tombstones}_expires_at ON ${t.tombstones} (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TRIGGER ${t.sessions}_tombstoned BEFORE INSERT ON ${t.sessions}
        WHEN EXISTS (SELECT 1 FROM ${t.tombstones} WHERE id = NEW.id)
        BEGIN SELECT RAISE(ABORT, '${TOMBSTONED_MARKER}'); END;
    `,
  },
  {
    version: COMPACTION_RECORD_SCHEMA_VERSION,
    name: 'compaction records (reversible compaction)',
    // One row per committed compaction, written in the compaction's transaction. The body holds the content of
    // the summaries the compaction removed, so the rows go with their session (ON DELETE CASCADE: delete,
    // erasure and expiry). version_after orders a session's compactions (versions only grow).
    sql: (t: SqliteTables) => `
      CREATE TABLE ${t.compactions} (
        session_id TEXT NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        version_after INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        reverted_at INTEGER,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
      ) STRICT;
      CREATE INDEX ${t.compactions}_order ON ${t.compactions} (session_id, version_after);
    `,
  },
  {
    version: FORGETTING_FTS_SCHEMA_VERSION,
    name: 'full-text index that forgets deleted rows at delete time',
    // Version 2's contentless_delete=1 index deletes by rowid only: FTS5 never learns a deleted row's words,
    // so they stay in the index pages until a merge rewrites them (secureDelete paid an 'optimize' of the
    // whole index per erasure for that). A plain contentless index is told the old values instead (the
    // 'delete' command, the same body expression as the insert), which lets FTS5's secure-delete mode remove
    // them from the pages at delete time. Rebuilt from the events, like version 2's backfill.
    sql: (t: SqliteTables) => {
      return contentlessFtsIndex(t, searchableBody);
    },
  },
  {
    version: SQLITE_PURGE_GENERATION_SCHEMA_VERSION,
    name: 'purge generation of each session',
    // An archive purge leaves the version alone (no compaction loses its CAS to retention), so a reader used
    // to count the session's events to notice one: a range scan per check, on the hot path of every recall
    // search. The purge bumps this column in its own transaction instead. A column with a constant default:
    // no row is rewritten. Existing sessions start at 0; a reader holding no earlier value re-reads anyway.
    sql: (t: SqliteTables) => `
      ALTER TABLE ${t.sessions} ADD COLUMN purge_generation INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: BOUNDED_SEARCH_INDEX_SCHEMA_VERSION,
    name: 'full-text index over a bounded prefix of each event',
    // The same prefix of the same searchable text as PostgreSQL (which refuses a tsvector over 1 MB) and the
    // in-process retriever, so a search finds the same events on every backend. The index is rebuilt: the
    // 'delete' command must be given exactly the words that were indexed, and the old rows were indexed whole.
    sql: (t: SqliteTables) => {
      return contentlessFtsIndex(t, (row) => `substr(${searchableBody(row)}, 1, ${MAX_INDEXED_CHARACTERS})`);
    },
  },
  {
    version: USER_ERASURE_SCHEMA_VERSION,
    name: 'marks of user erasures in a table of their own',
    // The marks were tombstone rows with the id 'user-erasure:<owner hash>' and the owner_hash 'user-erasure'
    // (literals here: a released migration never changes), an id a session could have. They move to a table
    // keyed by the owner hash, which no session id reaches; a mark still running keeps blocking its user. A
    // real tombstone's owner_hash is 64 hex digits, so no tombstone moves.
    sql: (t: SqliteTables) => `
      CREATE TABLE ${t.userErasures} (
        owner_hash TEXT NOT NULL PRIMARY KEY,
        marked_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      INSERT INTO ${t.userErasures} (owner_hash, marked_at, expires_at)
        SELECT substr(id, length('user-erasure:') + 1), deleted_at, expires_at FROM ${t.tombstones}
        WHERE owner_hash = 'user-erasure' AND id LIKE 'user-erasure:%' AND expires_at IS NOT NULL;
      DELETE FROM ${t.tombstones} WHERE owner_hash = 'user-erasure';
    `,
  },
  {
    version: COMPACTION_SUMMARY_SCHEMA_VERSION,
    name: 'summary of each compaction record',
    // A nullable column: no row is rewritten. Rows written before keep NULL and are summarised when listed.
    sql: (t: SqliteTables) => `
      ALTER TABLE ${t.compactions} ADD COLUMN summary TEXT;
    `,
  },
]);

/**
 * A contentless FTS5 index over `body(row)`, rebuilt from the events and kept in step by triggers that hand the
 * 'delete' command the words that were indexed (the same expression as the insert). Each migration that changes
 * what is indexed rebuilds it with its own expression.
 */
function contentlessFtsIndex(t: SqliteTables, body: (row: string) => string): string {
  return `
      DROP TRIGGER IF EXISTS ${t.events}_fts_insert;
      DROP TRIGGER IF EXISTS ${t.events}_fts_delete;
      DROP TRIGGER IF EXISTS ${t.events}_fts_update;
      DROP TABLE IF EXISTS ${t.fts};
      CREATE VIRTUAL TABLE ${t.fts} USING fts5(body, content='', tokenize='unicode61 remove_diacritics 2');
      CREATE TRIGGER ${t.events}_fts_insert AFTER INSERT ON ${t.events} BEGIN
        INSERT INTO ${t.fts} (rowid, body) VALUES (new.seq, ${body('new')});
      END;
      CREATE TRIGGER ${t.events}_fts_delete AFTER DELETE ON ${t.events} BEGIN
        INSERT INTO ${t.fts} (${t.fts}, rowid, body) VALUES ('delete', old.seq, ${body('old')});
      END;
      CREATE TRIGGER ${t.events}_fts_update AFTER UPDATE OF text, data ON ${t.events} BEGIN
        INSERT INTO ${t.fts} (${t.fts}, rowid, body) VALUES ('delete', old.seq, ${body('old')});
        INSERT INTO ${t.fts} (rowid, body) VALUES (new.seq, ${body('new')});
      END;
      INSERT INTO ${t.fts} (rowid, body) SELECT e.seq, ${body('e')} FROM ${t.events} e;
    `;
}

/** What the index holds of an event row: its text, then the string values of its data. */
function searchableBody(row: string): string {
  return `coalesce(${row}.text, '') || ' ' || coalesce((SELECT group_concat(value, ' ') FROM json_tree(CASE WHEN json_valid(${row}.data) THEN ${row}.data END) WHERE type = 'text'), '')`;
}
