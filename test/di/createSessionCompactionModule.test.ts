import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Container } from 'inversify';
import winston from 'winston';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  IllegalStateError,
  InvalidArgumentError,
  Session,
  SqliteSessionRepository,
  Messages,
  TYPES,
  closeSessionCompaction,
  createSessionCompactionModule,
  defaultTokenCountEstimator,
  type Logger,
  type SessionRepository,
  type SessionService,
  type TokenCountEstimator,
} from 'session-compaction';
import { CharacterTokenCountEstimator, type RepositoryKind } from 'session-compaction/spi';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expectRejects, expectThrows } from '../support/fixtures.js';
import { probeRedis } from '../support/redis.js';
import { REDIS_URL, requireService } from '../support/services.js';

/**
 * `await container.load(...)` and unbind-then-bind are the calls inversify 7 (async load/unbind) and 8 (sync)
 * share, so this suite runs unchanged against both majors (see test/support/inversify7.mjs).
 */
async function containerWith(options: Parameters<typeof createSessionCompactionModule>[0]): Promise<Container> {
  const container = new Container();
  await container.load(createSessionCompactionModule(options));
  return container;
}

describe('createSessionCompactionModule (inversify)', function () {
  it("repository 'memory': SessionService resolves to a DefaultSessionService over the bound repository", async function () {
    const container = await containerWith({ repository: 'memory' });
    const service = container.get<SessionService>(TYPES.SessionService);
    const repo = container.get<SessionRepository>(TYPES.SessionRepository);
    expect(service).to.be.instanceOf(DefaultSessionService);
    expect(repo).to.be.instanceOf(InMemorySessionRepository);
    const s = await service.create({ userId: 'u' });
    await service.appendMessage(s.id, Messages.user('hi'));
    expect((await repo.findById(s.id))?.userId).to.equal('u');
    expect(await repo.getEventVersion(s.id)).to.equal(1);
  });

  it('bindings are singletons: the same service and repository on every get', async function () {
    const container = await containerWith({ repository: 'memory' });
    expect(container.get(TYPES.SessionService)).to.equal(container.get(TYPES.SessionService));
    expect(container.get(TYPES.SessionRepository)).to.equal(container.get(TYPES.SessionRepository));
  });

  it('the default repository is SQLite, on the configured file', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'sc-di-'));
    const path = join(dir, 'default.db');
    const repo = (await containerWith({ sqlite: { path } })).get<SessionRepository>(TYPES.SessionRepository);
    try {
      expect(repo).to.be.instanceOf(SqliteSessionRepository);
      await repo.save(Session.create({ id: 'persisted', userId: 'u' }));
      expect(existsSync(path)).to.equal(true);
    } finally {
      await repo.close?.();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rebinding TYPES.SessionRepository to a user instance is honoured by the service', async function () {
    const container = await containerWith({ repository: 'memory' });
    const mine = new InMemorySessionRepository();
    await container.unbind(TYPES.SessionRepository);
    container.bind<SessionRepository>(TYPES.SessionRepository).toConstantValue(mine);
    const service = container.get<SessionService>(TYPES.SessionService);
    const s = await service.create({ userId: 'rebound' });
    expect((await mine.findById(s.id))?.userId).to.equal('rebound');
  });

  it('a repository instance passed in the options is the one bound and used', async function () {
    const mine = new InMemorySessionRepository();
    const container = await containerWith({ repository: mine });
    expect(container.get(TYPES.SessionRepository)).to.equal(mine);
    const s = await container.get<SessionService>(TYPES.SessionService).create({ userId: 'given' });
    expect((await mine.findById(s.id))?.userId).to.equal('given');
  });

  it("the logger binding is a winston logger at level 'warn'", async function () {
    const logger = (await containerWith({})).get<winston.Logger>(TYPES.Logger);
    expect(logger).to.be.instanceOf(winston.Logger);
    expect(logger.level).to.equal('warn');
    expect(logger.isDebugEnabled()).to.equal(false);
    expect(logger.isWarnEnabled()).to.equal(true);
  });

  it('logLevel and a custom logger are honoured', async function () {
    expect((await containerWith({ logLevel: 'debug' })).get<winston.Logger>(TYPES.Logger).level).to.equal('debug');
    const mine: Logger = { error() {}, warn() {}, info() {}, debug() {} };
    expect((await containerWith({ logger: mine })).get(TYPES.Logger)).to.equal(mine);
  });

  it('defaultTimeToLiveMs reaches the service', async function () {
    const service = (await containerWith({ repository: 'memory', defaultTimeToLiveMs: 60_000 })).get<SessionService>(
      TYPES.SessionService,
    );
    const s = await service.create({ userId: 'u' });
    expect(s.expiresAt!.getTime() - s.createdAt.getTime()).to.equal(60_000);
  });

  it('binds the token estimator: the given one, else the shared js-tiktoken default', async function () {
    const mine = new CharacterTokenCountEstimator();
    expect((await containerWith({ tokenCountEstimator: mine })).get(TYPES.TokenCountEstimator)).to.equal(mine);
    expect((await containerWith({})).get<TokenCountEstimator>(TYPES.TokenCountEstimator)).to.equal(defaultTokenCountEstimator());
  });

  it('an unknown repository name throws InvalidArgumentError', async function () {
    const container = await containerWith({ repository: 'mongodb' as RepositoryKind });
    expectThrows(() => container.get(TYPES.SessionRepository), InvalidArgumentError, 'repository must be one of');
  });
});

