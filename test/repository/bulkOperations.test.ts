/**
 * The optional bulk SPI methods (appendEvents, listSessionIds) on every backend: the same results as the
 * one-at-a-time methods they stand in for.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  PostgresSessionRepository,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import type { BatchAppendRepository, EnumerableRepository } from 'session-compaction/spi';
import { PG_URL, REDIS_URL, requireService } from '../support/services.js';
import { dropPostgresTables, freshPostgresPrefix, probePostgres } from '../support/postgres.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../support/redis.js';

type Bulk = SessionRepository & BatchAppendRepository & EnumerableRepository;

let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

function bulkContract(name: string, factory: () => Promise<Bulk>, setup?: (ctx: Mocha.Context) => Promise<void>): void {
  describe(`bulk SPI: ${name}`, function () {
    let repo: Bulk;
    before(async function () {
      if (setup) await setup(this);
    });
    beforeEach(async () => (repo = await factory()));
    afterEach(async () => repo?.close?.());

    const session = async () => repo.save(Session.create({ id: uid('s'), userId: 'u' }));
    const ev = (sessionId: string, text: string, archived = false) =>
      SessionEvent.create({ sessionId, id: uid('e'), message: Messages.user(text), archived });

    it('appendEvents keeps order and archived flags and bumps the version once per new event', async function () {
      const s = await session();
      const first = ev(s.id, 'a');
      await repo.appendEvent(first);
      const batch = [first, ev(s.id, 'b', true), ev(s.id, 'c'), ev(s.id, 'd')];
      expect(await repo.appendEvents(s.id, batch)).to.equal(3);
      const log = await repo.findEvents(s.id, EventFilter.all());
      expect(log.map((e) => [e.text, e.archived])).to.deep.equal([
        ['a', false],
        ['b', true],
        ['c', false],
        ['d', false],
      ]);
      expect(await repo.getEventVersion(s.id)).to.equal(4);
      expect((await repo.findEvents(s.id, EventFilter.active())).map((e) => e.text)).to.deep.equal(['a', 'c', 'd']);
    });

    it('appendEvents of a batch already stored changes nothing', async function () {
      const s = await session();
      const batch = [ev(s.id, 'a'), ev(s.id, 'b')];
      await repo.appendEvents(s.id, batch);
      expect(await repo.appendEvents(s.id, batch)).to.equal(0);
      expect(await repo.getEventVersion(s.id)).to.equal(2);
      expect(await repo.findEvents(s.id)).to.have.length(2);
    });

    it('an id repeated inside one batch is appended once', async function () {
      const s = await session();
      const a = ev(s.id, 'a');
      expect(await repo.appendEvents(s.id, [a, ev(s.id, 'b'), a])).to.equal(2);
      expect((await repo.findEvents(s.id)).map((e) => e.text)).to.deep.equal(['a', 'b']);
      expect(await repo.getEventVersion(s.id)).to.equal(2);
    });

    it('appendEvents rejects a missing session and an event of another session, writing nothing', async function () {
      const missing = uid('missing');
      let error: unknown;
      await repo.appendEvents(missing, [ev(missing, 'x')]).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect((error as Error).message).to.equal(`Session not found: ${missing}`);
      const s = await session();
      error = undefined;
      await repo.appendEvents(s.id, [ev(s.id, 'ok'), ev('other', 'x')]).catch((e: unknown) => (error = e));
      expect((error as Error).message).to.include('belongs to session other');
      expect(await repo.findEvents(s.id)).to.deep.equal([]);
    });

    it('listSessionIds pages through every session exactly once', async function () {
      const ids = new Set<string>();
      for (let i = 0; i < 7; i++) ids.add((await session()).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await repo.listSessionIds({ cursor, limit: 2 });
        seen.push(...page.ids);
        cursor = page.cursor;
      } while (cursor !== null);
      const mine = [...new Set(seen)].filter((id) => ids.has(id));
      expect(mine.sort()).to.deep.equal([...ids].sort());
      // Deleted sessions are gone from the listing.
      const gone = [...ids][0]!;
      await repo.delete(gone);
      const all: string[] = [];
      cursor = null;
      do {
        const page = await repo.listSessionIds({ cursor, limit: 100 });
        all.push(...page.ids);
        cursor = page.cursor;
      } while (cursor !== null);
      expect(all).to.not.include(gone);
    });

    it('listSessionIds rejects a non-positive limit', async function () {
      let error: unknown;
      await repo.listSessionIds({ limit: 0 }).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(InvalidArgumentError);
    });
  });
}

bulkContract('InMemorySessionRepository', async () => new InMemorySessionRepository());

const dir = mkdtempSync(join(tmpdir(), 'bulk-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let file = 0;
bulkContract('SqliteSessionRepository', async () => new SqliteSessionRepository({ path: join(dir, `b-${file++}.db`) }));

const pgPrefix = freshPostgresPrefix();
let pool: pg.Pool | undefined;
bulkContract(
  'PostgresSessionRepository',
  async () => new PostgresSessionRepository({ pool: pool!, prefix: pgPrefix }),
  async (ctx) => {
    await requireService(ctx, 'PostgreSQL', probePostgres);
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  },
);

const redisPrefix = freshRedisPrefix();
let client: Redis | undefined;
bulkContract(
  'RedisSessionRepository',
  async () => new RedisSessionRepository({ client: client!, prefix: redisPrefix }),
  async (ctx) => {
    await requireService(ctx, 'Redis', probeRedis);
    client = new Redis(REDIS_URL);
  },
);

after(async function () {
  if (pool !== undefined) {
    await dropPostgresTables(pool, pgPrefix);
    await pool.end();
  }
  if (client !== undefined) {
    await deleteRedisKeys(client, redisPrefix);
    client.disconnect();
  }
});
