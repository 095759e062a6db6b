import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  Session,
  SessionEvent,
  type SessionRepository,
  TYPES,
  createSessionCompactionModule,
  type SessionService,
  RedisSessionRepository,
} from 'session-compaction';
import { messageText } from 'session-compaction/spi';
import { Container } from 'inversify';
import { badInputDifferential } from '../../repository/differential.js';
import { tortureSuite } from '../../repository/torture.js';
import { RedisScript } from '../../../src/backends/redis/RedisScript.js';
import { SET_METADATA_SCRIPT } from '../../../src/backends/redis/scripts.js';
import { REDIS_URL, requireService } from '../../support/services.js';
import { repositoryContract } from '../../repository/contract.js';
import { atomicMetadataSuite } from '../../repository/metadataContract.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../../support/redis.js';

describe('RedisSessionRepository', function () {
  const prefix = freshRedisPrefix();
  let client: Redis;

  before(async function () {
    await requireService(this, 'Redis', probeRedis);
    client = new Redis(REDIS_URL);
  });
  after(async function () {
    if (client !== undefined) {
      await deleteRedisKeys(client, prefix);
      await client.quit();
    }
  });

  repositoryContract('Redis', async () => new RedisSessionRepository({ client, prefix }));
  badInputDifferential('Redis', async () => new RedisSessionRepository({ client, prefix }));

  tortureSuite('two app instances (separate connections)', () =>
    [0, 1].map(() => new RedisSessionRepository({ url: REDIS_URL, prefix })),
  );

  atomicMetadataSuite('two app instances (separate connections)', () =>
    [0, 1].map(() => new RedisSessionRepository({ url: REDIS_URL, prefix })),
  );

  describe('metadata compare-and-set', function () {
    it("gives up with IllegalStateError after 20 lost compare-and-sets, leaving the other writer's metadata", async function () {
      this.timeout(10_000);
      const repo = new RedisSessionRepository({ client, prefix });
      const s = await repo.save(Session.create({ id: `cas-${freshRedisPrefix()}`, userId: 'u', metadata: { n: 0 } }));
      let calls = 0;
      const error = await repo
        .updateSessionMetadata(s.id, (m) => {
          calls++;
          // Another writer gets in between every read and write: queued on the same connection, it reaches
          // Redis before this attempt's compare-and-set.
          void client.hset(`${prefix}:{${s.id}}:session`, 'metadata', JSON.stringify({ n: -calls }));
          return { ...m, n: 1 };
        })
        .then(
          () => null,
          (e: unknown) => e as Error,
        );
      expect(error).to.be.instanceOf(IllegalStateError);
      expect(error!.message).to.equal(
        `Session metadata of ${s.id} changed concurrently on each of 20 attempts; nothing was written`,
      );
      expect(calls).to.equal(20);
      expect((await repo.findById(s.id))!.metadata).to.deep.equal({ n: -20 });
    });
  });

  describe('data model', function () {
    it('compaction leaves the archived list untouched except for appending the newly archived ids', async function () {
      const repo = new RedisSessionRepository({ client, prefix });
      const s = await repo.save(Session.create({ id: `dm-${freshRedisPrefix()}`, userId: 'u' }));
      const events = ['a', 'b', 'c', 'd'].map((t) => SessionEvent.create({ sessionId: s.id, message: Messages.user(t) }));
      for (const e of events) await repo.appendEvent(e);
      await repo.compactEvents(s.id, events.slice(0, 2), events.slice(2), 4);
      await repo.compactEvents(s.id, [events[2]!], [events[3]!], 5);
      expect(await client.lrange(`${prefix}:{${s.id}}:archived`, 0, -1)).to.deep.equal(events.slice(0, 3).map((e) => e.id));
      expect(await client.lrange(`${prefix}:{${s.id}}:active`, 0, -1)).to.deep.equal([events[3]!.id]);
    });

    it('an event appended already archived joins the archive, in log order, at the next compaction', async function () {
      const repo = new RedisSessionRepository({ client, prefix });
      const memory = new InMemorySessionRepository();
      const s = Session.create({ id: `pending-${freshRedisPrefix()}`, userId: 'u' });
      const a = SessionEvent.create({ sessionId: s.id, message: Messages.user('a') });
      const old = SessionEvent.create({ sessionId: s.id, message: Messages.user('imported'), archived: true });
      const b = SessionEvent.create({ sessionId: s.id, message: Messages.user('b') });
      for (const r of [repo, memory]) {
        await r.save(s);
        for (const e of [a, old, b]) await r.appendEvent(e);
        expect((await r.findEvents(s.id, EventFilter.lastN(2))).map((e) => e.text)).to.deep.equal(['imported', 'b']);
        expect((await r.findEvents(s.id, EventFilter.of({ excludeArchived: true, lastN: 2 }))).map((e) => e.text)).to.deep.equal([
          'a',
          'b',
        ]);
        await r.compactEvents(s.id, [a], [b], 3);
      }
      const view = async (r: SessionRepository) => (await r.findEvents(s.id)).map((e) => `${e.text}:${e.archived}`);
      expect(await view(repo)).to.deep.equal(await view(memory));
      expect(await view(repo)).to.deep.equal(['imported:true', 'a:true', 'b:false']);
    });

    it('close() quits a client it created and leaves a caller’s client connected', async function () {
      const own = new RedisSessionRepository({ url: REDIS_URL, prefix });
      await own.findById('x');
      await own.close();
      await new RedisSessionRepository({ client, prefix }).close();
      expect(await client.ping()).to.equal('PONG');
    });

    it('rejects a prefix with characters outside [A-Za-z0-9_.:-]', function () {
      for (const bad of ['a b', '{x}', '', 'a*']) {
        expect(() => new RedisSessionRepository({ client, prefix: bad }), bad).to.throw(
          InvalidArgumentError,
          /prefix must match/,
        );
      }
    });
  });

  describe('applied-write tokens', function () {
    const opened: RedisSessionRepository[] = [];
    /** A repository on the shared client, closed after the test (each adds an 'error' listener to it). */
    const open = (options: { prefix: string; keyTtlFromSession?: boolean }) => {
      const repo = new RedisSessionRepository({ client, ...options });
      opened.push(repo);
      return repo;
    };
    afterEach(async function () {
      for (const repo of opened.splice(0)) await repo.close();
    });

    /** Every key of session `id` under `p`: they all carry its hash tag. */
    const keysOfSession = async (p: string, id: string) => {
      const found: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${p}:{${id}}:*`, 'COUNT', 1000);
        found.push(...keys);
        cursor = next;
      } while (cursor !== '0');
      return found.sort();
    };

    /** A session with a compaction and a metadata update behind it, so its applied-writes set exists. */
    const withAppliedWrites = async (repo: RedisSessionRepository, p: string, expiresAt: Date | null = null) => {
      const s = await repo.save(Session.create({ id: `applied-${freshRedisPrefix()}`, userId: 'u', expiresAt }));
      const [a, b] = ['a', 'b'].map((t) => SessionEvent.create({ sessionId: s.id, message: Messages.user(t) }));
      await repo.appendEvents(s.id, [a!, b!]);
      expect(await repo.compactEvents(s.id, [a!], [b!], 2)).to.equal(true);
      await repo.updateSessionMetadata(s.id, (m) => ({ ...m, n: 1 }));
      expect(await client.zcard(`${p}:{${s.id}}:applied`)).to.equal(2);
      return s;
    };

    it('delete leaves no key of the session behind, the applied-writes set included', async function () {
      const repo = open({ prefix });
      const s = await withAppliedWrites(repo, prefix);
      await repo.delete(s.id);
      expect(await keysOfSession(prefix, s.id)).to.deep.equal([]);
    });

    it('erasure leaves only the tombstone, the applied-writes set gone', async function () {
      const repo = open({ prefix });
      const s = await withAppliedWrites(repo, prefix);
      await repo.eraseSession(s.id, { tombstone: { deletedAt: new Date(), expiresAt: null } });
      expect(await keysOfSession(prefix, s.id)).to.deep.equal([`${prefix}:{${s.id}}:tombstone`]);
    });

    it('the set expires a minute after the newest write, and never after the session with keyTtlFromSession', async function () {
      const plain = open({ prefix });
      const kept = await withAppliedWrites(plain, prefix);
      expect(await client.pttl(`${prefix}:{${kept.id}}:applied`)).to.be.within(50_000, 60_000);
      const p = `${prefix}:ttl`;
      const repo = open({ prefix: p, keyTtlFromSession: true });
      const expiresAt = new Date(Date.now() + 30_000);
      const s = await withAppliedWrites(repo, p, expiresAt);
      expect(await client.pexpiretime(`${p}:{${s.id}}:applied`)).to.equal(expiresAt.getTime());
    });

    it('a session saved already expired takes its applied-writes set with it (keyTtlFromSession)', async function () {
      const p = `${prefix}:ttl`;
      const repo = open({ prefix: p, keyTtlFromSession: true });
      const s = await withAppliedWrites(repo, p, new Date(Date.now() + 3_600_000));
      await repo.save(s.with({ expiresAt: new Date(Date.now() - 1000) }));
      expect(await keysOfSession(p, s.id)).to.deep.equal([]);
    });

    it('a write drops the tokens older than the retention period', async function () {
      const repo = open({ prefix });
      const s = await repo.save(Session.create({ id: `retention-${freshRedisPrefix()}`, userId: 'u', metadata: {} }));
      const keys = [`${prefix}:{${s.id}}:session`, `${prefix}:{${s.id}}:applied`];
      const script = new RedisScript(SET_METADATA_SCRIPT);
      // A 50 ms retention instead of the repository's minute.
      expect(await script.run(client, keys, ['{}', '{"n":1}', 'first', 50, '0'])).to.equal(1);
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await script.run(client, keys, ['{"n":1}', '{"n":2}', 'second', 50, '0'])).to.equal(1);
      expect(await client.zrange(keys[1]!, 0, -1)).to.deep.equal(['second']);
      expect(await client.pttl(keys[1]!)).to.be.within(1, 50);
    });

    it('a write drops the token fields of layout version 3 from the session hash', async function () {
      const repo = open({ prefix });
      const s = await repo.save(Session.create({ id: `legacy-${freshRedisPrefix()}`, userId: 'u' }));
      const key = `${prefix}:{${s.id}}:session`;
      await client.hset(key, 'compaction', 'old-token', 'metadataWrite', 'old-token');
      const e = SessionEvent.create({ sessionId: s.id, message: Messages.user('a') });
      await repo.appendEvent(e);
      await repo.compactEvents(s.id, [], [e], 1);
      expect(await client.hexists(key, 'compaction')).to.equal(0);
      await repo.updateSessionMetadata(s.id, (m) => ({ ...m, n: 1 }));
      expect(await client.hexists(key, 'metadataWrite')).to.equal(0);
    });
  });

  describe('keyTtlFromSession', function () {
    const keysOf = (id: string) => ['session', 'events', 'active', 'archived'].map((k) => `${prefix}:ttl:{${id}}:${k}`);

    it('gives every key of a session its expiresAt, kept through appends and compactions', async function () {
      const repo = new RedisSessionRepository({ client, prefix: `${prefix}:ttl`, keyTtlFromSession: true });
      const expiresAt = new Date(Date.now() + 3_600_000);
      const s = await repo.save(Session.create({ id: 'ttl-1', userId: 'u', expiresAt }));
      const [e1, e2] = [Messages.user('a'), Messages.user('b')].map((m) => SessionEvent.create({ sessionId: s.id, message: m }));
      await repo.appendEvent(e1!);
      await repo.appendEvent(e2!);
      await repo.compactEvents(s.id, [e1!], [e2!], 2);
      for (const key of keysOf(s.id)) expect(await client.pexpiretime(key), key).to.equal(expiresAt.getTime());
    });

    it('a session saved again without expiresAt gets persistent keys', async function () {
      const repo = new RedisSessionRepository({ client, prefix: `${prefix}:ttl`, keyTtlFromSession: true });
      const s = await repo.save(Session.create({ id: 'ttl-2', userId: 'u', expiresAt: new Date(Date.now() + 3_600_000) }));
      await repo.appendEvent(SessionEvent.create({ sessionId: s.id, message: Messages.user('x') }));
      await repo.save(s.with({ expiresAt: null }));
      for (const key of keysOf(s.id).slice(0, 3)) expect(await client.pttl(key), key).to.equal(-1);
    });

    it('an expired session vanishes; findByUserId drops its index entry and delete still cleans the expiry index', async function () {
      const repo = new RedisSessionRepository({ client, prefix: `${prefix}:ttl`, keyTtlFromSession: true });
      const s = await repo.save(Session.create({ id: 'ttl-3', userId: 'gone', expiresAt: new Date(Date.now() - 1000) }));
      expect(await repo.findById(s.id)).to.equal(null);
      expect(await repo.findByUserId('gone')).to.deep.equal([]);
      expect(await client.scard(`${prefix}:ttl:user:gone`)).to.equal(0);
      expect(await repo.findExpiredSessionIds(new Date())).to.include(s.id);
      await repo.delete(s.id);
      expect(await repo.findExpiredSessionIds(new Date())).to.not.include(s.id);
    });

    it('is off by default: keys persist', async function () {
      const repo = new RedisSessionRepository({ client, prefix: `${prefix}:ttl` });
      const s = await repo.save(Session.create({ id: 'ttl-4', userId: 'u', expiresAt: new Date(Date.now() + 60_000) }));
      expect(await client.pttl(keysOf(s.id)[0]!)).to.equal(-1);
    });
  });
  describe('dependency injection', function () {
    it("createSessionCompactionModule({ repository: 'redis' }) binds a working RedisSessionRepository", async function () {
      const container = new Container();
      await container.load(
        createSessionCompactionModule({ repository: 'redis', redis: { url: REDIS_URL, prefix }, logLevel: 'error' }),
      );
      const repo = container.get<SessionRepository>(TYPES.SessionRepository);
      try {
        expect(repo).to.be.instanceOf(RedisSessionRepository);
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
