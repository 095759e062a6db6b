import { InvalidArgumentError } from '../../errors.js';
import { COMPACTION_RECORD_SCHEMA_VERSION, COMPACTION_SUMMARY_SCHEMA_VERSION } from '../../repository/CompactionRecord.js';
import { TOMBSTONE_SCHEMA_VERSION, TOMBSTONED_MARKER } from '../../repository/ErasureRepository.js';
import { USER_ERASURE_SCHEMA_VERSION } from '../../repository/UserErasureRepository.js';
import { MAX_INDEXED_CHARACTERS } from '../../repository/eventSearch.js';

/** Table and index names derived from a validated prefix: the only identifiers ever interpolated into SQL. */
export interface PostgresTables {
  prefix: string;
  sessions: string;
  events: string;
  migrations: string;
  tombstones: string;
  compactions: string;
  /** Marks of user erasures in progress (UserErasureRepository), since USER_ERASURE_SCHEMA_VERSION. */
  userErasures: string;
  /** Each event's distinct words, in impact order per session and word, since EVENT_TERMS_SCHEMA_VERSION. */
  eventTerms: string;
}

const PREFIX = /^[a-z_][a-z0-9_]*$/i;
/** PostgreSQL truncates identifiers at 63 bytes; the longest derived name adds 24 characters. */
const MAX_PREFIX_LENGTH = 39;

export function postgresTables(prefix: string): PostgresTables {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix) || prefix.length > MAX_PREFIX_LENGTH) {
    throw new InvalidArgumentError(
      `prefix must match ${String(PREFIX)} and be at most ${MAX_PREFIX_LENGTH} characters (got '${String(prefix)}')`,
    );
  }
  // Unquoted identifiers fold to lower case; folding here keeps names, logs and the advisory-lock key consistent.
  const p = prefix.toLowerCase();
  return {
    prefix: p,
    sessions: `${p}_sessions`,
    events: `${p}_events`,
    migrations: `${p}_migrations`,
    tombstones: `${p}_tombstones`,
    compactions: `${p}_compactions`,
    userErasures: `${p}_user_erasures`,
    eventTerms: `${p}_event_terms`,
  };
}

/**
 * The schema version that adds each session's purge generation (`purge_generation`, see EventLogState):
 * what a reader compares, with the version, to see an archive purge in one row read.
 */
export const POSTGRES_PURGE_GENERATION_SCHEMA_VERSION = 5;

/**
 * The schema version whose full-text column holds a bounded prefix of each event's searchable text
 * (MAX_INDEXED_CHARACTERS): a 600 KB tool result or 2 MB of prose no longer exceeds PostgreSQL's 1 MB
 * tsvector limit. Not 6: versions are unique across branches, and 6–8 are left to work landing beside it.
 */
export const BOUNDED_SEARCH_INDEX_SCHEMA_VERSION = 9;

/**
 * The schema version that keeps each event's words in a postings table (`eventTerms`), written by triggers on
 * the events table: what lets a session search read a bounded number of events per query word (see
 * buildSearchQuery). Not 6–8 (left to work landing beside version 9), 10 and 11 are taken.
 */
export const EVENT_TERMS_SCHEMA_VERSION = 12;

/**
 * The schema version whose postings hold only the events a session search can return on the main line: archived,
 * on no branch, and not a shadow prompt. A search then scores its hits from the postings alone (buildSearchQuery).
 */
export const SEARCHABLE_POSTINGS_SCHEMA_VERSION = 13;

/** Whether a row (`NEW`, `OLD`, an alias) has postings since SEARCHABLE_POSTINGS_SCHEMA_VERSION. */
const posted = (row: string): string =>
  `(${row}.archived AND ${row}.branch IS NULL AND NOT (${row}.synthetic AND ${row}.message_type = 'user'))`;

export interface Migration {
  version: number;
  name: string;
  statements: (t: PostgresTables) => string[];
}

