import type Database from 'better-sqlite3';
import {
  COMPACTION_RECORD_ARRAYS,
  decodeCompactionRecord,
  decodeCompactionSummary,
  encodeCompactionRecord,
  encodeCompactionSummary,
  type CompactionRecord,
  type CompactionRecordSummary,
} from '../../repository/CompactionRecord.js';
import type { SqliteTables } from './schema.js';

interface RecordRow {
  body: string;
  revertedAt: number | null;
}

/** The compaction-record statements of the SQLite repository; every method runs inside the caller's transaction. */
export class SqliteCompactions {
  private readonly insertStatement: Database.Statement;
  private readonly listStatement: Database.Statement;
  private readonly listSummariesStatement: Database.Statement;
  private readonly withSummary: boolean;
  private readonly markStatement: Database.Statement;
  private readonly existsStatement: Database.Statement;
  private readonly dropStatement: Database.Statement;

  constructor(db: Database.Database, t: SqliteTables) {
    this.listStatement = db.prepare(
      `SELECT body, reverted_at AS revertedAt FROM ${t.compactions} WHERE session_id = ? ORDER BY version_after DESC`,
    );
    // The summary of a body, by SQLite's JSON functions: the id arrays are counted and dropped before the row
    // leaves the database (field names are constants, not input).
    const arrays = Object.entries(COMPACTION_RECORD_ARRAYS);
    const counted = arrays.map(([array, count]) => `'$.${count}', json_array_length(body, '$.${array}')`).join(', ');
    const summaryOfBody = `json_set(json_remove(body, ${arrays.map(([array]) => `'$.${array}'`).join(', ')}), ${counted})`;
    // With the stored summary (COMPACTION_SUMMARY_SCHEMA_VERSION) a listing parses no body; a row written before
    // it is summarised as above. Decided once per instance: a file migrated later by another process is written
    // without summaries by this one until it reopens, and listed correctly either way.
    const stored = hasSummaryColumn(db, t);
    this.withSummary = stored;
    this.listSummariesStatement = db.prepare(
      `SELECT ${stored ? `coalesce(summary, ${summaryOfBody})` : summaryOfBody} AS body, reverted_at AS revertedAt
       FROM ${t.compactions} WHERE session_id = ? ORDER BY version_after DESC`,
    );
    this.insertStatement = db.prepare(
      stored
        ? `INSERT INTO ${t.compactions} (session_id, id, version_after, created_at, reverted_at, body, summary)
           VALUES (?, ?, ?, ?, NULL, ?, ?)`
        : `INSERT INTO ${t.compactions} (session_id, id, version_after, created_at, reverted_at, body) VALUES (?, ?, ?, ?, NULL, ?)`,
    );
    this.markStatement = db.prepare(`UPDATE ${t.compactions} SET reverted_at = ? WHERE session_id = ? AND id = ?`);
    this.existsStatement = db.prepare(`SELECT 1 FROM ${t.compactions} WHERE session_id = ? AND id = ?`);
    // The ids are bound as one JSON array: no SQL is built from them.
    this.dropStatement = db.prepare(
      `DELETE FROM ${t.compactions} WHERE session_id = ? AND EXISTS (
         SELECT 1 FROM json_each(body, '$.archivedEventIds') a WHERE a.value IN (SELECT value FROM json_each(?)))`,
    );
  }

  insert(record: CompactionRecord): void {
    this.insertStatement.run(
      record.sessionId,
      record.id,
      record.versionAfter,
      record.createdAt.getTime(),
      encodeCompactionRecord(record),
      ...(this.withSummary ? [encodeCompactionSummary(record)] : []),
    );
  }

  exists(sessionId: string, id: string): boolean {
    return this.existsStatement.get(sessionId, id) !== undefined;
  }

  list(sessionId: string): CompactionRecord[] {
    return (this.listStatement.all(sessionId) as RecordRow[]).map((r) => decodeCompactionRecord(r.body, r.revertedAt));
  }

  listSummaries(sessionId: string): CompactionRecordSummary[] {
    return (this.listSummariesStatement.all(sessionId) as RecordRow[]).map((r) => decodeCompactionSummary(r.body, r.revertedAt));
  }

  markReverted(sessionId: string, id: string, at: Date): void {
    this.markStatement.run(at.getTime(), sessionId, id);
  }

  /** Drops the records that archived any of `purgedIds`: retention removed what a revert would restore. */
  dropCovering(sessionId: string, purgedIds: readonly string[]): void {
    if (purgedIds.length > 0) this.dropStatement.run(sessionId, JSON.stringify(purgedIds));
  }
}

/** Whether the records table has the summary column (COMPACTION_SUMMARY_SCHEMA_VERSION). */
function hasSummaryColumn(db: Database.Database, t: SqliteTables): boolean {
  const columns = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t.compactions) as { name: string }[];
  return columns.some((c) => c.name === 'summary');
}