describe('closeSessionCompaction', function () {
  let dir: string;
  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'sc-di-close-'));
  });
  afterEach(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes the repository the module built: the store refuses work afterwards', async function () {
    const container = await containerWith({ sqlite: { path: join(dir, 'a.db') } });
    const service = container.get<SessionService>(TYPES.SessionService);
    await service.create({ userId: 'u', id: 's' });
    await closeSessionCompaction(container);
    await expectRejects(service.findById('s'), IllegalStateError, 'closed');
  });

  it('is safe to call twice, and on a container whose service was never resolved', async function () {
    const used = await containerWith({ sqlite: { path: join(dir, 'b.db') } });
    used.get<SessionService>(TYPES.SessionService);
    await closeSessionCompaction(used);
    await closeSessionCompaction(used);
    const unused = await containerWith({ sqlite: { path: join(dir, 'c.db') } });
    await closeSessionCompaction(unused);
    expect(existsSync(join(dir, 'c.db')), 'nothing was opened, so nothing was created').to.equal(false);
  });

  it('leaves a repository instance the application passed in open', async function () {
    const repository = new InMemorySessionRepository();
    const container = await containerWith({ repository });
    const service = container.get<SessionService>(TYPES.SessionService);
    await closeSessionCompaction(container);
    await service.create({ userId: 'u', id: 'still-open' });
    expect(await repository.findById('still-open')).to.not.equal(null);
  });

  it('does nothing on a container without the module', async function () {
    await closeSessionCompaction(new Container());
  });

  describe('a script using the Redis store through DI', function () {
    before(async function () {
      await requireService(this, 'Redis', probeRedis);
    });

    it('exits by itself once it has called closeSessionCompaction', async function () {
      this.timeout(30_000);
      const script = `
        import 'reflect-metadata';
        import { Container } from 'inversify';
        import { closeSessionCompaction, createSessionCompactionModule, Messages, TYPES } from 'session-compaction';
        const container = new Container();
        await container.load(createSessionCompactionModule({ repository: 'redis', redis: { url: ${JSON.stringify(REDIS_URL)}, prefix: 'di-close-' + process.pid } }));
        const service = container.get(TYPES.SessionService);
        const session = await service.create({ userId: 'u' });
        await service.appendMessage(session.id, Messages.user('hello'));
        await service.delete(session.id);
        await closeSessionCompaction(container);
        console.log('closed');`;
      const started = Date.now();
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--conditions=session-compaction-source', '--input-type=module', '-e', script],
        { timeout: 20_000 },
      );
      expect(stdout.trim()).to.equal('closed');
      expect(Date.now() - started, 'the process ended on its own, not at the timeout').to.be.below(20_000);
    });
  });
});

describe('inversify major under test', function () {
  it('is the one the run asked for (EXPECT_INVERSIFY_MAJOR), so the v7 run really loads v7', function () {
    // inversify 7 has loadSync; 8 made load synchronous and removed it.
    const major = 'loadSync' in new Container() ? '7' : '8';
    expect(major).to.equal(process.env.EXPECT_INVERSIFY_MAJOR ?? '8');
  });
});
