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
