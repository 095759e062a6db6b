import { createServer } from 'node:net';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  RepositoryConnectionError,
  Session,
  SessionEvent,
  createDefaultLogger,
  RedisSessionRepository,
} from 'session-compaction';
import { RedisScript } from '../../../src/backends/redis/RedisScript.js';
import { COMPACT_SCRIPT, FORK_SCRIPT, SAVE_SCRIPT, SET_METADATA_SCRIPT } from '../../../src/backends/redis/scripts.js';
import { ReplyDroppingProxy } from '../../support/ReplyDroppingProxy.js';
import { deleteRedisKeys, probeRedis } from '../../support/redis.js';
import { REDIS_URL, freshServicePrefix, requireService } from '../../support/services.js';
import { describeChaos, runConnectionChaos } from '../../repository/connectionFaults.js';
import {
  describeCrashSummary,
  describeForkCrashSummary,
  runCrashes,
  runForkCrashes,
  seedForkSource,
} from '../../repository/crashHarness.js';

const silent = createDefaultLogger({ silent: true });

function withConnectionName(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('connectionName', name);
  return u.toString();
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('RedisSessionRepository under connection faults', function () {
  this.timeout(120_000);
  const prefix = freshServicePrefix();
  let admin: Redis;

  before(async function () {
    await requireService(this, 'Redis', probeRedis);
    admin = new Redis(REDIS_URL);
  });
  after(async function () {
    if (admin === undefined) return;
    await deleteRedisKeys(admin, prefix);
    await admin.quit();
  });

  /** CLIENT KILL on the clients named `name`: one at random, or (one time in five) all of them. */
  const kill = async (name: string, all = Math.random() < 0.2): Promise<number> => {
    const list = (await admin.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /^id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    const victims = all ? ids : ids.slice(0, 1).map(() => ids[Math.floor(Math.random() * ids.length)]!);
    let killed = 0;
    for (const id of victims) killed += Number(await admin.client('KILL', 'ID', id));
    return killed;
  };

  it('clients killed every 5–25 ms during 400 appends and concurrent compactions: no crash, no loss, no half-applied compaction', async function () {
    const name = `sc-chaos-${prefix}`;
    const appendRepository = new RedisSessionRepository({ url: withConnectionName(REDIS_URL, name), prefix, logger: silent });
    // The caller's client, with ioredis defaults (it re-sends commands in flight) and a short timeout, so
    // some calls give up while the client reconnects.
    const callerClient = new Redis(REDIS_URL, { connectionName: name });
    const compactRepository = new RedisSessionRepository({ client: callerClient, prefix, logger: silent, commandTimeoutMs: 150 });
    try {
      const stats = await runConnectionChaos({
        sessionId: `chaos-${prefix}`,
        appendRepository,
        compactRepository,
        kill: () => kill(name),
        // A call that timed out may still run after the reconnect; a reply to a later command proves it has.
        settle: async () => {
          await callerClient.ping();
        },
        open: async () => new RedisSessionRepository({ client: admin, prefix, logger: silent }),
      });
      console.log(`      ${describeChaos('Redis', stats)}`);
      expect(stats.kills, 'connections were really killed').to.be.greaterThan(20);
    } finally {
      await appendRepository.close();
      await compactRepository.close();
      callerClient.disconnect();
    }
  });

  it('a client killed between calls does not crash the process; the next call works', async function () {
    const name = `sc-idle-${prefix}`;
    const repo = new RedisSessionRepository({ url: withConnectionName(REDIS_URL, name), prefix, logger: silent });
    try {
      await repo.save(Session.create({ id: `idle-${prefix}`, userId: 'u' }));
      for (let i = 0; i < 5; i++) {
        expect(await kill(name, true)).to.equal(1);
        expect((await repo.findById(`idle-${prefix}`))?.userId).to.equal('u');
      }
    } finally {
      await repo.close();
    }
  });

  it('an unreachable server: a call waits at most commandTimeoutMs, then RepositoryConnectionError', async function () {
    const url = new URL(REDIS_URL);
    url.port = String(await closedPort());
    const repo = new RedisSessionRepository({ url: url.toString(), prefix, logger: silent, commandTimeoutMs: 300 });
    try {
      const started = Date.now();
      const error = await caught(repo.appendEvent(SessionEvent.create({ sessionId: 's', message: Messages.user('hi') })));
      const waited = Date.now() - started;
      expect(error).to.be.instanceOf(RepositoryConnectionError);
      expect((error as RepositoryConnectionError).operation).to.equal('appendEvent');
      expect((error as RepositoryConnectionError).retriable).to.equal(true);
      expect(waited).to.be.within(250, 2000);
    } finally {
      await repo.close();
    }
  });

  it('with failFastWhenDisconnected a call made while disconnected fails at once', async function () {
    const url = new URL(REDIS_URL);
    url.port = String(await closedPort());
    const repo = new RedisSessionRepository({
      url: url.toString(),
      prefix,
      logger: silent,
      commandTimeoutMs: 5000,
      failFastWhenDisconnected: true,
    });
    try {
      const started = Date.now();
      const error = await caught(repo.findById('x'));
      expect(error).to.be.instanceOf(RepositoryConnectionError);
      expect(Date.now() - started).to.be.below(200);
    } finally {
      await repo.close();
    }
  });

  it('close() leaves a caller’s client connected and removes the error listener it added', async function () {
    const client = new Redis(REDIS_URL);
    try {
      const before = client.listenerCount('error');
      const repo = new RedisSessionRepository({ client, prefix, logger: silent });
      expect(client.listenerCount('error')).to.equal(before + 1);
      await repo.findById('x');
      await repo.close();
      expect(client.listenerCount('error')).to.equal(before);
      expect(await client.ping()).to.equal('PONG');
    } finally {
      client.disconnect();
    }
  });

  it('a compaction sent twice (a re-send after a dropped reply) commits once and reports committed both times', async function () {
    const repo = new RedisSessionRepository({ client: admin, prefix, logger: silent });
    const id = `resend-${prefix}`;
    await repo.save(Session.create({ id, userId: 'u' }));
    const events = ['a', 'b', 'c'].map((t) => SessionEvent.create({ sessionId: id, message: Messages.user(t) }));
    for (const e of events) await repo.appendEvent(e);
    const base = `${prefix}:{${id}}`;
    const keys = ['session', 'events', 'active', 'archived', 'pending', 'compactions', 'applied', 'stage:none'].map(
      (k) => `${base}:${k}`,
    );
    const value = (e: SessionEvent, archived: boolean) =>
      (archived ? '1' : '0') + JSON.stringify({ id: e.id, sessionId: id, timestamp: 0, messageType: 'user', text: e.text });
    // No record field to write ('', ''), none required (''); tokens kept for a minute; no summary field ('', '');
    // pairs inline ('').
    const noRecord = ['', '', ''];
    const noSummary = ['', ''];
    const args = [
      '3',
      '0',
      1,
      'token-1',
      ...noRecord,
      60_000,
      ...noSummary,
      '',
      events[0]!.id,
      value(events[0]!, true),
      events[1]!.id,
      value(events[1]!, false),
    ];
    const script = new RedisScript(COMPACT_SCRIPT);
    expect(await script.run(admin, keys, args)).to.equal(1);
    expect(await script.run(admin, keys, args)).to.equal(1);
    expect(await repo.getEventVersion(id)).to.equal(4);
    expect(await script.run(admin, keys, [...args.slice(0, 3), 'token-2', ...args.slice(4)])).to.equal(0);
  });

  describe('a reply lost while another writer commits before the re-send', function () {
    const setMetadataSha = new RedisScript(SET_METADATA_SCRIPT).sha;
    const compactSha = new RedisScript(COMPACT_SCRIPT).sha;
    let proxy: ReplyDroppingProxy;
    before(async function () {
      proxy = await ReplyDroppingProxy.start(REDIS_URL);
    });
    after(async function () {
      await proxy?.close();
    });

    /** What SessionUsageRecorder does to session metadata: an accumulation, wrong if applied twice. */
    const addCost = (usd: number) => (m: Record<string, unknown>) => ({ ...m, costUsd: (m.costUsd as number) + usd });

    /** Session `id` at costUsd 1, updated once through `through` so that its next update is an EVALSHA. */
    const accumulatingSession = async (id: string, through: RedisSessionRepository, direct: RedisSessionRepository) => {
      await direct.save(Session.create({ id, userId: 'u', metadata: { costUsd: 0 } }));
      await through.updateSessionMetadata(id, addCost(1));
    };

    const lostMetadataReplyAppliesOnce = async (id: string, through: RedisSessionRepository) => {
      const direct = new RedisSessionRepository({ client: admin, prefix, logger: silent });
      await accumulatingSession(id, through, direct);
      const lost = proxy.drop({
        request: (chunk) => chunk.includes(setMetadataSha),
        between: async () => {
          await direct.updateSessionMetadata(id, addCost(10));
        },
      });
      let runs = 0;
      const written = await through.updateSessionMetadata(id, (m) => {
        runs++;
        return addCost(100)(m);
      });
      await lost;
      expect(runs, 'update applications').to.equal(1);
      expect(written!.metadata).to.deep.equal({ costUsd: 101 });
      expect((await direct.findById(id))!.metadata).to.deep.equal({ costUsd: 111 });
    };

    it('a metadata update re-sent by ioredis after another writer updated the session applies once: the costs add up exactly', async function () {
      const through = new RedisSessionRepository({ url: proxy.url, prefix, logger: silent });
      try {
        await lostMetadataReplyAppliesOnce(`lost-md-${prefix}`, through);
      } finally {
        await through.close();
      }
    });

    it('a metadata update re-sent by the repository’s own retry after another writer updated the session applies once', async function () {
      // With maxRetriesPerRequest 0 ioredis fails the command in flight at the disconnect instead of re-sending
      // it (MaxRetriesPerRequestError), and the repository's retry sends it again.
      const client = new Redis(proxy.url, { maxRetriesPerRequest: 0 });
      const warnings: string[] = [];
      const logger = { error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) };
      const through = new RedisSessionRepository({ client, prefix, logger });
      try {
        await lostMetadataReplyAppliesOnce(`lost-md-retry-${prefix}`, through);
        expect(warnings).to.include('Redis connection lost; retrying once');
      } finally {
        await through.close();
        client.disconnect();
      }
    });

    it('a compaction re-sent after another compaction committed reports committed, and the log holds both once', async function () {
      const id = `lost-compaction-${prefix}`;
      const through = new RedisSessionRepository({ url: proxy.url, prefix, logger: silent });
      const direct = new RedisSessionRepository({ client: admin, prefix, logger: silent });
      try {
        await direct.save(Session.create({ id, userId: 'u' }));
        const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((t) => SessionEvent.create({ sessionId: id, message: Messages.user(t) }));
        for (const e of [a!, b!, c!, d!]) await direct.appendEvent(e);
        // Cached by the server from here on: the compaction below is an EVALSHA.
        expect(await through.compactEvents(id, [a!], [b!, c!, d!], 4)).to.equal(true);
        const lost = proxy.drop({
          request: (chunk) => chunk.includes(compactSha),
          between: async () => {
            expect(await direct.compactEvents(id, [c!], [d!], 6)).to.equal(true);
          },
        });
        expect(await through.compactEvents(id, [b!], [c!, d!], 5)).to.equal(true);
        await lost;
        expect(await direct.getEventVersion(id)).to.equal(7);
        const log = await direct.findEvents(id);
        expect(log.map((e) => `${e.text}:${e.archived}`)).to.deep.equal(['a:true', 'b:true', 'c:true', 'd:false']);
      } finally {
        await through.close();
      }
    });
  });

  describe('a create or a fork whose reply is lost (ioredis re-sends the applied insert-if-absent)', function () {
    const saveSha = new RedisScript(SAVE_SCRIPT).sha;
    const forkSha = new RedisScript(FORK_SCRIPT).sha;
    let proxy: ReplyDroppingProxy;
    before(async function () {
      proxy = await ReplyDroppingProxy.start(REDIS_URL);
    });
    after(async function () {
      await proxy?.close();
    });

    it("create({ id }) whose insert was applied but whose reply was lost returns the caller's session, not 'already exists'", async function () {
      const through = new RedisSessionRepository({ url: proxy.url, prefix, logger: silent });
      const direct = new RedisSessionRepository({ client: admin, prefix, logger: silent });
      try {
        const service = new DefaultSessionService(through, { logger: silent });
        // Cached by the server from here on: the insert below is an EVALSHA.
        await service.create({ userId: 'u', id: `warm-${prefix}` });
        const id = `lost-create-${prefix}`;
        let appliedBeforeResend = false;
        const lost = proxy.drop({
          request: (chunk) => chunk.includes(saveSha) && chunk.includes(id),
          between: async () => {
            appliedBeforeResend = (await direct.findById(id)) !== null;
          },
        });
        const session = await service.create({ userId: 'u', id });
        await lost;
        expect(appliedBeforeResend, 'the first send was applied').to.equal(true);
        expect(session.id).to.equal(id);
        expect((await direct.findById(id))?.userId).to.equal('u');
        // A different caller asking for the same id is still refused.
        expect(await caught(service.create({ userId: 'u', id }))).to.have.property('message', `Session already exists: ${id}`);
      } finally {
        await through.close();
      }
    });

    it('forkSession whose write was applied but whose reply was lost returns the fork, whole', async function () {
      const through = new RedisSessionRepository({ url: proxy.url, prefix, logger: silent });
      const direct = new RedisSessionRepository({ client: admin, prefix, logger: silent });
      try {
        const service = new DefaultSessionService(through, { logger: silent });
        const source = await service.create({ userId: 'u', id: `fork-source-${prefix}` });
        for (const text of ['a', 'b', 'c']) await service.appendMessage(source.id, Messages.user(text));
        await service.forkSession(source.id, { id: `warm-fork-${prefix}` });
        const forkId = `lost-fork-${prefix}`;
        const lost = proxy.drop({
          request: (chunk) => chunk.includes(forkSha) && chunk.includes(forkId),
          between: async () => {},
        });
        const fork = await service.forkSession(source.id, { id: forkId });
        await lost;
        expect(fork.id).to.equal(forkId);
        const copied = await direct.findEvents(forkId, EventFilter.all());
        expect(copied.map((e) => e.text)).to.deep.equal(['a', 'b', 'c']);
        expect(await direct.getEventVersion(forkId)).to.equal(3);
      } finally {
        await through.close();
      }
    });
  });

  describe('SIGKILL mid-compaction', function () {
    const crashPrefix = freshServicePrefix();
    after(async function () {
      if (admin !== undefined) await deleteRedisKeys(admin, crashPrefix);
    });

    it('20 kills of a process appending and compacting: every acknowledged append survives once, no compaction is half-applied', async function () {
      this.timeout(180_000);
      const summary = await runCrashes(
        {
          backend: 'redis',
          target: REDIS_URL,
          prefix: crashPrefix,
          open: async () => new RedisSessionRepository({ client: admin, prefix: crashPrefix, logger: silent }),
        },
        'crash',
      );
      console.log(`      ${describeCrashSummary('Redis', summary)}`);
    });

    it('10 kills inside a fork: every fork in the store is a whole copy, none empty or partial', async function () {
      this.timeout(180_000);
      const open = async () => new RedisSessionRepository({ client: admin, prefix: crashPrefix, logger: silent });
      await seedForkSource(await open(), 'fork-source');
      const summary = await runForkCrashes({ backend: 'redis', target: REDIS_URL, prefix: crashPrefix, open }, 'fork-source');
      console.log(`      ${describeForkCrashSummary('Redis', summary)}`);
    });
  });
});
