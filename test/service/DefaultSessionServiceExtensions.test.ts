import { expect } from 'chai';
import {
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  createDefaultLogger,
  type CompactionRequest,
} from 'session-compaction';
import { verifyCoverage, type CompactionSkipReason } from 'session-compaction/spi';
import { KeyedMutex } from '../../src/service/KeyedMutex.js';
import { CharEstimator } from '../support/fixtures.js';

const silent = createDefaultLogger({ silent: true });
const sliding = (maxEvents: number) =>
  new SlidingWindowCompactionStrategy({ maxEvents, tokenCountEstimator: new CharEstimator() });

async function sessionWith(service: DefaultSessionService, n: number): Promise<string> {
  const s = await service.create({ userId: 'u' });
  for (let i = 1; i <= n; i++) await service.appendMessage(s.id, Messages.user(`msg-${i}`));
  return s.id;
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('KeyedMutex', function () {
  it('runs work for one key strictly one at a time, in arrival order', async function () {
    const mutex = new KeyedMutex();
    const order: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const job = (name: string) =>
      mutex.run('k', async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        order.push(name);
        await new Promise((r) => setTimeout(r, 5));
        running--;
      });
    await Promise.all([job('a'), job('b'), job('c')]);
    expect(maxRunning).to.equal(1);
    expect(order).to.deep.equal(['a', 'b', 'c']);
    expect(mutex.isLocked('k')).to.equal(false);
  });

  it('does not serialise different keys', async function () {
    const mutex = new KeyedMutex();
    const gate = deferred();
    const first = mutex.run('a', () => gate.promise);
    let otherRan = false;
    await mutex.run('b', async () => {
      otherRan = true;
    });
    expect(otherRan).to.equal(true);
    gate.resolve();
    await first;
  });

  it('releases the key when the work throws', async function () {
    const mutex = new KeyedMutex();
    let error: unknown;
    try {
      await mutex.run('k', async () => {
        throw new Error('boom');
      });
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).to.equal('boom');
    expect(await mutex.run('k', async () => 42)).to.equal(42);
  });
});

describe('DefaultSessionService lifecycle events', function () {
  it('emits started then completed for a committed compaction', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 5);
    const seen: string[] = [];
    service.events.on('compactionStarted', (e) => seen.push(`started:${e.sessionId === id}`));
    service.events.on('compactionCompleted', (e) => seen.push(`completed:${e.result.eventsRemoved}:${e.rebased}`));
    await service.compact(id, () => true, sliding(2));
    expect(seen).to.deep.equal(['started:true', 'completed:3:false']);
  });

  it('reports trigger-not-fired and nothing-to-archive as skip reasons', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 2);
    const reasons: CompactionSkipReason[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    await service.compact(id, () => false, sliding(1));
    await service.compact(id, () => true, sliding(10));
    expect(reasons).to.deep.equal(['trigger-not-fired', 'nothing-to-archive']);
  });

  it('passes a strategy’s own skip reason through (summarization-failed)', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 3);
    const reasons: CompactionSkipReason[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    await service.compact(
      id,
      () => true,
      async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed'),
    );
    expect(reasons).to.deep.equal(['summarization-failed']);
  });

  it('emits compactionFailed and rethrows when the strategy throws; the log is untouched', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 3);
    const failures: unknown[] = [];
    service.events.on('compactionFailed', (e) => failures.push(e.error));
    let thrown: unknown;
    try {
      await service.compact(
        id,
        () => true,
        async () => {
          throw new Error('strategy broke');
        },
      );
    } catch (e) {
      thrown = e;
    }
    expect((thrown as Error).message).to.equal('strategy broke');
    expect(failures).to.have.length(1);
    expect((await service.getEvents(id, EventFilter.active())).map((e) => e.text)).to.deep.equal(['msg-1', 'msg-2', 'msg-3']);
  });

  it('a throwing listener does not break the compaction', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 5);
    service.events.on('compactionStarted', () => {
      throw new Error('listener bug');
    });
    const result = await service.compact(id, () => true, sliding(2));
    expect(result.eventsRemoved).to.equal(3);
  });

  it("emits cas-conflict when the write loses to a concurrent append (conflictPolicy 'skip')", async function () {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger: silent, lockCompactions: false, conflictPolicy: 'skip' });
    const id = await sessionWith(service, 5);
    const reasons: CompactionSkipReason[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    const result = await service.compact(
      id,
      () => true,
      async (r: CompactionRequest) => {
        await service.appendMessage(id, Messages.user('sneaked in'));
        return sliding(2).compact(r);
      },
    );
    expect(result.eventsRemoved).to.equal(0);
    expect(reasons).to.deep.equal(['cas-conflict']);
  });
});

