import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { Container } from 'inversify';
import {
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  TYPES,
  createDefaultLogger,
  createSessionCompactionModule,
  type SessionRepository,
} from 'session-compaction';
import { SQLITE_MIGRATIONS } from '../../../src/backends/sqlite/schema.js';
import { badInputDifferential } from '../../repository/differential.js';
import { atomicMetadataSuite } from '../../repository/metadataContract.js';
import { rejection } from '../../support/rejection.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-repo-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `db-${n++}.db`);
const logger = createDefaultLogger({ silent: true });

badInputDifferential('SqliteSessionRepository', async () => new SqliteSessionRepository({ path: fresh(), logger }));

function user(sessionId: string, id: string, text = id): SessionEvent {
  return SessionEvent.create({ sessionId, id, message: Messages.user(text) });
}

async function seeded(repo: SessionRepository, sessionId: string, ids: string[]): Promise<SessionEvent[]> {
  await repo.save(Session.create({ id: sessionId, userId: 'u' }));
  const events = ids.map((id) => user(sessionId, id));
  for (const e of events) await repo.appendEvent(e);
  return events;
}

/** Raw rows, read through a second connection, as another process would see them. */
function rawEvents(path: string, table = 'session_compaction_events'): Array<{ seq: number; id: string; archived: number }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT seq, id, archived FROM ${table} ORDER BY seq`).all() as Array<{
      seq: number;
      id: string;
      archived: number;
    }>;
  } finally {
    db.close();
  }
}

describe('SqliteSessionRepository', function () {
  atomicMetadataSuite('two connections to one SQLite file', () => {
    const path = fresh();
    return [0, 1].map(() => new SqliteSessionRepository({ path, logger }));
  });

  describe('durability and file settings', function () {
    it('sessions, events, archive flags and versions survive closing and reopening the file', async function () {
      const path = fresh();
      const repo = new SqliteSessionRepository({ path, logger });
      const [e1, e2, e3] = await seeded(repo, 's', ['e1', 'e2', 'e3']);
      await repo.compactEvents('s', [e1!], [e2!, e3!], 3);
      await repo.close();

      const reopened = new SqliteSessionRepository({ path, logger });
      expect((await reopened.findById('s'))?.userId).to.equal('u');
      expect(await reopened.getEventVersion('s')).to.equal(4);
      const all = await reopened.findEvents('s');
      expect(all.map((e) => [e.id, e.archived])).to.deep.equal([
        ['e1', true],
        ['e2', false],
        ['e3', false],
      ]);
      await reopened.close();
    });

    it('a file database runs in WAL mode with foreign keys enforced (deleting a session cascades)', async function () {
      const path = fresh();
      const repo = new SqliteSessionRepository({ path, logger });
      await seeded(repo, 's', ['a', 'b']);
      const db = new Database(path);
      expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
      db.close();
      await repo.delete('s');
      expect(rawEvents(path)).to.deep.equal([]);
      await repo.close();
    });

    it('a writer waits up to busyTimeoutMs for another process’s write lock, and fails with SQLITE_BUSY after it', async function () {
      this.timeout(20_000);
      const path = fresh();
      const patient = new SqliteSessionRepository({ path, busyTimeoutMs: 10_000, logger });
      const impatient = new SqliteSessionRepository({ path, busyTimeoutMs: 0, logger });
      await patient.save(Session.create({ id: 's', userId: 'u' }));
      await impatient.getEventVersion('s');
      // Another process takes the write lock and holds it for 700 ms.
      const holder = spawn(
        process.execPath,
        [
          '-e',
          `const db = new (require('better-sqlite3'))(process.argv[1]);
           db.exec('BEGIN IMMEDIATE'); process.stdout.write('locked\\n');
           setTimeout(() => { db.exec('COMMIT'); db.close(); }, 700);`,
          path,
        ],
        { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));

      const busy = await rejection(impatient.appendEvent(user('s', 'fails')));
      expect((busy as Error & { code?: string }).code).to.equal('SQLITE_BUSY');
      const started = Date.now();
      await patient.appendEvent(user('s', 'waits'));
      expect(Date.now() - started).to.be.greaterThan(200);
      expect((await patient.findEvents('s')).map((e) => e.id)).to.deep.equal(['waits']);
      await new Promise((resolve) => holder.once('exit', resolve));
      await patient.close();
      await impatient.close();
    });
  });

  describe('schema and migrations', function () {
    it('with initializeSchema: false nothing is created; operations fail until migrate() is called once', async function () {
      const path = fresh();
      const repo = new SqliteSessionRepository({ path, initializeSchema: false, logger });
      const error = await rejection(repo.findById('s'));
      expect(error).to.be.instanceOf(IllegalStateError);
      expect(error.message).to.include('migrate()');
      expect(await repo.migrate()).to.deep.equal(SQLITE_MIGRATIONS.map((m) => m.version));
      expect(await repo.migrate()).to.deep.equal([]);
      await seeded(repo, 's', ['a']);
      expect(await repo.getEventVersion('s')).to.equal(1);
      const db = new Database(path, { readonly: true });
      const rows = db.prepare('SELECT version, name FROM session_compaction_migrations ORDER BY version').all();
      db.close();
      expect(rows).to.deep.equal(SQLITE_MIGRATIONS.map(({ version, name }) => ({ version, name })));
      await repo.close();
    });

    it('two prefixes in one file are two independent stores', async function () {
      const path = fresh();
      const a = new SqliteSessionRepository({ path, prefix: 'app_a', logger });
      const b = new SqliteSessionRepository({ path, prefix: 'App_B', logger });
      await seeded(a, 'same-id', ['x', 'y']);
      await b.save(Session.create({ id: 'same-id', userId: 'other' }));
      expect(await b.getEventVersion('same-id')).to.equal(0);
      expect(await b.findEvents('same-id')).to.deep.equal([]);
      expect((await a.findById('same-id'))?.userId).to.equal('u');
      expect(rawEvents(path, 'app_a_events').map((r) => r.id)).to.deep.equal(['x', 'y']);
      expect(rawEvents(path, 'app_b_events')).to.deep.equal([]);
      await a.close();
      await b.close();
    });

    it('rejects a prefix that is not a plain identifier, and other invalid options', function () {
      for (const prefix of ['', 'x; DROP TABLE y', 'a-b', '1abc', 'a b', "a'b", 'a"b', 'ä']) {
        expect(() => new SqliteSessionRepository({ path: ':memory:', prefix }), prefix)
          .to.throw(InvalidArgumentError)
          .with.property('message')
          .that.includes('prefix must match');
      }
      expect(() => new SqliteSessionRepository({ path: ' ' })).to.throw(InvalidArgumentError, 'path must not be null or empty');
      expect(() => new SqliteSessionRepository({ path: ':memory:', busyTimeoutMs: -1 })).to.throw(
        InvalidArgumentError,
        'busyTimeoutMs',
      );
    });

    it('saveIfAbsent across two connections on one file: the second caller neither wins nor overwrites', async function () {
      const path = fresh();
      const first = new SqliteSessionRepository({ path, logger });
      const second = new SqliteSessionRepository({ path, logger });
      expect(await first.saveIfAbsent(Session.create({ id: 'taken', userId: 'owner' }))).to.equal(true);
      expect(await second.saveIfAbsent(Session.create({ id: 'taken', userId: 'intruder' }))).to.equal(false);
      expect((await first.findById('taken'))?.userId).to.equal('owner');
      await first.close();
      await second.close();
    });

    it('a closed repository rejects with IllegalStateError; close is idempotent', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      await repo.close();
      await repo.close();
      expect(await rejection(repo.getEventVersion('s'))).to.be.instanceOf(IllegalStateError);
    });

    it("DI: repository 'sqlite' binds a SqliteSessionRepository on the configured file", async function () {
      const path = fresh();
      const container = new Container();
      await container.load(createSessionCompactionModule({ repository: 'sqlite', sqlite: { path }, logger }));
      const repo = container.get<SessionRepository>(TYPES.SessionRepository);
      expect(repo).to.be.instanceOf(SqliteSessionRepository);
      expect((repo as SqliteSessionRepository).path).to.equal(path);
      await seeded(repo, 's', ['a']);
      await repo.close?.();
      const reopened = new SqliteSessionRepository({ path, logger });
      expect((await reopened.findEvents('s')).map((e) => e.id)).to.deep.equal(['a']);
      await reopened.close();
    });
  });

  describe('compaction storage', function () {
    it('archived rows are marked in place (same seq); retained rows get new seq values after every archived one', async function () {
      const path = fresh();
      const repo = new SqliteSessionRepository({ path, logger });
      const [e1, e2, e3, e4] = await seeded(repo, 's', ['e1', 'e2', 'e3', 'e4']);
      const before = new Map(rawEvents(path).map((r) => [r.id, r.seq]));
      const summary = SessionEvent.create({
        sessionId: 's',
        id: 'sum',
        message: Messages.assistant('sum'),
        metadata: { synthetic: true },
      });
      expect(await repo.compactEvents('s', [e1!, e2!], [summary, e3!, e4!], 4)).to.equal(true);
      const after = rawEvents(path);
      expect(after.filter((r) => r.archived === 1)).to.deep.equal([
        { seq: before.get('e1'), id: 'e1', archived: 1 },
        { seq: before.get('e2'), id: 'e2', archived: 1 },
      ]);
      const active = after.filter((r) => r.archived === 0);
      expect(active.map((r) => r.id)).to.deep.equal(['sum', 'e3', 'e4']);
      expect(active[0]!.seq).to.be.greaterThan(before.get('e4')!);
      await repo.close();
    });

    it('an archived event the log never held is stored archived; a retained id found in the archive moves to the window', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      const [e1, e2] = await seeded(repo, 's', ['e1', 'e2']);
      const outsider = user('s', 'outsider');
      expect(await repo.compactEvents('s', [e1!, outsider], [e2!], 2)).to.equal(true);
      expect((await repo.findEvents('s')).map((e) => [e.id, e.archived])).to.deep.equal([
        ['e1', true],
        ['outsider', true],
        ['e2', false],
      ]);
      expect(await repo.compactEvents('s', [], [e1!, e2!], 3)).to.equal(true);
      expect((await repo.findEvents('s')).map((e) => [e.id, e.archived])).to.deep.equal([
        ['outsider', true],
        ['e1', false],
        ['e2', false],
      ]);
      await repo.close();
    });

    it('a window kept unchanged and after the archive stays in place (same seq); the full-text index holds it once', async function () {
      const path = fresh();
      const repo = new SqliteSessionRepository({ path, logger });
      const [e1, e2, e3, e4] = await seeded(repo, 's', ['e1', 'e2', 'e3', 'e4']);
      const before = rawEvents(path);
      expect(await repo.compactEvents('s', [e1!, e2!], [e3!, e4!], 4)).to.equal(true);
      expect(rawEvents(path)).to.deep.equal(before.map((r) => ({ ...r, archived: r.id === 'e1' || r.id === 'e2' ? 1 : 0 })));
      expect(await repo.getEventVersion('s')).to.equal(5);
      const hits = await repo.searchEvents('s', 'e3 e4', { includeActive: true, limit: 10 });
      expect(hits.map((h) => h.event.id).sort()).to.deep.equal(['e3', 'e4']);
      await repo.close();
    });

    it('a retained event whose stored form changed is rewritten: the window reads and finds only its new text', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      const [e1, , e3] = await seeded(repo, 's', ['e1', 'e2', 'e3']);
      const edited = SessionEvent.create({ sessionId: 's', id: 'e2', message: Messages.user('rewritten words') });
      expect(await repo.compactEvents('s', [e1!], [edited, e3!], 3)).to.equal(true);
      expect((await repo.findEvents('s', EventFilter.active())).map((e) => e.text)).to.deep.equal(['rewritten words', 'e3']);
      const found = async (q: string) =>
        (await repo.searchEvents('s', q, { includeActive: true, limit: 10 })).map((h) => h.event.id);
      expect(await found('rewritten')).to.deep.equal(['e2']);
      expect(await found('e2')).to.deep.equal([]);
      await repo.close();
    });

    it('a retained window that would sort before an archived event is re-inserted after the whole archive', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      const [e1, e2, e3] = await seeded(repo, 's', ['e1', 'e2', 'e3']);
      expect(await repo.compactEvents('s', [e3!], [e1!, e2!], 3)).to.equal(true);
      expect((await repo.findEvents('s')).map((e) => [e.id, e.archived])).to.deep.equal([
        ['e3', true],
        ['e1', false],
        ['e2', false],
      ]);
      await repo.close();
    });

    it('an event appended already archived keeps its place in the log and never enters the active window', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      const [e1] = await seeded(repo, 's', ['e1']);
      await repo.appendEvent(user('s', 'imported').asArchived());
      await repo.appendEvent(user('s', 'e3'));
      expect((await repo.findEvents('s', EventFilter.active())).map((e) => e.id)).to.deep.equal(['e1', 'e3']);
      await repo.compactEvents('s', [e1!], [user('s', 'e3')], 3);
      expect((await repo.findEvents('s')).map((e) => [e.id, e.archived])).to.deep.equal([
        ['e1', true],
        ['imported', true],
        ['e3', false],
      ]);
      await repo.close();
    });
  });

  describe('findEvents push-down', function () {
    it('a keyword longer than SQLite’s 50 KB LIKE-pattern limit is searched like in memory', async function () {
      const memory = new InMemorySessionRepository();
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      const long = 'Ab%_'.repeat(20_000);
      for (const r of [memory, repo] as SessionRepository[]) {
        await r.save(Session.create({ id: 's', userId: 'u' }));
        await r.appendEvent(user('s', 'hit', `x${long}y`));
        await r.appendEvent(user('s', 'miss', long.slice(1)));
      }
      const filter = EventFilter.of({ keyword: long.toUpperCase() });
      const ids = async (r: SessionRepository) => (await r.findEvents('s', filter)).map((e) => e.id);
      expect(await ids(repo)).to.deep.equal(await ids(memory));
      expect(await ids(repo)).to.deep.equal(['hit']);
      await repo.close();
    });

    it('more distinct filter shapes than the statement cache holds still give correct results', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      await seeded(repo, 's', ['alpha', 'beta', 'gamma']);
      for (let k = 1; k <= 140; k++) {
        const keywords = Array.from({ length: k }, (_, i) => (i === 0 ? 'bet' : `zz${i}`));
        expect((await repo.findEvents('s', EventFilter.of({ keywords }))).map((e) => e.id)).to.deep.equal(['beta']);
      }
      expect((await repo.findEvents('s', EventFilter.lastN(1))).map((e) => e.id)).to.deep.equal(['gamma']);
      await repo.close();
    });

    it('a page offset beyond any possible row is empty rather than an error', async function () {
      const repo = new SqliteSessionRepository({ path: ':memory:', logger });
      await seeded(repo, 's', ['a']);
      expect(await repo.findEvents('s', EventFilter.of({ page: Number.MAX_SAFE_INTEGER, pageSize: 10 }))).to.deep.equal([]);
      expect((await repo.findEvents('s', EventFilter.of({ lastN: Number.MAX_VALUE }))).map((e) => e.id)).to.deep.equal(['a']);
      await repo.close();
    });
  });
});
