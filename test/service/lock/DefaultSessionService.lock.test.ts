import { expect } from 'chai';
import sinon from 'sinon';
import { Container } from 'inversify';
import {
  SessionMemory,
  TYPES,
  createSessionCompactionModule,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InProcessCompactionLock,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  type CompactionLock,
} from 'session-compaction';
import type { CompactionLease } from 'session-compaction/spi';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

async function sessionOf(service: DefaultSessionService, turns = 6): Promise<string> {
  const { id } = await service.create({ userId: 'u' });
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(id, Messages.user(`q${i}`));
    await service.appendMessage(id, Messages.assistant(`a${i}`));
  }
  return id;
}

const summarizer = (client: ScriptedChatClient) =>
  new RecursiveSummarizationCompactionStrategy({ chatClient: client, maxEventsToKeep: 2, overlapSize: 0, logger: silentLogger });

/** Two instances of the service on one store and one lock, as two processes would run them. */
function twoInstances(lock: CompactionLock, options: { leaseMs?: number; waitMs?: number } = {}) {
  const repository = new InMemorySessionRepository();
  const make = () => new DefaultSessionService(repository, { logger: silentLogger, compactionLock: { lock, ...options } });
  return [make(), make()] as const;
}

describe('DefaultSessionService with a compaction lock', function () {
  it('skips with a no-op result that says the lease is held, without calling the summariser or writing', async () => {
    const lock = new InProcessCompactionLock();
    const [service] = twoInstances(lock);
    const id = await sessionOf(service);
    const skipped: string[] = [];
    service.events.on('compactionSkipped', (e) => void skipped.push(e.reason));
    const lease = (await lock.acquire(id, { leaseMs: 10_000 }))!;
    const version = await service.getEventVersion(id);
    const client = new ScriptedChatClient();
    const result = await service.compact(id, () => true, summarizer(client));
    expect(result.isNoop()).to.equal(true);
    expect(result.skipReason).to.equal('lock-held');
    expect(result.compactedEvents.map((e) => e.id)).to.deep.equal((await service.getEvents(id)).map((e) => e.id));
    expect(skipped).to.deep.equal(['lock-held']);
    expect(client.callCount).to.equal(0);
    expect(await service.getEventVersion(id)).to.equal(version);
    await lock.release(lease);
  });

  it('summarises once when two instances compact the same session at the same time', async () => {
    const [one, two] = twoInstances(new InProcessCompactionLock());
    const id = await sessionOf(one);
    const client = new ScriptedChatClient(['summary'], { delayMs: 30 });
    const results = await Promise.all([
      one.compact(id, () => true, summarizer(client)),
      two.compact(id, () => true, summarizer(client)),
    ]);
    expect(client.callCount).to.equal(1);
    expect(results.map((r) => r.skipReason ?? 'committed').sort()).to.deep.equal(['committed', 'lock-held']);
  });

  it('with waitMs, waits for the holder and then compacts what the holder left', async () => {
    const [one, two] = twoInstances(new InProcessCompactionLock(), { waitMs: 5000 });
    const id = await sessionOf(one, 8);
    const client = new ScriptedChatClient(['summary'], { delayMs: 30 });
    const first = one.compact(id, () => true, summarizer(client));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await two.compact(id, (r) => r.events.length > 3, summarizer(client));
    expect((await first).isNoop()).to.equal(false);
    // The second instance read the window again under the lease: the first one's compaction left nothing to do.
    expect(second.isNoop()).to.equal(true);
    expect(second.skipReason).to.equal(undefined);
    expect(client.callCount).to.equal(1);
  });

  it('never touches the lock when the trigger does not fire', async () => {
    const lock = new InProcessCompactionLock();
    const acquire = sinon.spy(lock, 'acquire');
    const [service] = twoInstances(lock);
    const id = await sessionOf(service);
    const result = await service.compact(id, () => false, summarizer(new ScriptedChatClient()));
    expect(result.isNoop()).to.equal(true);
    expect(acquire.callCount).to.equal(0);
  });

  it('releases the lease after a compaction, and after a strategy that throws', async () => {
    const lock = new InProcessCompactionLock();
    const release = sinon.spy(lock, 'release');
    const [service] = twoInstances(lock);
    const id = await sessionOf(service);
    await service.compact(id, () => true, summarizer(new ScriptedChatClient()));
    const failure = await service
      .compact(
        id,
        () => true,
        async () => {
          throw new Error('strategy broke');
        },
      )
      .then(
        () => null,
        (e: unknown) => e as Error,
      );
    expect(failure?.message).to.equal('strategy broke');
    expect(release.callCount).to.equal(2);
    expect(await lock.acquire(id, { leaseMs: 1000 })).to.not.equal(null);
  });

  it('does not commit when the lease was lost during the summary (lock-lost), and keeps the log unchanged', async () => {
    const inner = new InProcessCompactionLock();
    // A store that lost the lease: every renewal says so.
    const lossy: CompactionLock = {
      acquire: (s, o) => inner.acquire(s, o),
      renew: async () => null,
      release: (l: CompactionLease) => inner.release(l),
    };
    const [service] = twoInstances(lossy, { leaseMs: 60 });
    const id = await sessionOf(service);
    const version = await service.getEventVersion(id);
    const before = await service.getEvents(id, EventFilter.all());
    const client = new ScriptedChatClient(['summary'], { delayMs: 80 });
    const result = await service.compact(id, () => true, summarizer(client));
    expect(client.callCount).to.equal(1);
    expect(result.skipReason).to.equal('lock-lost');
    expect(await service.getEventVersion(id)).to.equal(version);
    expect(await service.getEvents(id, EventFilter.all())).to.deep.equal(before);
  });

  it('keeps renewing the lease while a summary outlasts it', async () => {
    const lock = new InProcessCompactionLock();
    const renew = sinon.spy(lock, 'renew');
    const [one, two] = twoInstances(lock, { leaseMs: 60 });
    const id = await sessionOf(one);
    const slow = one.compact(id, () => true, summarizer(new ScriptedChatClient(['summary'], { delayMs: 200 })));
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Past two lease durations, the holder still holds: the other instance is refused.
    const meanwhile = await two.compact(id, () => true, summarizer(new ScriptedChatClient()));
    expect(meanwhile.skipReason).to.equal('lock-held');
    expect((await slow).isNoop()).to.equal(false);
    expect(renew.callCount).to.be.at.least(2);
  });

  it('accepts the lock later through setCompactionLock (for wrappers given a ready service)', async () => {
    const lock = new InProcessCompactionLock();
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    service.setCompactionLock({ lock, waitMs: 0 });
    const id = await sessionOf(service);
    const lease = (await lock.acquire(id, { leaseMs: 10_000 }))!;
    expect((await service.compact(id, () => true, summarizer(new ScriptedChatClient()))).skipReason).to.equal('lock-held');
    await lock.release(lease);
    service.setCompactionLock(null);
    await lock.acquire(id, { leaseMs: 10_000 });
    expect((await service.compact(id, () => true, summarizer(new ScriptedChatClient()))).isNoop()).to.equal(false);
  });

  it('refuses a compactionLock that is not a lock, and invalid lease settings', () => {
    const repository = new InMemorySessionRepository();
    expect(() => new DefaultSessionService(repository, { compactionLock: {} as never })).to.throw(
      InvalidArgumentError,
      'compactionLock must be a CompactionLock',
    );
    expect(
      () => new DefaultSessionService(repository, { compactionLock: { lock: new InProcessCompactionLock(), leaseMs: 1 } }),
    ).to.throw(InvalidArgumentError, 'leaseMs must be an integer');
    expect(
      () => new DefaultSessionService(repository, { compactionLock: { lock: new InProcessCompactionLock(), waitMs: -5 } }),
    ).to.throw(InvalidArgumentError, 'waitMs must be an integer');
  });

  it('the DI module passes compactionLock to the bound service', async () => {
    const lock = new InProcessCompactionLock();
    const container = new Container();
    await container.load(createSessionCompactionModule({ repository: 'memory', logger: silentLogger, compactionLock: lock }));
    const service = container.get<DefaultSessionService>(TYPES.SessionService);
    const id = await sessionOf(service);
    const lease = (await lock.acquire(id, { leaseMs: 10_000 }))!;
    expect((await service.compact(id, () => true, summarizer(new ScriptedChatClient()))).skipReason).to.equal('lock-held');
    await lock.release(lease);
  });

  it('SessionMemory sets its compactionLock on the service', async () => {
    const lock = new InProcessCompactionLock();
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    new SessionMemory({ sessionService: service, client: {} as never, model: 'm', compactionLock: lock });
    const id = await sessionOf(service);
    const lease = (await lock.acquire(id, { leaseMs: 10_000 }))!;
    expect((await service.compact(id, () => true, summarizer(new ScriptedChatClient()))).skipReason).to.equal('lock-held');
    await lock.release(lease);
  });
});
