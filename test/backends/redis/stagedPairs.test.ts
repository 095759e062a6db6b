/**
 * Redis writes larger than one script call (SCRIPT_BATCH) are staged in bounded calls and committed by one
 * atomic script: the whole repository contract holds with a batch of 2 pairs, a stale compaction still loses
 * its compare-and-set with nothing written, a re-sent commit is still recognised, and no stage key is left
 * behind. The 200,000-event window is measured in benchmarks/redis-large-window.ts.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  RedisSessionRepository,
  Session,
  SessionEvent,
  SlidingWindowCompactionStrategy,
} from 'session-compaction';
import { SCRIPT_BATCH } from '../../../src/backends/redis/stagedPairs.js';
import { repositoryContract } from '../../repository/contract.js';
import { CharEstimator } from '../../support/fixtures.js';
import { deleteRedisKeys, freshRedisPrefix, probeRedis } from '../../support/redis.js';
import { REDIS_URL, requireService } from '../../support/services.js';
import { silentLogger } from '../../summarization/support.js';

describe('Redis: writes staged in bounded script calls', function () {
  const prefix = freshRedisPrefix();
  let client: Redis;
  let batch: number;
  before(async function () {
    await requireService(this, 'Redis', probeRedis);
    client = new Redis(REDIS_URL);
    batch = SCRIPT_BATCH.pairs;
    SCRIPT_BATCH.pairs = 2;
  });
  after(async function () {
    SCRIPT_BATCH.pairs = batch;
    if (client === undefined) return;
    await deleteRedisKeys(client, prefix);
    await client.quit();
  });

  repositoryContract('Redis, 2 pairs per script call', async () => new RedisSessionRepository({ client, prefix }));

  async function stageKeys(): Promise<string[]> {
    return client.keys(`${prefix}:*:stage:*`);
  }

  async function sessionWith(repo: RedisSessionRepository, n: number) {
    const s = await repo.save(Session.create({ id: `staged-${freshRedisPrefix()}`, userId: 'u' }));
    const events = Array.from({ length: n }, (_, i) =>
      SessionEvent.create({
        sessionId: s.id,
        id: `e${i}`,
        message: i % 2 === 0 ? Messages.user(`q${i}`) : Messages.assistant(`a${i}`),
      }),
    );
    expect(await repo.appendEvents(s.id, events)).to.equal(n);
    return { id: s.id, events };
  }

  it('a 1,000-event batch append and compaction of it commit whole, in order, and leave no stage behind', async function () {
    SCRIPT_BATCH.pairs = 7;
    try {
      const repo = new RedisSessionRepository({ client, prefix });
      const { id, events } = await sessionWith(repo, 1000);
      expect(await repo.getEventVersion(id)).to.equal(1000);
      expect(await repo.compactEvents(id, events.slice(0, 990), events.slice(990), 1000)).to.equal(true);
      expect((await repo.findEvents(id, EventFilter.active())).map((e) => e.id)).to.deep.equal(
        events.slice(990).map((e) => e.id),
      );
      const all = await repo.findEvents(id, EventFilter.all());
      expect(all.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
      expect(all.filter((e) => e.archived)).to.have.length(990);
      expect(await stageKeys()).to.deep.equal([]);
    } finally {
      SCRIPT_BATCH.pairs = 2;
    }
  });

  it('a staged compaction with a stale version loses its compare-and-set: nothing written, no stage left', async function () {
    const repo = new RedisSessionRepository({ client, prefix });
    const { id, events } = await sessionWith(repo, 12);
    const stale = await repo.getEventVersion(id);
    await repo.appendEvent(SessionEvent.create({ sessionId: id, id: 'late', message: Messages.user('late') }));
    expect(await repo.compactEvents(id, events.slice(0, 10), events.slice(10), stale)).to.equal(false);
    expect((await repo.findEvents(id, EventFilter.active())).map((e) => e.id)).to.deep.equal([
      ...events.map((e) => e.id),
      'late',
    ]);
    expect(await stageKeys()).to.deep.equal([]);
  });

  it('the service compacts and forks a window staged in many calls', async function () {
    const repo = new RedisSessionRepository({ client, prefix });
    const service = new DefaultSessionService(repo, { logger: silentLogger });
    const { id, events } = await sessionWith(repo, 40);
    const result = await service.compact(
      id,
      () => true,
      new SlidingWindowCompactionStrategy({ maxEvents: 4, tokenCountEstimator: new CharEstimator() }),
    );
    expect(result.archivedEvents).to.have.length(36);
    const fork = await service.forkSession!(id);
    const copied = await repo.findEvents(fork.id, EventFilter.all());
    expect(copied.map((e) => e.text)).to.deep.equal(events.map((e) => e.text));
    expect(await stageKeys()).to.deep.equal([]);
  });
});
