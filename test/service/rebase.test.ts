import { expect } from 'chai';
import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  createDefaultLogger,
  type ChatClient,
  type CompactionRequest,
  type CompactionStrategy,
  type Message,
} from 'session-compaction';
import { CharEstimator } from '../support/fixtures.js';
import { addUsage } from '../../src/tokens/UsageRecord.js';

const logger = createDefaultLogger({ silent: true });
const est = new CharEstimator();

/** The extractive summariser behind a fixed latency, like a model call. */
function slowSummarizer(ms: number): ChatClient {
  const inner = new ExtractiveSummarizer({ tokenCountEstimator: est });
  return { model: 'slow-extractive', call: async (r) => (await sleep(ms), inner.call(r)) };
}

async function appendConversation(service: DefaultSessionService, id: string, turns: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < turns; i++) {
    ids.push((await service.appendMessage(id, Messages.user(`question ${i}`))).id);
    ids.push((await service.appendMessage(id, Messages.assistant(`answer ${i}`))).id);
  }
  return ids;
}

/** Runs compactions back to back while a writer appends every `everyMs` for `forMs`. */
async function underSteadyAppends(service: DefaultSessionService, strategy: CompactionStrategy, forMs: number, everyMs: number) {
  const { id } = await service.create({ userId: 'u' });
  const appended = await appendConversation(service, id, 10);
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++) {
      appended.push((await service.appendMessage(id, Messages.user(`live ${i}`))).id);
      await sleep(everyMs);
    }
  })();
  let committed = 0;
  let rebased = 0;
  service.events.on('compactionCompleted', (e) => {
    committed++;
    if (e.rebased) rebased++;
  });
  const deadline = Date.now() + forMs;
  while (Date.now() < deadline) await service.compact(id, () => true, strategy);
  writing = false;
  await writer;
  return { id, appended, committed, rebased };
}

