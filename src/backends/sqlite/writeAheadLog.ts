import type Database from 'better-sqlite3';

/** What a connection needs of better-sqlite3 here (a stub stands in for it in tests). */
type PragmaRunner = Pick<Database.Database, 'pragma'>;

/** Pause between attempts while another process holds the lock the switch needs. */
const RETRY_PAUSE_MS = 10;

/**
 * Puts the file in write-ahead-log mode (WAL lets readers run while a writer commits, in this and in other
 * processes; ':memory:' stays 'memory'). A file already in WAL is only read, which needs no lock. The switch
 * itself needs an exclusive lock and SQLite can refuse it at once with SQLITE_BUSY, without the busy handler:
 * several processes opening a new file together saw "database is locked" from the constructor. So a busy
 * refusal is retried until `busyTimeoutMs` has passed, as a busy lock is anywhere else.
 */
export function useWriteAheadLog(db: PragmaRunner, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
      // The constructors that call this are synchronous, as better-sqlite3's own busy wait is.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RETRY_PAUSE_MS);
    }
  }
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}
