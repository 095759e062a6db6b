import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { DefaultSessionService, Messages, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import { SQLITE_MIGRATIONS, sqliteTables } from '../../../src/backends/sqlite/schema.js';

const logger = createDefaultLogger({ level: 'error' });
const SECRET = 'Zq7Passphrase 0xdeadbeefcafe';

/** How often the text (or its lower-cased last word, as the full-text index stores it) occurs in the file and its WAL. */
function occurrences(path: string, text: string): number {
  let n = 0;
  for (const file of [path, `${path}-wal`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file).toString('latin1');
    n += bytes.split(text).length - 1;
  }
  return n;
}

describe('SqliteSessionRepository secureDelete', function () {
  const dir = mkdtempSync(join(tmpdir(), 'secure-delete-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;

  async function seeded(secureDelete: boolean) {
    const path = join(dir, `db-${n++}.db`);
    const repository = new SqliteSessionRepository({ path, secureDelete, logger });
    const service = new DefaultSessionService(repository, { logger });
    for (let i = 0; i < 10; i++) {
      const s = await service.create({ userId: `user-${i}` });
      for (let j = 0; j < 10; j++) await service.appendMessage(s.id, Messages.user(`filler ${i}-${j} about the weather`));
    }
    const victim = await service.create({ userId: 'alice' });
    await service.appendMessage(victim.id, Messages.user(`my passphrase is ${SECRET}`), { id: 'secret' });
    await service.appendMessage(victim.id, Messages.assistant('Noted.'));
    expect(occurrences(path, SECRET)).to.be.greaterThan(0);
    return { path, repository, service, victim: victim.id };
  }

  it('after delete, neither the text nor its full-text index words are left in the file or its WAL', async function () {
    const { path, repository, service, victim } = await seeded(true);
    await service.delete(victim);
    expect(occurrences(path, SECRET)).to.equal(0);
    expect(occurrences(path, '0xdeadbeefcafe')).to.equal(0);
    expect(occurrences(path, 'zq7passphrase')).to.equal(0);
    await repository.close();
  });

  it('after a redaction, the redacted text is gone from the file and its WAL', async function () {
    const { path, repository, service, victim } = await seeded(true);
    await service.redactEvent(victim, 'secret', { reason: 'test' });
    expect(occurrences(path, SECRET)).to.equal(0);
    expect(occurrences(path, '0xdeadbeefcafe')).to.equal(0);
    expect((await service.getEvents(victim)).map((e) => e.text)).to.deep.equal(['[redacted]', 'Noted.']);
    await repository.close();
  });

  it('control: without secureDelete the full-text index still holds the erased words after delete', async function () {
    const { path, repository, service, victim } = await seeded(false);
    await service.delete(victim);
    expect(occurrences(path, '0xdeadbeefcafe')).to.be.greaterThan(0);
    await repository.close();
  });

  /** Segment ids of the full-text index (FTS5 `%_data` rows: the id's high bits are the segment). */
  function segments(path: string): Set<number> {
    const db = new Database(path, { readonly: true });
    try {
      const ids = db.prepare(`SELECT id FROM session_compaction_events_fts_data`).pluck().all() as number[];
      return new Set(ids.map((id) => Math.floor(id / 2 ** 37)).filter((segment) => segment > 0));
    } finally {
      db.close();
    }
  }

  it('erases without rewriting the whole full-text index: segments of other rows survive a delete', async function () {
    const { path, repository, service, victim } = await seeded(true);
    const before = segments(path);
    await service.delete(victim);
    const after = segments(path);
    expect(occurrences(path, 'zq7passphrase')).to.equal(0);
    // An FTS5 'optimize' would have replaced every segment with a new one.
    expect([...before].filter((segment) => after.has(segment))).to.not.deep.equal([]);
    await repository.close();
  });

  it('no word of 40 erased secrets is left, wherever they sit among the index pages of 3,000 other events', async function () {
    this.timeout(30_000);
    const path = join(dir, `db-${n++}.db`);
    const repository = new SqliteSessionRepository({ path, secureDelete: true, logger });
    const service = new DefaultSessionService(repository, { logger });
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const word = () =>
      Array.from({ length: 5 + Math.floor(random() * 6) }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
    const secrets: string[] = [];
    const victims: string[] = [];
    for (let s = 0; s < 30; s++) {
      const session = await service.create({ userId: `user-${s}` });
      // Appends in many transactions: the index has several segments, and secrets land at page edges too.
      for (let j = 0; j < 100; j++) await service.appendMessage(session.id, Messages.user(`${word()} ${word()} ${word()}`));
      if (s % 3 === 0) {
        const mine = [`zz${word()}`, `${word()}q9`, `aa${word()}`, word()];
        secrets.push(...mine);
        await service.appendMessage(session.id, Messages.user(`secret ${mine.join(' ')}`));
        victims.push(session.id);
      }
    }
    const present = secrets.filter((w) => occurrences(path, w) > 0);
    expect(present.length).to.be.greaterThan(0);
    for (const id of victims) await service.delete(id);
    // Only words no other event uses can be checked: the others stay indexed for the rows that hold them.
    const unique = present.filter((w) => w.startsWith('zz') || w.startsWith('aa') || w.endsWith('q9'));
    expect(unique.filter((w) => occurrences(path, w) > 0)).to.deep.equal([]);
    await repository.close();
  });

  it('turns FTS5 secure-delete on in the file when opened with secureDelete, and leaves it on', async function () {
    const { path, repository } = await seeded(true);
    await repository.close();
    const plain = new SqliteSessionRepository({ path, logger });
    await plain.findById('x');
    await plain.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare(`SELECT v FROM session_compaction_events_fts_config WHERE k = 'secure-delete'`).pluck().get()).to.equal(
        1,
      );
    } finally {
      db.close();
    }
  });

  it('a store still at schema version 4 (rowid-only deletes) is scrubbed by rewriting the index, until migrated', async function () {
    const path = join(dir, `db-${n++}.db`);
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    const t = sqliteTables('session_compaction');
    old.exec(
      `CREATE TABLE ${t.migrations} (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
    );
    for (const m of SQLITE_MIGRATIONS.filter((m) => m.version <= 4)) {
      old.exec(m.sql(t));
      old.prepare(`INSERT INTO ${t.migrations} VALUES (?, ?, 0)`).run(m.version, m.name);
    }
    old.close();
    const repository = new SqliteSessionRepository({ path, secureDelete: true, initializeSchema: false, logger });
    const service = new DefaultSessionService(repository, { logger });
    const victim = await service.create({ userId: 'alice' });
    for (let j = 0; j < 20; j++) await service.appendMessage(victim.id, Messages.user(`filler ${j} about the weather`));
    await service.appendMessage(victim.id, Messages.user(`my passphrase is ${SECRET}`));
    const other = await service.create({ userId: 'bob' });
    await service.appendMessage(other.id, Messages.user('unrelated words'));
    await service.delete(victim.id);
    expect(occurrences(path, 'zq7passphrase')).to.equal(0);
    expect((await repository.schemaStatus()).pending.map((m) => m.version)).to.deep.equal(
      SQLITE_MIGRATIONS.filter((m) => m.version > 4).map((m) => m.version),
    );
    await repository.close();
  });

  it('rejects a secureDelete that is not a boolean', function () {
    expect(() => new SqliteSessionRepository({ path: ':memory:', secureDelete: 'yes' as unknown as boolean })).to.throw(
      'secureDelete must be a boolean',
    );
  });
});