describe('DefaultSessionService per-session compaction lock', function () {
  it('never runs two strategies of one session at once in one process', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const id = await sessionWith(service, 30);
    let running = 0;
    let maxRunning = 0;
    const slow = async (r: CompactionRequest) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((res) => setTimeout(res, 10));
      running--;
      return sliding(5).compact(r);
    };
    const results = await Promise.all(Array.from({ length: 6 }, () => service.compact(id, () => true, slow)));
    expect(maxRunning).to.equal(1);
    // Serialised, the first compaction wins and the others find nothing more to archive: none is lost to CAS.
    expect(results.map((r) => r.eventsRemoved)).to.deep.equal([25, 0, 0, 0, 0, 0]);
    expect(await service.getEvents(id)).to.have.length(30);
  });
});

describe('DefaultSessionService conflict rebase', function () {
  it("with conflictPolicy 'rebase' a compaction that lost only to appends commits, keeping the new events", async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent, conflictPolicy: 'rebase' });
    const id = await sessionWith(service, 5);
    let calls = 0;
    const result = await service.compact(
      id,
      () => true,
      async (r: CompactionRequest) => {
        calls++;
        await service.appendMessage(id, Messages.user('sneaked in'));
        return sliding(2).compact(r);
      },
    );
    expect(calls).to.equal(1);
    expect(result.eventsRemoved).to.equal(3);
    expect((await service.getEvents(id, EventFilter.active())).map((e) => e.text)).to.deep.equal([
      'msg-4',
      'msg-5',
      'sneaked in',
    ]);
    expect(await service.getEvents(id)).to.have.length(6);
  });

  it('a conflict with another compaction stays a no-op even with rebase', async function () {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger: silent, conflictPolicy: 'rebase', lockCompactions: false });
    const id = await sessionWith(service, 6);
    const result = await service.compact(
      id,
      () => true,
      async (r: CompactionRequest) => {
        await service.compact(id, () => true, sliding(4));
        return sliding(2).compact(r);
      },
    );
    expect(result.eventsRemoved).to.equal(0);
    expect((await service.getEvents(id, EventFilter.active())).map((e) => e.text)).to.deep.equal([
      'msg-3',
      'msg-4',
      'msg-5',
      'msg-6',
    ]);
  });

  it('rejects an unknown conflict policy', function () {
    expect(() => new DefaultSessionService(new InMemorySessionRepository(), { conflictPolicy: 'retry' as 'skip' })).to.throw(
      "conflictPolicy must be 'skip' or 'rebase'",
    );
  });
});

describe('DefaultSessionService.previewCompaction', function () {
  it('reports what would happen without writing', async function () {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger: silent, tokenCountEstimator: new CharEstimator() });
    const id = await sessionWith(service, 5);
    const before = await repo.getEventVersion(id);
    const preview = await service.previewCompaction(id, () => true, sliding(2));
    expect(preview.triggered).to.equal(true);
    expect(preview.result.eventsRemoved).to.equal(3);
    expect([preview.eventsBefore, preview.eventsAfter]).to.deep.equal([5, 2]);
    expect(preview.tokensBefore).to.equal(5 * 'User: msg-1'.length);
    expect(preview.tokensAfter).to.equal(2 * 'User: msg-1'.length);
    expect(await repo.getEventVersion(id)).to.equal(before);
    expect(await service.getEvents(id, EventFilter.active())).to.have.length(5);
  });

  it('uses the strategy’s preview hook instead of compact when it has one', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silent,
      tokenCountEstimator: new CharEstimator(),
    });
    const id = await sessionWith(service, 3);
    let compactCalls = 0;
    const strategy = {
      compact: async (r: CompactionRequest) => {
        compactCalls++;
        return CompactionResult.noop(r.events);
      },
      preview: async (r: CompactionRequest) => ({
        result: CompactionResult.noop(r.events),
        summarizedEvents: r.events.slice(0, 1),
        modelCalled: false,
      }),
    };
    const preview = await service.previewCompaction(id, () => true, strategy);
    expect(compactCalls).to.equal(0);
    expect(preview.modelCalled).to.equal(false);
    expect(preview.summarizedEvents?.map((e) => e.text)).to.deep.equal(['msg-1']);
  });
});

