/**
 * revertCompaction under the configured compaction lock: a revert and a compaction of one session in two
 * processes are serialised by the shared-store locks (SQLite file, PostgreSQL, Redis). Each "process" is a
 * service with its own repository on one SQLite file and its own lock handle on the lock's store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  DefaultSessionService,
  IllegalStateError,
  InMemorySessionRepository,
  InProcessCompactionLock,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  type CompactionLock,
  createDefaultLogger,
} from 'session-compaction';
import { PostgresCompactionLock } from 'session-compaction/postgres';
import { RedisCompactionLock } from 'session-compaction/redis';
import type { CompactionLease } from 'session-compaction/spi';
import { SqliteCompactionLock } from 'session-compaction/sqlite';
import { PG_URL, REDIS_URL, freshServicePrefix, requireService } from '../../support/services.js';
import { deleteRedisKeys, probeRedis } from '../../support/redis.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';
import { probePostgres } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });

/** Opens one handle on the lock's store per call, as each process would; `close` closes them all. */
interface SharedLock {
  name: string;
  setup(ctx: Mocha.Context, dir: string): Promise<void>;
  open(): CompactionLock;
  teardown(): Promise<void>;
}

const sharedLocks: SharedLock[] = [
  (() => {
    let path = '';
    const opened: SqliteCompactionLock[] = [];
    return {
      name: 'SqliteCompactionLock (one file)',
      setup: async (_ctx: Mocha.Context, dir: string) => void (path = join(dir, 'locks.db')),
      open: () => {
        const lock = new SqliteCompactionLock({ path });
        opened.push(lock);
        return lock;
      },
      teardown: async () => {
        for (const l of opened.splice(0)) await l.close();
      },
    };
  })(),
  (() => {
    const prefix = freshServicePrefix();
    const opened: PostgresCompactionLock[] = [];
    return {
      name: 'PostgresCompactionLock',
      setup: async (ctx: Mocha.Context) => requireService(ctx, 'PostgreSQL', probePostgres),
      open: () => {
        const lock = new PostgresCompactionLock({ connectionString: PG_URL, prefix, logger });
        opened.push(lock);
        return lock;
      },
      teardown: async () => {
        for (const l of opened.splice(0)) await l.close();
      },
    };
  })(),
  (() => {
    const prefix = freshServicePrefix();
    const opened: RedisCompactionLock[] = [];
    return {
      name: 'RedisCompactionLock',
      setup: async (ctx: Mocha.Context) => requireService(ctx, 'Redis', probeRedis),
      open: () => {
        const lock = new RedisCompactionLock({ url: REDIS_URL, prefix, logger });
        opened.push(lock);
        return lock;
      },
      teardown: async () => {
        const any = opened.length > 0;
        for (const l of opened.splice(0)) await l.close();
        if (!any) return;
        const client = new Redis(REDIS_URL);
        await deleteRedisKeys(client, prefix);
        client.disconnect();
      },
    };
  })(),
];

const slidingWindow = (maxEvents: number) => new SlidingWindowCompactionStrategy({ maxEvents, cutWithinTurn: 'never' });
const summarizer = (client: ScriptedChatClient) =>
  new RecursiveSummarizationCompactionStrategy({ chatClient: client, maxEventsToKeep: 2, overlapSize: 0, logger: silentLogger });

