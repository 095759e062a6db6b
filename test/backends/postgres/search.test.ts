import { expect } from 'chai';
import {
  InvalidArgumentError,
  Messages,
  PostgresSessionRepository,
  Session,
  SessionEvent,
  createDefaultLogger,
} from 'session-compaction';
import { MIGRATIONS, postgresTables } from '../../../src/backends/postgres/schema.js';
import { freshPostgresPrefix, postgresPoolFixture } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });
const user = (sessionId: string, id: string, text: string) =>
  SessionEvent.create({ sessionId, id, message: Messages.user(text) });

describe('PostgresSessionRepository full-text search', function () {
  const prefixes: string[] = [];
  const prefix = () => {
    const p = freshPostgresPrefix();
    prefixes.push(p);
    return p;
  };
  const db = postgresPoolFixture(prefixes, { max: 4 });

  it('a database at schema version 1 migrates to version 2 and its existing events become searchable', async function () {
    const p = prefix();
    const t = postgresTables(p);
    // The schema and rows exactly as the release with only migration 1 wrote them.
    await db
      .pool()
      .query(
        `CREATE TABLE ${t.migrations} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
    for (const statement of MIGRATIONS.find((m) => m.version === 1)!.statements(t)) await db.pool().query(statement);
    await db.pool().query(`INSERT INTO ${t.migrations} (version, name) VALUES (1, 'sessions and events')`);
    await db.pool().query(`INSERT INTO ${t.sessions} (id, user_id, created_at) VALUES ('old', 'u', now())`);
    const insert = `INSERT INTO ${t.events} (session_id, id, message_type, text, text_lc, archived, "timestamp")
      VALUES ('old', $1, $2, $3, lower($3), $4, now())`;
    await db.pool().query(insert, ['e1', 'user', 'The lighthouse keeper retired in 1987.', true]);
    await db.pool().query(insert, ['e2', 'assistant', 'A quiet harbour town.', true]);
    await db.pool().query(insert, ['e3', 'tool', null, true]);
    await db.pool().query(insert, ['e4', 'user', 'Another lighthouse question, still active.', false]);

    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    expect(await repo.migrate()).to.deep.equal(MIGRATIONS.filter((m) => m.version > 1).map((m) => m.version));
    const hits = await repo.searchEvents('old', 'Who was the lighthouse keeper?');
    expect(hits.map((h) => h.event.id)).to.deep.equal(['e1']);
    const all = await repo.searchEvents('old', 'lighthouse', { includeActive: true });
    expect(all.map((h) => h.event.id)).to.have.members(['e1', 'e4']);
    await repo.appendEvent(user('old', 'e5', 'A new lighthouse fact.'));
    const after = await repo.searchEvents('old', 'lighthouse', { includeActive: true });
    expect(after.map((h) => h.event.id)).to.have.members(['e1', 'e4', 'e5']);
    const { rows } = await db.pool().query(`SELECT version FROM ${t.migrations} ORDER BY version`);
    expect(rows.map((r: { version: number }) => r.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
  });

  it('compaction re-inserts retained events: each is found once, a superseded summary not at all', async function () {
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: prefix(), logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    const events = ['alpha walrus', 'beta walrus', 'gamma walrus'].map((text, i) => user('s', `e${i}`, text));
    for (const e of events) await repo.appendEvent(e);
    const summary = SessionEvent.create({
      sessionId: 's',
      id: 'sum',
      message: Messages.assistant('summary of walrus and zebra'),
      metadata: { synthetic: true },
    });
    expect(await repo.compactEvents('s', events.slice(0, 1), [summary, ...events.slice(1)], 3)).to.equal(true);
    expect(await repo.compactEvents('s', events.slice(1, 2), events.slice(2), 4)).to.equal(true);
    const hits = await repo.searchEvents('s', 'walrus zebra', { includeActive: true, limit: 50 });
    expect(hits.map((h) => h.event.id).sort()).to.deep.equal(['e0', 'e1', 'e2']);
  });

  it("drops the query's stop words (default english_stem) unless nothing else is left; null keeps them", async function () {
    const p = prefix();
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvent(user('s', 'e1', 'the walrus sleeps'));
    await repo.appendEvent(user('s', 'e2', 'the weather is the same as the day before'));
    const found = async (r: PostgresSessionRepository, query: string) =>
      (await r.searchEvents('s', query, { includeActive: true })).map((h) => h.event.id).sort();
    expect(await found(repo, 'the walrus')).to.deep.equal(['e1']);
    expect(await found(repo, 'the')).to.deep.equal(['e1', 'e2']);
    const keepAll = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger, searchStopWords: null });
    expect(await found(keepAll, 'the walrus')).to.deep.equal(['e1', 'e2']);
  });

  it('rejects a stop-word dictionary name that is not an identifier', function () {
    expect(
      () => new PostgresSessionRepository({ pool: db.pool(), prefix: prefix(), searchStopWords: "x'); DROP TABLE y; --" }),
    ).to.throw(InvalidArgumentError, 'searchStopWords');
  });
});