describe('verifyCoverage', function () {
  const ev = (text: string, init: Partial<Parameters<typeof SessionEvent.create>[0]> = {}) =>
    SessionEvent.create({ sessionId: 's', id: text, message: Messages.user(text), ...init });

  it('accepts a log where every original is verbatim, summarised once or masked', function () {
    const log = [
      ev('a', { archived: true }),
      ev('b', { archived: true }),
      ev('c', { archived: true }),
      SessionEvent.create({
        sessionId: 's',
        id: 'sum',
        message: Messages.assistant('summary'),
        metadata: { synthetic: true, coveredEventIds: ['a', 'b'] },
      }),
      SessionEvent.create({ sessionId: 's', id: 'c-masked', message: Messages.user('c…'), metadata: { maskedFrom: 'c' } }),
      ev('d'),
    ];
    const report = verifyCoverage(log);
    expect(report.ok).to.equal(true);
    expect(report.originals).to.equal(4);
    expect(report.summarized).to.deep.equal(['a', 'b']);
    expect(report.masked).to.deep.equal(['c']);
    expect(report.verbatim).to.deep.equal(['d']);
  });

  it('flags archived events represented nowhere as uncovered, and double representation as duplicated', function () {
    const log = [
      ev('a', { archived: true }),
      ev('b'),
      SessionEvent.create({
        sessionId: 's',
        id: 'sum',
        message: Messages.assistant('x'),
        metadata: { synthetic: true, coveredEventIds: ['b'] },
      }),
    ];
    const report = verifyCoverage(log);
    expect(report.ok).to.equal(false);
    expect(report.uncovered).to.deep.equal(['a']);
    expect(report.duplicated).to.deep.equal(['b']);
  });

  it('ignores archived summaries: only live summaries cover', function () {
    const log = [
      ev('a', { archived: true }),
      SessionEvent.create({
        sessionId: 's',
        id: 'old',
        message: Messages.assistant('x'),
        archived: true,
        metadata: { synthetic: true, coveredEventIds: ['a'] },
      }),
    ];
    expect(verifyCoverage(log).uncovered).to.deep.equal(['a']);
  });
});

describe('DefaultSessionService.create with a caller-chosen id', function () {
  it('refuses an id that exists instead of taking the session over', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    await service.create({ id: 'shared-id', userId: 'alice' });
    await service.appendMessage('shared-id', Messages.user('alice’s secret'));
    let error: unknown;
    try {
      await service.create({ id: 'shared-id', userId: 'mallory' });
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).to.equal('IllegalStateError');
    expect((error as Error).message).to.equal('Session already exists: shared-id');
    expect((await service.findById('shared-id'))!.userId).to.equal('alice');
    expect(await service.findByUserId('mallory')).to.deep.equal([]);
  });

  it('works the same over a custom repository without saveIfAbsent (check, then save)', async function () {
    const inner = new InMemorySessionRepository();
    const repo = Object.assign(Object.create(inner) as InMemorySessionRepository, { saveIfAbsent: undefined });
    const service = new DefaultSessionService(repo, { logger: silent });
    await service.create({ id: 'x', userId: 'alice' });
    let error: unknown;
    try {
      await service.create({ id: 'x', userId: 'mallory' });
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).to.equal('Session already exists: x');
  });

  it('generated ids need no check: two creates give two sessions', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const a = await service.create({ userId: 'u' });
    const b = await service.create({ userId: 'u', id: '   ' });
    expect(a.id).to.not.equal(b.id);
  });
});