/**
 * Append-only: a released migration is never edited, a change is a new version.
 *
 * - `seq` (identity) is the log order; retained events are re-inserted with new values on compaction.
 * - `text_lc` is the text lower-cased by JavaScript's `toLowerCase()`: PostgreSQL's `lower()` depends on the
 *   server's locale (under C.UTF-8 it maps 'İ' to 'i' and never produces a final sigma) and would make
 *   keyword search disagree with the in-memory repository.
 * - `(session_id, archived, seq)` serves the active window and compaction's delete; `(session_id, seq)` serves
 *   whole-log reads and lastN without sorting; both keep compaction independent of the archive's size.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions and events',
    statements: (t) => [
      `CREATE TABLE ${t.sessions} (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ,
        metadata JSONB NOT NULL DEFAULT '{}'::jsonb,
        event_version BIGINT NOT NULL DEFAULT 0
      )`,
      `CREATE INDEX ${t.prefix}_sessions_user_idx ON ${t.sessions} (user_id)`,
      `CREATE INDEX ${t.prefix}_sessions_expires_idx ON ${t.sessions} (expires_at) WHERE expires_at IS NOT NULL`,
      `CREATE TABLE ${t.events} (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        message_type TEXT NOT NULL CHECK (message_type IN ('user', 'assistant', 'system', 'tool')),
        text TEXT,
        text_lc TEXT,
        data JSONB,
        synthetic BOOLEAN NOT NULL DEFAULT FALSE,
        archived BOOLEAN NOT NULL DEFAULT FALSE,
        branch TEXT,
        metadata JSONB NOT NULL DEFAULT '{}'::jsonb,
        "timestamp" TIMESTAMPTZ NOT NULL,
        CONSTRAINT ${t.prefix}_events_session_event_uq UNIQUE (session_id, id)
      )`,
      `CREATE INDEX ${t.prefix}_events_window_idx ON ${t.events} (session_id, archived, seq)`,
      `CREATE INDEX ${t.prefix}_events_log_idx ON ${t.events} (session_id, seq)`,
    ],
  },
  {
    version: 2,
    name: 'full-text index over event text and tool data',
    // A stored generated column: PostgreSQL fills it for the rows an existing database holds (the backfill)
    // and keeps it current on every insert and update, so no write path can forget it; ranking reads it
    // instead of re-parsing each matching text. It holds the words of the text and of the string values of
    // the data (tool-call names and arguments, tool results, reasoning), so an identifier seen only in a tool
    // output can be recalled. The 'simple' configuration lower-cases words and neither stems nor drops stop
    // words: language-neutral, and the same words match as in the SQLite index.
    statements: (t) => [
      `ALTER TABLE ${t.events} ADD COLUMN text_tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, coalesce(text, ''))
          || jsonb_to_tsvector('simple'::regconfig, coalesce(data, '{}'::jsonb), '["string"]')) STORED`,
      `CREATE INDEX ${t.prefix}_events_text_tsv_idx ON ${t.events} USING GIN (text_tsv)`,
    ],
  },
  {
    version: TOMBSTONE_SCHEMA_VERSION,
    name: 'tombstones of deleted sessions',
    // The trigger makes the refusal atomic with every insert path. It takes the same per-id advisory lock
    // as eraseSession, so an insert racing an erasure either lands first (and is erased) or sees the tombstone.
    statements: (t) => [
      `CREATE TABLE ${t.tombstones} (
        id TEXT PRIMARY KEY,
        owner_hash TEXT NOT NULL,
        deleted_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ
      )`,
      `CREATE INDEX ${t.prefix}_tombstones_expires_idx ON ${t.tombstones} (expires_at) WHERE expires_at IS NOT NULL`,
      `CREATE FUNCTION ${t.prefix}_refuse_tombstoned() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('${t.tombstones}'), hashtext(NEW.id));
        IF EXISTS (SELECT 1 FROM ${t.tombstones} WHERE id = NEW.id) THEN
          RAISE EXCEPTION '${TOMBSTONED_MARKER}' USING ERRCODE = 'P0001';
        END IF;
        RETURN NEW;
      END
      $fn$`,
      `CREATE TRIGGER ${t.prefix}_sessions_tombstoned BEFORE INSERT ON ${t.sessions}
        FOR EACH ROW EXECUTE FUNCTION ${t.prefix}_refuse_tombstoned()`,
    ],
  },
  {
    version: COMPACTION_RECORD_SCHEMA_VERSION,
    name: 'compaction records (reversible compaction)',
    // One row per committed compaction, written in the compaction's transaction. The body (TEXT: it is only
    // ever read whole) holds the content of the summaries the compaction removed, so rows go with their
    // session (ON DELETE CASCADE); archived_ids lets retention drop the records whose events it purged.
    statements: (t) => [
      `CREATE TABLE ${t.compactions} (
        session_id TEXT NOT NULL REFERENCES ${t.sessions} (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        version_after BIGINT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        reverted_at TIMESTAMPTZ,
        archived_ids TEXT[] NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, id)
      )`,
      `CREATE INDEX ${t.prefix}_compactions_order_idx ON ${t.compactions} (session_id, version_after)`,
    ],
  },
  {
    version: POSTGRES_PURGE_GENERATION_SCHEMA_VERSION,
    name: 'purge generation of each session',
    // An archive purge leaves the version alone (no compaction loses its CAS to retention), so a reader used
    // to count the session's events to notice one: an index scan per check, on the hot path of every recall
    // search. The purge bumps this column in its own transaction instead. A constant default makes the
    // ALTER a catalog change (no table rewrite). Existing sessions start at 0.
    statements: (t) => [`ALTER TABLE ${t.sessions} ADD COLUMN purge_generation BIGINT NOT NULL DEFAULT 0`],
  },
  {
    version: BOUNDED_SEARCH_INDEX_SCHEMA_VERSION,
    name: 'full-text index over a bounded prefix of each event',
    // The searchable text is the text, then the string values of the data (as in version 2 and in SQLite),
    // cut at MAX_INDEXED_CHARACTERS before it is parsed: the whole event is still stored, only words past the
    // prefix are not indexed. A generated column may call only immutable functions, hence the SQL function
    // (jsonb_path_query is immutable). Re-adding the column rewrites the table once, like version 2.
    statements: (t) => [
      `CREATE OR REPLACE FUNCTION ${t.prefix}_searchable_text(body TEXT, data JSONB) RETURNS TEXT
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
          SELECT left(coalesce(body, '') || ' ' || coalesce((
            SELECT string_agg(v #>> '{}', ' ') FROM jsonb_path_query(coalesce(data, '{}'::jsonb), 'strict $.**') AS v
            WHERE jsonb_typeof(v) = 'string'), ''), ${MAX_INDEXED_CHARACTERS})
        $fn$`,
      `ALTER TABLE ${t.events} DROP COLUMN text_tsv`,
      `ALTER TABLE ${t.events} ADD COLUMN text_tsv tsvector
        GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, ${t.prefix}_searchable_text(text, data))) STORED`,
      `CREATE INDEX ${t.prefix}_events_text_tsv_idx ON ${t.events} USING GIN (text_tsv)`,
    ],
  },
  {
    version: USER_ERASURE_SCHEMA_VERSION,
    name: 'marks of user erasures in a table of their own',
    // The marks were tombstone rows with the id 'user-erasure:<owner hash>' and the owner_hash 'user-erasure'
    // (literals here: a released migration never changes), an id a session could have. They move to a table
    // keyed by the owner hash, which no session id reaches; a mark still running keeps blocking its user. A
    // real tombstone's owner_hash is 64 hex digits, so no tombstone moves.
    statements: (t) => [
      `CREATE TABLE ${t.userErasures} (
        owner_hash TEXT PRIMARY KEY,
        marked_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      )`,
      `INSERT INTO ${t.userErasures} (owner_hash, marked_at, expires_at)
        SELECT substr(id, length('user-erasure:') + 1), deleted_at, expires_at FROM ${t.tombstones}
        WHERE owner_hash = 'user-erasure' AND id LIKE 'user-erasure:%' AND expires_at IS NOT NULL
        ON CONFLICT (owner_hash) DO NOTHING`,
      `DELETE FROM ${t.tombstones} WHERE owner_hash = 'user-erasure'`,
    ],
  },
  {
    version: COMPACTION_SUMMARY_SCHEMA_VERSION,
    name: 'summary of each compaction record',
    // Nullable with no default: a catalog change, no row rewritten. Parsing a body of 100,000 ids as jsonb
    // costs more than sending it, so the summary a light listing needs is stored when the record is written.
    statements: (t) => [`ALTER TABLE ${t.compactions} ADD COLUMN summary JSONB`],
  },
  {
    version: EVENT_TERMS_SCHEMA_VERSION,
    name: 'postings of each archived event in impact order',
    // One row per distinct word of an archived event (a lexeme of text_tsv) with the event's document length
    // (distinct lexemes). For one word with binary term frequency BM25 falls as dl grows, so the btree's order
    // (session_id, lexeme, dl, seq) is the word's impact order: a search reads the best M postings of each
    // word from the index alone. Triggers on the events table keep the rows, so no write path (append,
    // compaction, redaction, erasure, retention, fork, copy, revert) can forget them; no foreign key, the
    // delete trigger removes them with their events (a user's erased words do not survive here).
    // Archived events only: every compaction deletes the active window and re-inserts what it retains, and
    // postings of those rows would be written and deleted on every turn (a 100,000-event benchmark session
    // loaded by benchmarks/support/fillArchive.ts held six dead postings for each live one, and its turn without recall went 5.8 → 62 ms). The
    // active window is small and is searched through the events (buildSearchQuery).
    // - insert: row-level and only for an archived event (a fork, a copy, a compaction's archived retained
    //   event), so an append costs nothing here: as a statement-level trigger, which runs for every insert
    //   statement, it took appendEvent from 873 to 584 events/s;
    // - update: row-level, only when the archive flag or the words change (compaction archives in place);
    // - delete: statement-level with a transition table: an erasure or a purge is one set-based statement;
    //   the postings of sessions that are gone go by session (an erased or expired session), the
    //   others one index probe per word of the deleted event. A transition table has no statistics: the
    //   planner hashed the whole postings table to delete one window's words (2.2 s for 5,000 events beside
    //   2.4 million postings), so the function allows only index probes.
    statements: (t) => [
      `CREATE TABLE ${t.eventTerms} (
        session_id TEXT NOT NULL,
        lexeme TEXT NOT NULL,
        dl INTEGER NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (session_id, lexeme, dl, seq)
      )`,
      `INSERT INTO ${t.eventTerms} (session_id, lexeme, dl, seq)
        SELECT e.session_id, w.lexeme, length(e.text_tsv), e.seq
        FROM ${t.events} e, unnest(tsvector_to_array(e.text_tsv)) AS w(lexeme) WHERE e.archived`,
      `CREATE FUNCTION ${t.prefix}_event_terms_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        INSERT INTO ${t.eventTerms} (session_id, lexeme, dl, seq)
          SELECT NEW.session_id, w.lexeme, length(NEW.text_tsv), NEW.seq
          FROM unnest(tsvector_to_array(NEW.text_tsv)) AS w(lexeme);
        RETURN NULL;
      END
      $fn$`,
      `CREATE FUNCTION ${t.prefix}_event_terms_delete() RETURNS trigger LANGUAGE plpgsql
      SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
      DECLARE
        gone TEXT[] := ARRAY(SELECT o.session_id FROM (SELECT DISTINCT session_id FROM old_events) o
          WHERE NOT EXISTS (SELECT 1 FROM ${t.sessions} s WHERE s.id = o.session_id));
      BEGIN
        IF cardinality(gone) > 0 THEN
          DELETE FROM ${t.eventTerms} p WHERE p.session_id = ANY (gone);
        END IF;
        DELETE FROM ${t.eventTerms} p
          USING old_events o, unnest(tsvector_to_array(o.text_tsv)) AS w(lexeme)
          WHERE o.archived AND o.session_id <> ALL (gone) AND p.session_id = o.session_id AND p.lexeme = w.lexeme
            AND p.dl = length(o.text_tsv) AND p.seq = o.seq;
        RETURN NULL;
      END
      $fn$`,
      `CREATE FUNCTION ${t.prefix}_event_terms_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF OLD.archived THEN
          DELETE FROM ${t.eventTerms} p
            USING unnest(tsvector_to_array(OLD.text_tsv)) AS w(lexeme)
            WHERE p.session_id = OLD.session_id AND p.lexeme = w.lexeme AND p.dl = length(OLD.text_tsv) AND p.seq = OLD.seq;
        END IF;
        IF NEW.archived THEN
          INSERT INTO ${t.eventTerms} (session_id, lexeme, dl, seq)
            SELECT NEW.session_id, w.lexeme, length(NEW.text_tsv), NEW.seq
            FROM unnest(tsvector_to_array(NEW.text_tsv)) AS w(lexeme);
        END IF;
        RETURN NULL;
      END
      $fn$`,
      `CREATE TRIGGER ${t.prefix}_events_terms_insert AFTER INSERT ON ${t.events}
        FOR EACH ROW WHEN (NEW.archived) EXECUTE FUNCTION ${t.prefix}_event_terms_insert()`,
      `CREATE TRIGGER ${t.prefix}_events_terms_delete AFTER DELETE ON ${t.events}
        REFERENCING OLD TABLE AS old_events FOR EACH STATEMENT EXECUTE FUNCTION ${t.prefix}_event_terms_delete()`,
      `CREATE TRIGGER ${t.prefix}_events_terms_update AFTER UPDATE OF archived, text, data, session_id ON ${t.events}
        FOR EACH ROW WHEN (OLD.archived IS DISTINCT FROM NEW.archived OR OLD.text_tsv IS DISTINCT FROM NEW.text_tsv
          OR OLD.session_id IS DISTINCT FROM NEW.session_id)
        EXECUTE FUNCTION ${t.prefix}_event_terms_update()`,
    ],
  },
  {
    version: SEARCHABLE_POSTINGS_SCHEMA_VERSION,
    name: 'postings of searchable archived events only',
    // A session search filtered its candidates by branch and shadow prompt, and only the event row knows those:
    // fetching each candidate's row was most of the statement (9.1–9.8 ms of execution at 100,000 events against
    // 2.0–2.4 ms scored from the postings alone). Postings now exist exactly for the events a main-line search
    // returns, so the filters hold by construction. A branch search reads through the GIN index instead.
    // Rewrites (redaction) may change the type, the synthetic flag or the branch: the update trigger watches them.
    // The delete trigger (version 12) is kept: deleting an archived event with no postings probes for none.
    statements: (t) => [
      `CREATE OR REPLACE FUNCTION ${t.prefix}_event_terms_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF ${posted('OLD')} THEN
          DELETE FROM ${t.eventTerms} p
            USING unnest(tsvector_to_array(OLD.text_tsv)) AS w(lexeme)
            WHERE p.session_id = OLD.session_id AND p.lexeme = w.lexeme AND p.dl = length(OLD.text_tsv) AND p.seq = OLD.seq;
        END IF;
        IF ${posted('NEW')} THEN
          INSERT INTO ${t.eventTerms} (session_id, lexeme, dl, seq)
            SELECT NEW.session_id, w.lexeme, length(NEW.text_tsv), NEW.seq
            FROM unnest(tsvector_to_array(NEW.text_tsv)) AS w(lexeme);
        END IF;
        RETURN NULL;
      END
      $fn$`,
      `DROP TRIGGER ${t.prefix}_events_terms_insert ON ${t.events}`,
      `CREATE TRIGGER ${t.prefix}_events_terms_insert AFTER INSERT ON ${t.events}
        FOR EACH ROW WHEN ${posted('NEW')} EXECUTE FUNCTION ${t.prefix}_event_terms_insert()`,
      `DROP TRIGGER ${t.prefix}_events_terms_update ON ${t.events}`,
      `CREATE TRIGGER ${t.prefix}_events_terms_update
        AFTER UPDATE OF archived, text, data, session_id, branch, synthetic, message_type ON ${t.events}
        FOR EACH ROW WHEN (${posted('OLD')} IS DISTINCT FROM ${posted('NEW')} OR OLD.text_tsv IS DISTINCT FROM NEW.text_tsv
          OR OLD.session_id IS DISTINCT FROM NEW.session_id)
        EXECUTE FUNCTION ${t.prefix}_event_terms_update()`,
      `DELETE FROM ${t.eventTerms} p USING ${t.events} e
        WHERE e.seq = p.seq AND e.session_id = p.session_id AND NOT ${posted('e')}`,
    ],
  },
];