describe('conflict rebase', function () {
  this.timeout(20_000);

  it('acceptance: a 200 ms summariser under appends every 20 ms for 5 s commits, and no appended event is lost', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, conflictPolicy: 'rebase' });
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: slowSummarizer(200),
      maxEventsToKeep: 6,
      overlapSize: 1,
    });
    const { id, appended, committed, rebased } = await underSteadyAppends(service, strategy, 5000, 20);
    expect(committed).to.be.at.least(1);
    expect(rebased).to.be.at.least(1);
    const log = await service.getEvents(id, EventFilter.all());
    const ids = log.map((e) => e.id);
    for (const a of appended)
      expect(
        ids.filter((x) => x === a),
        a,
      ).to.have.length(1);
    const report = await service.verifyCoverage(id);
    expect(report.duplicated).to.deep.equal([]);
  });

  it('control: the Java-style skip never commits under the same appends', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, conflictPolicy: 'skip' });
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: slowSummarizer(200),
      maxEventsToKeep: 6,
      overlapSize: 1,
    });
    const { committed } = await underSteadyAppends(service, strategy, 1000, 20);
    expect(committed).to.equal(0);
  });

  it('a session written to all the time still compacts, the summariser called once per commit', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, conflictPolicy: 'rebase' });
    let calls = 0;
    const summarizer = slowSummarizer(50);
    const counting: ChatClient = { model: summarizer.model, call: (r) => (calls++, summarizer.call(r)) };
    const strategy = new RecursiveSummarizationCompactionStrategy({ chatClient: counting, maxEventsToKeep: 6, overlapSize: 1 });
    const { committed } = await underSteadyAppends(service, strategy, 600, 10);
    expect(committed).to.be.greaterThan(0);
    expect(calls).to.be.at.most(committed + 1);
  });

  it('a conflict with another compaction (not only appends) stays a no-op', async function () {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger, conflictPolicy: 'rebase' });
    const other = new DefaultSessionService(repo, { logger });
    const { id } = await service.create({ userId: 'u' });
    await appendConversation(service, id, 6);
    const sliding = new SlidingWindowCompactionStrategy({ maxEvents: 4, tokenCountEstimator: est });
    const skipped: string[] = [];
    service.events.on('compactionSkipped', (e) => skipped.push(e.reason));
    const racing = async (r: CompactionRequest) => {
      // Another process compacts first, while this strategy "thinks".
      await other.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 8, tokenCountEstimator: est }));
      return sliding.compact(r);
    };
    const afterOther = async () => (await service.getEvents(id, EventFilter.all())).map((e) => [e.id, e.archived]);
    const r = await service.compact(id, () => true, racing);
    expect(r.isNoop()).to.equal(true);
    expect(skipped).to.deep.equal(['cas-conflict']);
    const active = await service.getEvents(id, EventFilter.active());
    expect(active).to.have.length(8);
    expect(await afterOther()).to.have.length(12);
  });

  it('property: rebasing over any appends never loses nor duplicates an event', async function () {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom<'sliding' | 'masking'>('sliding', 'masking'),
        async (turns, keep, concurrent, kind) => {
          const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, conflictPolicy: 'rebase' });
          const { id } = await service.create({ userId: 'u' });
          const before = await appendConversation(service, id, turns);
          for (let i = 0; i < turns; i++) {
            await service.appendMessage(id, Messages.assistant(null, { toolCalls: [Messages.toolCall(`c${i}`, 'bash', '{}')] }));
            await service.appendMessage(id, Messages.tool([Messages.toolResponse(`c${i}`, 'bash', 'o'.repeat(500))]));
            await service.appendMessage(id, Messages.assistant(`read ${i}`));
          }
          const inner: CompactionStrategy =
            kind === 'sliding'
              ? new SlidingWindowCompactionStrategy({ maxEvents: keep, tokenCountEstimator: est })
              : new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est });
          const appendedDuring: string[] = [];
          const strategy = async (r: CompactionRequest) => {
            const result = await inner.compact(r);
            for (let i = 0; i < concurrent; i++) {
              const m: Message = i % 2 === 0 ? Messages.user(`late ${i}`) : Messages.assistant(`late ${i}`);
              appendedDuring.push((await service.appendMessage(id, m)).id);
            }
            return result;
          };
          const result = await service.compact(id, () => true, strategy);
          const log = await service.getEvents(id, EventFilter.all());
          const counts = new Map<string, number>();
          for (const e of log) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
          for (const e of [...before, ...appendedDuring]) expect(counts.get(e), e).to.equal(1);
          expect([...counts.values()].every((n) => n === 1)).to.equal(true);
          const active = (await service.getEvents(id, EventFilter.active())).map((e) => e.id);
          expect(active.slice(active.length - appendedDuring.length)).to.deep.equal(appendedDuring);
          if (!result.isNoop()) expect(active).to.deep.equal([...result.compactedEvents.map((e) => e.id)]);
          expect((await service.verifyCoverage(id)).duplicated).to.deep.equal([]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('DefaultSessionService: the summariser is paid even when the compaction is lost', () => {
  it('a compaction that loses its CAS race returns a no-op that still carries the strategy usage', async () => {
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger, conflictPolicy: 'skip' });
    const { id } = await service.create({ userId: 'u' });
    await appendConversation(service, id, 3);
    const strategy: CompactionStrategy = {
      compact: async (request: CompactionRequest) => {
        // A writer appends while the summariser works: the version moves on.
        await service.appendMessage(id, Messages.user('meanwhile'));
        const usage = { ...addUsage(), summarizerCalls: 1, summarizerInputTokens: 500, summarizerOutputTokens: 40 };
        return new SlidingWindowCompactionStrategy({ maxEvents: 2 }).compact(request).then((r) => r.withUsage(usage));
      },
    };
    const result = await service.compact(id, () => true, strategy);
    expect(result.isNoop()).to.equal(true);
    expect(result.usage).to.include({ summarizerCalls: 1, summarizerInputTokens: 500, summarizerOutputTokens: 40 });
  });
});
