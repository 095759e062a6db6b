import type Database from 'better-sqlite3';

/**
 * Moves the WAL's page images (which still hold deleted bytes) into the database file and truncates it.
 * `busy`: a reader holds an old snapshot, so the checkpoint could not finish.
 */
export function checkpointWal(db: Database.Database): { busy: boolean } {
  const [row] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
  return { busy: (row?.busy ?? 0) !== 0 };
}

/**
 * Makes the full-text index forget the words of deleted and rewritten rows. Since schema version 5 the
 * index is told a deleted row's words, and FTS5's secure-delete mode removes them from the index pages at
 * delete time: this turns the mode on once (a setting stored in the file, so every connection's deletes
 * use it), with one 'optimize' for what deletes before it left behind; afterwards it only reads the
 * setting. An index still in the version-2 form (contentless_delete: deletes by rowid, FTS5 never learns
 * the words) keeps them until its segments are merged, so it can only be rewritten whole ('optimize');
 * `rewriteLegacy: false` leaves such an index alone (at open, before anything was deleted).
 */
export function forgetDeletedWords(
  db: Database.Database,
  fts: string,
  rewriteLegacy = true,
): 'secure-delete' | 'optimized' | 'no-index' | 'legacy' {
  const before = fullTextState(db, fts);
  if (before === 'missing') return 'no-index';
  if (before === 'secure') return 'secure-delete';
  if (before === 'rowid-deletes' && !rewriteLegacy) return 'legacy';
  return db
    .transaction((): 'secure-delete' | 'optimized' | 'no-index' | 'legacy' => {
      // Again under the write lock: another process may have done it meanwhile.
      const state = fullTextState(db, fts);
      if (state === 'missing') return 'no-index';
      if (state === 'secure') return 'secure-delete';
      if (state === 'insecure') db.prepare(`INSERT INTO ${fts} (${fts}, rank) VALUES ('secure-delete', 1)`).run();
      db.prepare(`INSERT INTO ${fts} (${fts}) VALUES ('optimize')`).run();
      return state === 'insecure' ? 'secure-delete' : 'optimized';
    })
    .immediate();
}

/** The index's form: absent, version 2's rowid-only deletes, or version 5's with secure-delete on or off. */
function fullTextState(db: Database.Database, fts: string): 'missing' | 'rowid-deletes' | 'secure' | 'insecure' {
  const ddl: unknown = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck().get(fts);
  if (typeof ddl !== 'string') return 'missing';
  if (/contentless_delete\s*=\s*1/i.test(ddl)) return 'rowid-deletes';
  const on: unknown = db.prepare(`SELECT v FROM ${fts}_config WHERE k = 'secure-delete'`).pluck().get();
  return Number(on) === 1 ? 'secure' : 'insecure';
}
