import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, Session, SessionEvent, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import type { SearchableRepository } from 'session-compaction/spi';
import { SQLITE_MIGRATIONS, sqliteTables } from '../../../src/backends/sqlite/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-search-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `db-${n++}.db`);
const logger = createDefaultLogger({ silent: true });
const t = sqliteTables('session_compaction');

const user = (sessionId: string, id: string, text: string) =>
  SessionEvent.create({ sessionId, id, message: Messages.user(text) });
const ids = async (repo: SearchableRepository, sessionId: string, query: string) =>
  (await repo.searchEvents(sessionId, query, { includeActive: true, limit: 100 })).map((h) => h.event.id);

/** Row ids the FTS index itself returns for a word: stale entries would show here even without their rows. */
function indexed(path: string, word: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT rowid FROM ${t.fts} WHERE ${t.fts} MATCH ? ORDER BY rowid`).pluck().all(`"${word}"`) as number[];
  } finally {
    db.close();
  }
}

/** FTS5's own check that an external-content index matches its table exactly. */
function integrityCheck(path: string): void {
  const db = new Database(path);
  try {
    db.prepare(`INSERT INTO ${t.fts} (${t.fts}) VALUES ('integrity-check')`).run();
  } finally {
    db.close();
  }
}

describe('SqliteSessionRepository full-text search', function () {
  it('a database at schema version 1 migrates to version 2 and its existing events become searchable', async function () {
    const path = fresh();
    // The schema and rows exactly as the release with only migration 1 wrote them.
    const db = new Database(path);
    db.exec(
      `CREATE TABLE ${t.migrations} (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
    );
    db.exec(SQLITE_MIGRATIONS.find((m) => m.version === 1)!.sql(t));
    db.prepare(`INSERT INTO ${t.migrations} VALUES (1, 'sessions and events', 0)`).run();
    db.prepare(`INSERT INTO ${t.sessions} (id, user_id, created_at) VALUES ('old', 'u', 0)`).run();
    const insert = db.prepare(
      `INSERT INTO ${t.events} (session_id, id, timestamp, message_type, text, archived) VALUES ('old', ?, 0, ?, ?, ?)`,
    );
    insert.run('e1', 'user', 'The lighthouse keeper retired in 1987.', 1);
    insert.run('e2', 'assistant', 'A quiet harbour town.', 1);
    insert.run('e3', 'tool', null, 1);
    insert.run('e4', 'user', 'Another lighthouse question, still active.', 0);
    db.close();

    const repo = new SqliteSessionRepository({ path, logger });
    try {
      expect(await repo.migrate()).to.deep.equal(SQLITE_MIGRATIONS.filter((m) => m.version > 1).map((m) => m.version));
      const hits = await repo.searchEvents('old', 'lighthouse keeper');
      expect(hits.map((h) => h.event.id)).to.deep.equal(['e1']);
      expect(await ids(repo, 'old', 'lighthouse')).to.have.members(['e1', 'e4']);
      // Writes after the migration are indexed by the triggers.
      await repo.appendEvent(user('old', 'e5', 'A new lighthouse fact.'));
      expect(await ids(repo, 'old', 'lighthouse')).to.have.members(['e1', 'e4', 'e5']);
      const versions = new Database(path, { readonly: true });
      expect(versions.prepare(`SELECT version FROM ${t.migrations} ORDER BY version`).pluck().all()).to.deep.equal(
        SQLITE_MIGRATIONS.map((m) => m.version),
      );
      versions.close();
    } finally {
      await repo.close();
    }
    integrityCheck(path);
  });

  it('compaction keeps the index exact: retained events are found once, a superseded summary not at all', async function () {
    const path = fresh();
    const repo = new SqliteSessionRepository({ path, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    const events = ['alpha walrus', 'beta walrus', 'gamma walrus', 'delta walrus'].map((text, i) => user('s', `e${i}`, text));
    for (const e of events) await repo.appendEvent(e);
    const summary = SessionEvent.create({
      sessionId: 's',
      id: 'sum1',
      message: Messages.assistant('summary mentions walrus and zebra'),
      metadata: { synthetic: true },
    });
    expect(await repo.compactEvents('s', events.slice(0, 2), [summary, ...events.slice(2)], 4)).to.equal(true);
    expect((await ids(repo, 's', 'walrus')).sort()).to.deep.equal(['e0', 'e1', 'e2', 'e3', 'sum1']);
    // The next compaction replaces the summary: it leaves the log, and the index.
    expect(await repo.compactEvents('s', events.slice(2, 3), [events[3]!], 5)).to.equal(true);
    expect(await ids(repo, 's', 'zebra')).to.deep.equal([]);
    expect(indexed(path, 'zebra')).to.deep.equal([]);
    expect((await ids(repo, 's', 'walrus')).sort()).to.deep.equal(['e0', 'e1', 'e2', 'e3']);
    await repo.close();
    integrityCheck(path);
  });

  it('deleting a session removes its events from the index (the cascade fires the triggers)', async function () {
    const path = fresh();
    const repo = new SqliteSessionRepository({ path, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvent(user('s', 'e1', 'ephemeral narwhal'));
    expect(indexed(path, 'narwhal')).to.have.length(1);
    await repo.delete('s');
    expect(indexed(path, 'narwhal')).to.deep.equal([]);
    await repo.close();
    integrityCheck(path);
  });

  it("a session whose matches all rank below another session's still gets its best ones, best first", async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    await repo.save(Session.create({ id: 'crowd', userId: 'u' }));
    await repo.save(Session.create({ id: 'mine', userId: 'u' }));
    // 300 short events that say nothing but the word outrank every event of 'mine' in the shared index, so
    // the first windows of best matches hold none of them and the search has to widen to the whole index.
    // Written between two events of 'mine': inside the rows its search ranks.
    await repo.appendEvents('mine', [
      user('mine', 'once', 'a walrus came by the harbour wall on a grey and windy afternoon in late autumn'),
    ]);
    await repo.appendEvents(
      'crowd',
      Array.from({ length: 300 }, (_, i) => user('crowd', `c${i}`, 'walrus walrus walrus')),
    );
    await repo.appendEvents('mine', [
      user('mine', 'thrice', 'walrus, walrus and walrus again by the harbour wall on a grey afternoon'),
      user('mine', 'twice', 'a walrus and another walrus by the harbour wall on a grey afternoon'),
    ]);
    const hits = await repo.searchEvents('mine', 'walrus', { includeActive: true, limit: 2 });
    expect(hits.map((h) => h.event.id)).to.deep.equal(['thrice', 'twice']);
    await repo.close();
  });

  it('a session written between two larger ones finds its own events only, and an empty session finds nothing', async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    for (const id of ['before', 'mine', 'after', 'empty']) await repo.save(Session.create({ id, userId: 'u' }));
    const crowd = (sessionId: string) =>
      Array.from({ length: 200 }, (_, i) => user(sessionId, `${sessionId}${i}`, 'walrus walrus walrus'));
    await repo.appendEvents('before', crowd('before'));
    await repo.appendEvents('mine', [user('mine', 'm1', 'a walrus on the wall'), user('mine', 'm2', 'no such animal')]);
    await repo.appendEvents('after', crowd('after'));
    expect(await ids(repo, 'mine', 'walrus')).to.deep.equal(['m1']);
    expect(await ids(repo, 'empty', 'walrus')).to.deep.equal([]);
    await repo.close();
  });

  it("a search across the user's sessions spans all of them and never returns another user's event written between them", async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    await repo.save(Session.create({ id: 'first', userId: 'u' }));
    await repo.save(Session.create({ id: 'other', userId: 'v' }));
    await repo.save(Session.create({ id: 'last', userId: 'u' }));
    await repo.appendEvents('first', [user('first', 'f1', 'the walrus sang')]);
    await repo.appendEvents('other', [user('other', 'o1', 'the walrus sang too')]);
    await repo.appendEvents('last', [user('last', 'l1', 'the walrus sang again')]);
    const hits = await repo.searchEvents('first', 'walrus', { scope: 'user', userId: 'u', includeActive: true, limit: 10 });
    expect(hits.map((h) => h.event.id).sort()).to.deep.equal(['f1', 'l1']);
    await repo.close();
  });

  it("a search with neighbourhoods returns searchEvents' hits and the runs around the searched session's hits only", async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    for (const [id, owner] of [
      ['a', 'u'],
      ['between', 'v'],
      ['b', 'u'],
    ] as const) {
      await repo.save(Session.create({ id, userId: owner }));
      const texts = ['kiwi one', 'plain', 'kiwi two', 'more plain', 'last', 'far away', 'kiwi three'];
      await repo.appendEvents(
        id,
        texts.map((text, i) => user(id, `${id}-${i}`, text)),
      );
    }
    for (const scope of ['session', 'user'] as const) {
      const options = { scope, userId: 'u', includeActive: true, limit: 10 };
      const together = await repo.searchEventsWithNeighbours('a', 'kiwi', options, 1);
      expect(together.hits).to.deep.equal(await repo.searchEvents('a', 'kiwi', options));
      expect(new Set(together.hits.map((h) => h.event.sessionId))).to.deep.equal(new Set(scope === 'user' ? ['a', 'b'] : ['a']));
      expect(together.neighbours.map((run) => run.map((e) => e.id))).to.deep.equal([
        ['a-0', 'a-1', 'a-2', 'a-3'],
        ['a-5', 'a-6'],
      ]);
    }
    expect(await repo.searchEventsWithNeighbours('a', 'kiwi', { scope: 'user', userId: 'v' }, 1)).to.deep.equal({
      hits: [],
      neighbours: [],
    });
    await repo.close();
  });

  it('a search with neighbourhoods refuses a radius that findEventNeighbours refuses, before it searches', async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    await repo.save(Session.create({ id: 'a', userId: 'u' }));
    for (const radius of [-1, 1.5, Number.NaN, 1_000_000]) {
      await repo.searchEventsWithNeighbours('a', 'kiwi', undefined, radius).then(
        () => expect.fail(`radius ${radius} was accepted`),
        (error: Error) => expect(error.name).to.equal('InvalidArgumentError'),
      );
    }
    await repo.close();
  });

  it('folds case and diacritics: "CAFE" finds "café"', async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvent(user('s', 'e1', 'Meet me at the Café Müller.'));
    expect(await ids(repo, 's', 'CAFE muller')).to.deep.equal(['e1']);
    await repo.close();
  });

  it('indexes tool results and tool-call arguments, and the backfill does too', async function () {
    const repo = new SqliteSessionRepository({ path: ':memory:', logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvent(
      SessionEvent.create({
        sessionId: 's',
        id: 'call',
        message: Messages.assistant(null, {
          toolCalls: [Messages.toolCall('c1', 'grep_repo', '{"pattern":"FrobnicatorError"}')],
        }),
      }),
    );
    await repo.appendEvent(
      SessionEvent.create({
        sessionId: 's',
        id: 'result',
        message: Messages.tool([Messages.toolResponse('c1', 'grep_repo', 'src/io.py:12 raise QuuxTimeout')]),
      }),
    );
    expect(await ids(repo, 's', 'frobnicatorerror')).to.deep.equal(['call']);
    expect(await ids(repo, 's', 'QuuxTimeout')).to.deep.equal(['result']);
    await repo.close();
  });

  it('the index matches the table after any sequence of appends, compactions and deletes (property)', async function () {
    this.timeout(60_000);
    const words = ['otter', 'heron', 'lynx', 'moose', 'quail'];
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('append' as const),
        session: fc.nat(2),
        words: fc.subarray(words, { minLength: 1 }),
        tool: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('compact' as const), session: fc.nat(2), keep: fc.nat(3), dropSummary: fc.boolean() }),
      fc.record({ kind: fc.constant('delete' as const), session: fc.nat(2) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 25 }), async (ops) => {
        const path = fresh();
        const repo = new SqliteSessionRepository({ path, logger, synchronous: 'NORMAL' });
        let counter = 0;
        // The words each event was written with, text or tool result alike.
        const wordsOf = new Map<string, string[]>();
        try {
          for (const o of ops) {
            const sid = `s${o.session}`;
            if ((await repo.findById(sid)) === null) await repo.save(Session.create({ id: sid, userId: 'u' }));
            if (o.kind === 'append' && o.tool) {
              // A tool result has no text: registered in the index with no words.
              const message = Messages.tool([Messages.toolResponse('c', 'lookup', o.words.join(' '))]);
              wordsOf.set(`e${counter}`, o.words);
              await repo.appendEvent(SessionEvent.create({ sessionId: sid, id: `e${counter++}`, message }));
            } else if (o.kind === 'append') {
              wordsOf.set(`e${counter}`, o.words);
              await repo.appendEvent(user(sid, `e${counter++}`, o.words.join(' ')));
            }
            if (o.kind === 'delete') await repo.delete(sid);
            if (o.kind === 'compact') {
              const active = (await repo.findEvents(sid)).filter((e) => !e.archived);
              const cut = Math.max(0, active.length - o.keep);
              const word = words[counter % words.length]!;
              wordsOf.set(`sum${counter}`, [word]);
              const summary = SessionEvent.create({
                sessionId: sid,
                id: `sum${counter++}`,
                message: Messages.assistant(`summary ${word}`),
                metadata: { synthetic: true },
              });
              const retained = o.dropSummary ? active.slice(cut) : [summary, ...active.slice(cut)];
              await repo.compactEvents(
                sid,
                active.slice(0, cut).filter((e) => !e.isSynthetic()),
                retained,
                await repo.getEventVersion(sid),
              );
            }
          }
          // Every word finds exactly the events written with it, in every session.
          for (const sid of ['s0', 's1', 's2']) {
            const log = await repo.findEvents(sid);
            for (const w of words) {
              const expected = log.filter((e) => wordsOf.get(e.id)?.includes(w)).map((e) => e.id);
              expect((await ids(repo, sid, w)).sort()).to.deep.equal(expected.sort());
            }
          }
        } finally {
          await repo.close();
        }
        integrityCheck(path);
      }),
      { numRuns: 25 },
    );
  });
});
