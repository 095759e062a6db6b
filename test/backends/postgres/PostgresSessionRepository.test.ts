import { expect } from 'chai';
import {
  EventFilter,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  TYPES,
  createSessionCompactionModule,
  type SessionService,
  type SessionRepository,
  PostgresSessionRepository,
} from 'session-compaction';
import { messageText } from 'session-compaction/spi';
import { Container } from 'inversify';
import pg from 'pg';
import { MIGRATIONS } from '../../../src/backends/postgres/schema.js';
import { badInputDifferential } from '../../repository/differential.js';
import { tortureSuite } from '../../repository/torture.js';
import { PG_URL } from '../../support/services.js';
import { repositoryContract } from '../../repository/contract.js';
import { atomicMetadataSuite } from '../../repository/metadataContract.js';
import { dropPostgresTables, freshPostgresPrefix, postgresPoolFixture } from '../../support/postgres.js';

describe('PostgresSessionRepository', function () {
  const prefix = freshPostgresPrefix();
  const db = postgresPoolFixture(prefix, { max: 20 });

  repositoryContract('PostgreSQL', async () => new PostgresSessionRepository({ pool: db.pool(), prefix }));
  badInputDifferential('PostgreSQL', async () => new PostgresSessionRepository({ pool: db.pool(), prefix }));

  tortureSuite('two app instances (separate pools)', () =>
    [0, 1].map(() => new PostgresSessionRepository({ connectionString: PG_URL, prefix })),
  );

  atomicMetadataSuite('two app instances (separate pools)', () =>
    [0, 1].map(() => new PostgresSessionRepository({ connectionString: PG_URL, prefix })),
  );

  describe('schema and migrations', function () {
    it('concurrent first use by several instances applies each migration exactly once', async function () {
      const p = freshPostgresPrefix();
      const repos = Array.from(
        { length: 6 },
        () => new PostgresSessionRepository({ pool: db.pool(), prefix: p, initializeSchema: false }),
      );
      try {
        const applied = await Promise.all(repos.map((r) => r.migrate()));
        expect(applied.flat()).to.deep.equal(MIGRATIONS.map((m) => m.version));
        const { rows } = await db.pool().query(`SELECT version FROM ${p}_migrations ORDER BY version`);
        expect(rows.map((r: { version: number }) => r.version)).to.deep.equal(MIGRATIONS.map((m) => m.version));
        expect(await repos[0]!.migrate()).to.deep.equal([]);
      } finally {
        await dropPostgresTables(db.pool(), p);
      }
    });

    it('with initializeSchema: false nothing is created until migrate() is called', async function () {
      const p = freshPostgresPrefix();
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, initializeSchema: false });
      try {
        let error: unknown;
        try {
          await repo.findById('x');
        } catch (e) {
          error = e;
        }
        expect((error as Error | undefined)?.message).to.match(/does not exist/);
        await repo.migrate();
        expect(await repo.findById('x')).to.equal(null);
      } finally {
        await dropPostgresTables(db.pool(), p);
      }
    });

    it('rejects a prefix that is not a plain identifier', function () {
      for (const bad of ['x; DROP TABLE y', 'a-b', '1abc', '', 'a'.repeat(40)]) {
        expect(() => new PostgresSessionRepository({ pool: db.pool(), prefix: bad }), bad).to.throw(
          InvalidArgumentError,
          /prefix must match/,
        );
      }
    });

    it('close() ends a pool it created and leaves a caller’s pool open', async function () {
      const own = new PostgresSessionRepository({ connectionString: PG_URL, prefix });
      await own.findById('x');
      await own.close();
      const borrowed = new PostgresSessionRepository({ pool: db.pool(), prefix });
      await borrowed.close();
      expect((await db.pool().query('SELECT 1 AS one')).rows[0]).to.deep.equal({ one: 1 });
    });

    it('compaction touches only the active window: archived rows keep their seq', async function () {
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix });
      const s = await repo.save(Session.create({ id: `seq-${freshPostgresPrefix()}`, userId: 'u' }));
      const events = ['a', 'b', 'c', 'd'].map((t) => SessionEvent.create({ sessionId: s.id, message: Messages.user(t) }));
      for (const e of events) await repo.appendEvent(e);
      const seqOf = async () =>
        new Map(
          (
            await db
              .pool()
              .query<{ id: string; seq: string }>(`SELECT id, seq FROM ${prefix}_events WHERE session_id = $1`, [s.id])
          ).rows.map((r) => [r.id, r.seq]),
        );
      await repo.compactEvents(s.id, events.slice(0, 2), events.slice(2), 4);
      const before = await seqOf();
      await repo.compactEvents(s.id, [events[2]!], [events[3]!], 5);
      const after = await seqOf();
      expect(after.get(events[0]!.id)).to.equal(before.get(events[0]!.id));
      expect(after.get(events[2]!.id)).to.equal(before.get(events[2]!.id));
      // A window kept unchanged and after the archive stays in place too.
      expect(after.get(events[3]!.id)).to.equal(before.get(events[3]!.id));
      const summary = SessionEvent.create({
        sessionId: s.id,
        message: Messages.assistant('summary'),
        metadata: { [SessionEvent.METADATA_SYNTHETIC]: true },
      });
      await repo.compactEvents(s.id, [], [summary, events[3]!], 6);
      const rewritten = await seqOf();
      expect(Number(rewritten.get(summary.id))).to.be.greaterThan(Number(after.get(events[3]!.id)));
      expect(Number(rewritten.get(events[3]!.id))).to.be.greaterThan(Number(rewritten.get(summary.id)));
      await repo.close();
    });

    it('a retained event whose stored form changed is rewritten; a window that would sort before the archive moves after it', async function () {
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix });
      const s = await repo.save(Session.create({ id: `inplace-${freshPostgresPrefix()}`, userId: 'u' }));
      const events = ['a', 'b', 'c'].map((t) => SessionEvent.create({ sessionId: s.id, id: t, message: Messages.user(t) }));
      for (const e of events) await repo.appendEvent(e);
      const edited = SessionEvent.create({ sessionId: s.id, id: 'b', message: Messages.user('rewritten words') });
      expect(await repo.compactEvents(s.id, [events[0]!], [edited, events[2]!], 3)).to.equal(true);
      expect((await repo.findEvents(s.id, EventFilter.active())).map((e) => e.text)).to.deep.equal(['rewritten words', 'c']);
      const hits = await repo.searchEvents(s.id, 'rewritten', { includeActive: true, limit: 5 });
      expect(hits.map((h) => h.event.id)).to.deep.equal(['b']);
      expect(await repo.compactEvents(s.id, [events[2]!], [edited], 4)).to.equal(true);
      expect((await repo.findEvents(s.id)).map((e) => [e.id, e.archived])).to.deep.equal([
        ['a', true],
        ['c', true],
        ['b', false],
      ]);
      await repo.close();
    });

    it('event times read as epoch milliseconds in every read path: microseconds written by hand are dropped, before 1970 too', async function () {
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix });
      const s = await repo.save(Session.create({ id: `ts-${freshPostgresPrefix()}`, userId: 'u' }));
      const stored = {
        // A time the library writes (whole milliseconds), one with microseconds, one with them before the epoch.
        a: '2023-05-08T13:56:07.123Z',
        b: '2023-05-08 13:56:07.123789+00',
        c: '1969-12-31 23:59:59.9995+00',
        d: '2024-02-29 23:59:59.999999+02',
      };
      const events = Object.keys(stored).map((t) =>
        SessionEvent.create({ sessionId: s.id, id: t, message: Messages.user(`word ${t}`), timestamp: new Date(0) }),
      );
      for (const e of events) await repo.appendEvent(e);
      for (const [id, ts] of Object.entries(stored)) {
        await db
          .pool()
          .query(`UPDATE ${prefix}_events SET "timestamp" = $3::timestamptz WHERE session_id = $1 AND id = $2`, [s.id, id, ts]);
      }
      // What the driver's own timestamptz parser made of the same values (the reads did so before).
      const { rows } = await db
        .pool()
        .query<{ id: string; timestamp: Date }>(
          `SELECT id, "timestamp" FROM ${prefix}_events WHERE session_id = $1 ORDER BY seq`,
          [s.id],
        );
      const expected = rows.map((r) => r.timestamp.getTime());
      expect(expected).to.deep.equal([
        Date.parse('2023-05-08T13:56:07.123Z'),
        Date.parse('2023-05-08T13:56:07.123Z'),
        -1,
        Date.parse('2024-02-29T21:59:59.999Z'),
      ]);
      const times = (list: readonly SessionEvent[]) => list.map((e) => e.timestamp.getTime());
      expect(times(await repo.findEvents(s.id))).to.deep.equal(expected);
      expect(times((await repo.findEventNeighbours(s.id, ['b'], 3)).flat())).to.deep.equal(expected);
      expect(
        times((await repo.searchEvents(s.id, 'word', { limit: 10, includeActive: true })).map((h) => h.event)).sort(),
      ).to.deep.equal([...expected].sort());
    });
  });
  describe('prepared statements', function () {
    /** The statements prepared on the one connection of `pool` that read this prefix's tables. */
    async function preparedOn(pool: pg.Pool, p: string): Promise<string[]> {
      const { rows } = await pool.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements');
      return rows.map((r) => r.statement).filter((text) => text.includes(`${p}_events`));
    }

    /** Runs `body` with a fresh prefix on a pool of one connection (prepared statements belong to a connection). */
    async function onOneConnection(body: (pool: pg.Pool, p: string) => Promise<void>): Promise<void> {
      const p = freshPostgresPrefix();
      const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
      try {
        await body(pool, p);
      } finally {
        await dropPostgresTables(pool, p);
        await pool.end();
      }
    }

    /** A session with an archived part and a window, read the way a turn reads it. */
    async function turnReads(repo: PostgresSessionRepository, id: string) {
      await repo.save(Session.create({ id, userId: 'u' }));
      for (const [i, text] of ['the kiwi is ripe', 'buy more kiwi', 'rain today', 'kiwi jam'].entries()) {
        await repo.appendEvent(
          SessionEvent.create({ sessionId: id, id: `${id}-${i}`, message: Messages.user(text), archived: i < 2 }),
        );
      }
      const window = await repo.findEvents(id, EventFilter.active());
      const hits = await repo.searchEvents(id, 'kiwi', { includeActive: true, limit: 10 });
      const together = await repo.searchEventsWithNeighbours(id, 'kiwi', { includeActive: true, limit: 10 }, 1);
      const around = await repo.findEventNeighbours(id, [`${id}-1`], 1);
      return {
        window: window.map((e) => e.id),
        hits: hits.map((h) => [h.event.id, h.score]),
        together: together.neighbours.map((run) => run.map((e) => e.id)),
        around: around.map((run) => run.map((e) => e.id)),
      };
    }

    it("a turn's reads are prepared once per connection, and read what unprepared statements read", async function () {
      await onOneConnection(async (pool, p) => {
        const prepared = new PostgresSessionRepository({ pool, prefix: p });
        const first = await turnReads(prepared, 'a');
        const statements = await preparedOn(pool, p);
        // The window, the search, the search with neighbourhoods and the neighbourhoods.
        expect(statements).to.have.length(4);
        expect(await turnReads(prepared, 'b')).to.deep.equal(JSON.parse(JSON.stringify(first).replaceAll('"a-', '"b-')));
        expect(await preparedOn(pool, p)).to.have.members(statements);
        const plain = new PostgresSessionRepository({ pool, prefix: p, preparedStatements: false });
        expect(await turnReads(plain, 'c')).to.deep.equal(JSON.parse(JSON.stringify(first).replaceAll('"a-', '"c-')));
      });
    });

    it('with preparedStatements: false nothing is prepared (for poolers that do not keep them)', async function () {
      await onOneConnection(async (pool, p) => {
        await turnReads(new PostgresSessionRepository({ pool, prefix: p, preparedStatements: false }), 'a');
        expect(await preparedOn(pool, p)).to.deep.equal([]);
      });
    });

    it('statements prepared before the tables were dropped and created again still read the new tables', async function () {
      await onOneConnection(async (pool, p) => {
        await turnReads(new PostgresSessionRepository({ pool, prefix: p }), 'a');
        await dropPostgresTables(pool, p);
        const reads = await turnReads(new PostgresSessionRepository({ pool, prefix: p }), 'b');
        expect(reads.window).to.deep.equal(['b-2', 'b-3']);
        expect(reads.hits.map(([id]) => id)).to.have.members(['b-0', 'b-1', 'b-3']);
      });
    });

    it('refuses a preparedStatements that is not a boolean', function () {
      expect(
        () => new PostgresSessionRepository({ pool: db.pool(), prefix, preparedStatements: 'yes' as unknown as boolean }),
      ).to.throw(InvalidArgumentError, 'preparedStatements must be a boolean');
    });
  });

  describe('search with neighbourhoods', function () {
    it("the search with neighbourhoods returns the hits searchEvents does, the user's other sessions' whole", async function () {
      const repo = new PostgresSessionRepository({ pool: db.pool(), prefix });
      const [a, b] = [`nb-${Date.now()}-a`, `nb-${Date.now()}-b`];
      for (const id of [a, b]) {
        await repo.save(Session.create({ id, userId: `user-${a}` }));
        for (const [i, text] of ['kiwi one', 'plain', 'kiwi two', 'more plain', 'last'].entries()) {
          await repo.appendEvent(
            SessionEvent.create({ sessionId: id, id: `${id}-${i}`, message: Messages.user(text), archived: i < 4 }),
          );
        }
      }
      for (const scope of ['session', 'user'] as const) {
        const options = { scope, userId: `user-${a}`, limit: 10 };
        const together = await repo.searchEventsWithNeighbours(a, 'kiwi', options, 1);
        const alone = await repo.searchEvents(a, 'kiwi', options);
        expect(together.hits).to.deep.equal(alone);
        expect(new Set(alone.map((h) => h.event.sessionId))).to.deep.equal(new Set(scope === 'user' ? [a, b] : [a]));
        expect(together.neighbours.map((run) => run.map((e) => e.id))).to.deep.equal([[`${a}-0`, `${a}-1`, `${a}-2`, `${a}-3`]]);
      }
    });
  });

  describe('dependency injection', function () {
    it("createSessionCompactionModule({ repository: 'postgres' }) binds a working PostgresSessionRepository", async function () {
      const container = new Container();
      await container.load(
        createSessionCompactionModule({
          repository: 'postgres',
          postgres: { connectionString: PG_URL, prefix },
          logLevel: 'error',
        }),
      );
      const repo = container.get<SessionRepository>(TYPES.SessionRepository);
      try {
        expect(repo).to.be.instanceOf(PostgresSessionRepository);
        const service = container.get<SessionService>(TYPES.SessionService);
        const s = await service.create({ userId: 'di-user' });
        await service.appendMessage(s.id, Messages.user('through DI'));
        expect((await service.getMessages(s.id)).map(messageText)).to.deep.equal(['through DI']);
      } finally {
        await repo.close?.();
      }
    });
  });
});