for (const shared of sharedLocks) {
  describe(`revertCompaction under the compaction lock: ${shared.name}`, function () {
    this.timeout(20_000);
    let dir: string;
    const repositories: SqliteSessionRepository[] = [];

    before(async function () {
      dir = mkdtempSync(join(tmpdir(), 'revert-lock-'));
      await shared.setup(this, dir);
    });
    afterEach(async () => {
      for (const r of repositories.splice(0)) await r.close();
      await shared.teardown();
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    /** A service as one process runs it: its own repository on the shared file, its own lock handle. */
    function process(
      waitMs = 0,
      summaryRegenerationClient?: ScriptedChatClient,
    ): { service: DefaultSessionService; repository: SqliteSessionRepository } {
      const repository = new SqliteSessionRepository({ path: join(dir, 'sessions.db'), logger });
      repositories.push(repository);
      const service = new DefaultSessionService(repository, {
        logger: silentLogger,
        compactionLock: { lock: shared.open(), waitMs },
        ...(summaryRegenerationClient !== undefined ? { summaryRegenerationClient } : {}),
      });
      return { service, repository };
    }

    /** A conversation of `turns` turns with one recorded compaction (the sliding window keeps 8 events). */
    async function compactedOnce(service: DefaultSessionService, turns = 8): Promise<{ id: string; compactionId: string }> {
      const { id } = await service.create({ userId: 'alice' });
      for (let i = 0; i < turns; i++) {
        await service.appendMessage(id, Messages.user(`question ${i}`));
        await service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      const result = await service.compact(id, () => true, slidingWindow(8));
      expect(result.isNoop()).to.equal(false);
      const [record] = await service.listCompactions(id);
      return { id, compactionId: record!.id };
    }

    it('a revert waits for a compaction running in another process, then sees what it committed', async function () {
      const one = process(0);
      const two = process(10_000);
      const { id, compactionId } = await compactedOnce(one.service);
      const client = new ScriptedChatClient(['summary'], { delayMs: 400 });
      const compaction = one.service.compact(id, () => true, summarizer(client));
      await sleep(150);
      // Without the lease the revert would commit now, and the summary above would lose its CAS.
      const revert = await two.service.revertCompaction(id, compactionId).then(
        () => null,
        (error: unknown) => error as Error,
      );
      const result = await compaction;
      expect(result.skipReason).to.equal(undefined);
      expect(result.isNoop()).to.equal(false);
      expect(client.callCount).to.equal(1);
      const [latest] = await one.service.listCompactions(id);
      expect(revert).to.be.instanceOf(IllegalStateError);
      expect(revert!.message).to.include(`while the later compaction ${latest!.id} stands`);
    });

    it('with waitMs 0, a revert while another process holds the lease is refused and changes nothing', async function () {
      const one = process(0);
      const other = shared.open();
      const { id, compactionId } = await compactedOnce(one.service);
      const version = await one.service.getEventVersion(id);
      const lease = (await other.acquire(id, { leaseMs: 10_000 }))!;
      expect(lease).to.not.equal(null);
      try {
        const refused = await one.service.revertCompaction(id, compactionId).then(
          () => null,
          (error: unknown) => error as Error,
        );
        expect(refused).to.be.instanceOf(IllegalStateError);
        expect(refused!.message).to.include('being compacted by another holder of the compaction lock');
        expect(await one.service.getEventVersion(id)).to.equal(version);
        expect((await one.service.listCompactions(id))[0]!.revertedAt).to.equal(null);
      } finally {
        await other.release(lease);
      }
      const reverted = await one.service.revertCompaction(id, compactionId);
      expect(reverted.version).to.equal(version + 1);
    });

    it('a compaction in another process finds the lease held while a revert runs, and skips', async function () {
      const { id, compactionId } = await compactedOnce(process(0).service);
      const one = process(0);
      const two = process(0);
      // Slow the revert down once it holds the lease: its first read of the records waits (patched before the
      // service first touches the method).
      const listCompactions = one.repository.listCompactions.bind(one.repository);
      let slowed = false;
      one.repository.listCompactions = async (sessionId: string) => {
        if (!slowed) {
          slowed = true;
          await sleep(400);
        }
        return listCompactions(sessionId);
      };
      const revert = one.service.revertCompaction(id, compactionId);
      await sleep(150);
      const client = new ScriptedChatClient(['summary']);
      const result = await two.service.compact(id, () => true, summarizer(client));
      expect(result.skipReason).to.equal('lock-held');
      expect(client.callCount).to.equal(0);
      const reverted = await revert;
      expect(reverted.compactionId).to.equal(compactionId);
    });

    it('a restored summary written from since-redacted content is regenerated under the lease: a compaction elsewhere meanwhile skips', async function () {
      const regeneration = new ScriptedChatClient(['a summary without the secret'], { delayMs: 400 });
      const one = process(0, regeneration);
      const two = process(0);
      const { id } = await one.service.create({ userId: 'alice' });
      const secret = await one.service.appendMessage(id, Messages.user('my password is hunter2'));
      await one.service.appendMessage(id, Messages.assistant('noted'));
      for (let i = 0; i < 3; i++) {
        await one.service.appendMessage(id, Messages.user(`question ${i}`));
        await one.service.appendMessage(id, Messages.assistant(`answer ${i}`));
      }
      await one.service.compact(id, () => true, summarizer(new ScriptedChatClient(['the password is hunter2'])));
      for (let i = 0; i < 3; i++) await one.service.appendMessage(id, Messages.user(`more ${i}`));
      await one.service.compact(id, () => true, summarizer(new ScriptedChatClient(['second summary'])));
      await one.service.redactEvent(id, secret.id, { reason: 'user request' });
      const [latest] = await one.service.listCompactions(id);
      // The revert restores the first summary, tainted; regenerating it takes the model 400 ms.
      const revert = one.service.revertCompaction(id, latest!.id);
      while (regeneration.callCount === 0) await sleep(10);
      const client = new ScriptedChatClient(['summary']);
      const result = await two.service.compact(id, () => true, summarizer(client));
      expect(result.skipReason).to.equal('lock-held');
      expect(client.callCount).to.equal(0);
      const reverted = await revert;
      expect(reverted.events.map((e) => e.text ?? '').join(' ')).to.not.include('hunter2');
      expect(reverted.events.map((e) => e.text ?? '').join(' ')).to.include('a summary without the secret');
    });
  });
}

describe('revertCompaction under the compaction lock: a lease lost meanwhile', function () {
  it('does not commit when the lease was lost before the revert wrote (nothing changed, IllegalStateError)', async function () {
    const inner = new InProcessCompactionLock();
    // A store that lost the lease: every renewal says so.
    const lossy: CompactionLock = {
      acquire: (s, o) => inner.acquire(s, o),
      renew: async () => null,
      release: (l: CompactionLease) => inner.release(l),
    };
    const repository = new InMemorySessionRepository();
    const setup = new DefaultSessionService(repository, { logger: silentLogger });
    const { id } = await setup.create({ userId: 'alice' });
    for (let i = 0; i < 6; i++) await setup.appendMessage(id, Messages.user(`question ${i}`));
    await setup.compact(id, () => true, slidingWindow(2));
    const [record] = await setup.listCompactions(id);
    const version = await setup.getEventVersion(id);
    // The revert's first read outlasts the renewal interval (a third of leaseMs), so a renewal runs and fails.
    const listCompactions = repository.listCompactions.bind(repository);
    const slow = Object.create(repository) as InMemorySessionRepository;
    slow.listCompactions = async (sessionId: string) => {
      await sleep(120);
      return listCompactions(sessionId);
    };
    const service = new DefaultSessionService(slow, { logger: silentLogger, compactionLock: { lock: lossy, leaseMs: 60 } });
    const error = await service.revertCompaction(id, record!.id).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).to.be.instanceOf(IllegalStateError);
    expect(error!.message).to.include('compaction lease of session');
    expect(await setup.getEventVersion(id)).to.equal(version);
    expect((await setup.listCompactions(id))[0]!.revertedAt).to.equal(null);
  });
});
