import { expect } from 'chai';
import fc from 'fast-check';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionPipeline,
  CompactionResult,
  ContentPolicyCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TurnWindowCompactionStrategy,
  formatEvent,
  type CompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import { eventSpecsArb, toEvents } from '../support/arbitraries.js';
import { allBackends } from '../support/backends.js';
import { CharEstimator, expectRejects } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);

async function chat(service: DefaultSessionService, turns: number) {
  const { id } = await service.create({ userId: 'u' });
  const rules = await service.appendMessage(id, Messages.user('Always answer in French.'), { pinned: true });
  await service.appendMessage(id, Messages.assistant("D'accord."));
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`réponse ${i}`));
  }
  return { id, rules };
}

const newService = (options = {}) =>
  new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger, tokenCountEstimator: est, ...options });

describe('pinned events', function () {
  it('a message pinned at append survives the Java sliding-window cut, the turn window and a rolling summary', async function () {
    const strategies: CompactionStrategy[] = [
      new SlidingWindowCompactionStrategy({ maxEvents: 2, cutWithinTurn: 'never', tokenCountEstimator: est }),
      new TurnWindowCompactionStrategy({ maxTurns: 1, tokenCountEstimator: est }),
      new RecursiveSummarizationCompactionStrategy({
        chatClient: new ScriptedChatClient(['summary']),
        maxEventsToKeep: 2,
        overlapSize: 0,
        tokenCountEstimator: est,
        logger: silentLogger,
      }),
    ];
    for (const strategy of strategies) {
      const service = newService();
      const { id, rules } = await chat(service, 5);
      const result = await service.compact(id, () => true, strategy);
      expect(result.eventsRemoved, strategy.constructor.name).to.be.greaterThan(0);
      const active = await service.getEvents(id, EventFilter.active());
      expect(ids(active), strategy.constructor.name).to.include(rules.id);
      expect(ids(result.archivedEvents)).not.to.include(rules.id);
    }
  });

  it('a summary never stands in for a pinned event: it is not in the summary prompt', async function () {
    const service = newService();
    const { id } = await chat(service, 5);
    const client = new ScriptedChatClient(['summary']);
    await service.compact(
      id,
      () => true,
      new RecursiveSummarizationCompactionStrategy({
        chatClient: client,
        maxEventsToKeep: 2,
        overlapSize: 0,
        logger: silentLogger,
      }),
    );
    expect(client.requests[0]!.user).not.to.include('Always answer in French.');
    expect(client.requests[0]!.user).to.include('question 0');
  });

  it('the token budget counts a pinned event: the window after compaction fits maxTokens with it', async function () {
    const service = newService();
    const { id, rules } = await chat(service, 8);
    const maxTokens = 120;
    await service.compact(id, () => true, new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: est }));
    const active = await service.getEvents(id, EventFilter.active());
    expect(ids(active)).to.include(rules.id);
    expect(active.reduce((n, e) => n + formatEvent(e).length, 0)).to.be.at.most(maxTokens);
  });

  it('masking and content policies leave a pinned tool result verbatim', async function () {
    const service = newService();
    const { id } = await service.create({ userId: 'u' });
    await service.appendMessage(id, Messages.user('read it'));
    await service.appendMessage(id, Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'cat', '{}')] }));
    const output = await service.appendMessage(id, Messages.tool([Messages.toolResponse('c1', 'cat', 'x'.repeat(2000))]), {
      pinned: true,
    });
    await service.appendMessage(id, Messages.assistant('read'));
    await service.appendMessage(id, Messages.user('next'));
    for (const strategy of [
      new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }),
      new ContentPolicyCompactionStrategy({ tokenCountEstimator: est }),
    ]) {
      await service.compact(id, () => true, strategy);
      const active = await service.getEvents(id, EventFilter.active());
      expect(active.find((e) => e.id === output.id)?.message, strategy.constructor.name).to.deep.equal(output.message);
    }
  });

  it('pinEvent pins later with one CAS write; unpinEvent lets the next compaction archive it', async function () {
    const service = newService();
    const { id } = await service.create({ userId: 'u' });
    const task = await service.appendMessage(id, Messages.user('the task'));
    for (let i = 0; i < 4; i++) await service.appendMessage(id, Messages.user(`later ${i}`));
    const version = await service.getEventVersion(id);
    const pinned = await service.pinEvent(id, task.id);
    expect(pinned.isPinned()).to.equal(true);
    expect(await service.getEventVersion(id)).to.equal(version + 1);
    const window = new SlidingWindowCompactionStrategy({ maxEvents: 1, tokenCountEstimator: est });
    await service.compact(id, () => true, window);
    expect(ids(await service.getEvents(id, EventFilter.active()))).to.include(task.id);
    await service.unpinEvent(id, task.id);
    await service.appendMessage(id, Messages.user('one more'));
    await service.compact(id, () => true, window);
    expect(ids(await service.getEvents(id, EventFilter.active()))).not.to.include(task.id);
    expect(ids(await service.getEvents(id))).to.include(task.id);
  });

  it('pinning concurrently with appends loses no append', async function () {
    const service = newService();
    const { id } = await service.create({ userId: 'u' });
    const first = await service.appendMessage(id, Messages.user('first'));
    const appends = Array.from({ length: 20 }, (_, i) => service.appendMessage(id, Messages.user(`m${i}`)));
    const [pinned] = await Promise.all([service.pinEvent(id, first.id), ...appends]);
    const all = await service.getEvents(id);
    expect(all).to.have.length(21);
    expect(all.find((e) => e.id === first.id)!.isPinned()).to.equal(true);
    expect((pinned as SessionEvent).isPinned()).to.equal(true);
  });

  it('refuses unknown, archived and synthetic events', async function () {
    const service = newService();
    const { id } = await chat(service, 3);
    await expectRejects(service.pinEvent(id, 'no-such-event'), InvalidArgumentError, 'Event not found: no-such-event');
    await service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }));
    const archived = (await service.getEvents(id)).find((e) => e.isArchived())!;
    await expectRejects(service.pinEvent(id, archived.id), IllegalStateError, 'Event is archived');
    await service.appendMessage(id, Messages.assistant('s'), { metadata: { synthetic: true }, id: 'synthetic-1' });
    await expectRejects(service.pinEvent(id, 'synthetic-1'), IllegalStateError, 'synthetic');
    await expectRejects(service.pinEvent('no-session', 'x'), InvalidArgumentError, 'Session not found: no-session');
  });

  it('pinSystemMessages pins system messages at append, unless the metadata says pinned: false', async function () {
    const service = newService({ pinSystemMessages: true });
    const { id } = await service.create({ userId: 'u' });
    const rules = await service.appendMessage(id, Messages.system('be brief'));
    const opted = await service.appendMessage(id, Messages.system('optional'), { pinned: false });
    const user = await service.appendMessage(id, Messages.user('hi'));
    expect([rules.isPinned(), opted.isPinned(), user.isPinned()]).to.deep.equal([true, false, false]);
  });

  it('a strategy that archives a pinned event is refused: log and version unchanged, skip reason pinned-event', async function () {
    const service = newService();
    const { id } = await chat(service, 2);
    const version = await service.getEventVersion(id);
    const before = await service.getEvents(id);
    const reasons: string[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    const careless = async (r: { events: readonly SessionEvent[] }) =>
      new CompactionResult(r.events.slice(1), r.events.slice(0, 1), 1);
    const result = await service.compact(id, () => true, careless);
    expect(result.isNoop()).to.equal(true);
    expect(reasons).to.deep.equal(['pinned-event']);
    expect(await service.getEventVersion(id)).to.equal(version);
    expect(await service.getEvents(id)).to.deep.equal(before);
  });

  for (const backend of allBackends()) {
    describe(`property on ${backend.name}: a pinned event survives every strategy and pipeline`, function () {
      this.timeout(180_000);
      before(async function () {
        await backend.setup(this);
      });
      after(async () => backend.teardown());

      it('random logs, random pins (at append or later), random strategies: every pinned event stays active, unchanged', async function () {
        const strategies = (): CompactionStrategy[] => [
          new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }),
          new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est, cutWithinTurn: 'never' }),
          new TokenCountCompactionStrategy({ maxTokens: 60, tokenCountEstimator: est }),
          new TurnWindowCompactionStrategy({ maxTurns: 1, tokenCountEstimator: est }),
          new ObservationMaskingCompactionStrategy({ maxChars: 80, tokenCountEstimator: est }),
          new ContentPolicyCompactionStrategy({ keepLast: { turns: 0 }, tokenCountEstimator: est }),
          new RecursiveSummarizationCompactionStrategy({
            chatClient: new ScriptedChatClient(['summary']),
            maxEventsToKeep: 2,
            overlapSize: 1,
            tokenCountEstimator: est,
            logger: silentLogger,
          }),
          new AdditiveSummarizationCompactionStrategy({
            chatClient: new ScriptedChatClient(['chunk summary']),
            keepTurns: 0,
            maxSummaryTokens: 40,
            tokenCountEstimator: est,
            logger: silentLogger,
          }),
          new CompactionPipeline({
            stages: [
              new ObservationMaskingCompactionStrategy({ maxChars: 80, tokenCountEstimator: est }),
              new RecursiveSummarizationCompactionStrategy({
                chatClient: new ScriptedChatClient(['summary']),
                maxEventsToKeep: 2,
                overlapSize: 0,
                tokenCountEstimator: est,
                logger: silentLogger,
              }),
              new TokenCountCompactionStrategy({ maxTokens: 50, tokenCountEstimator: est, cutWithinTurn: 'never' }),
            ],
            maxTokens: 50,
            tokenCountEstimator: est,
          }),
        ];
        const service = new DefaultSessionService(backend.repository(), { logger: silentLogger, tokenCountEstimator: est });
        // The service refuses a result that loses a pin; the built-in strategies must never need that guard.
        let refused = 0;
        let committedWithPins = 0;
        service.events.on('compactionSkipped', (e) => void (e.reason === 'pinned-event' && refused++));
        await fc.assert(
          fc.asyncProperty(
            eventSpecsArb(24),
            fc.array(fc.nat(60), { maxLength: 5 }),
            fc.array(fc.nat(60), { maxLength: 3 }),
            fc.array(fc.nat(8), { minLength: 1, maxLength: 3 }),
            async (specs, pinAtAppend, pinLater, strategyPicks) => {
              const { id } = await service.create({ userId: 'prop' });
              const events = toEvents(specs, id, `${id}-e`);
              const pinNow = new Set(pinAtAppend.map((i) => events[i % Math.max(1, events.length)]?.id));
              for (const e of events) {
                const pin = pinNow.has(e.id) && !e.isSynthetic();
                await service.appendEvent(pin ? e.with({ metadata: { ...e.metadata, pinned: true } }) : e);
              }
              const real = events.filter((e) => !e.isSynthetic());
              for (const i of pinLater) if (real.length > 0) await service.pinEvent(id, real[i % real.length]!.id);
              const pinned = (await service.getEvents(id, EventFilter.active())).filter((e) => e.isPinned());
              for (const pick of strategyPicks) {
                const result = await service.compact(id, () => true, strategies()[pick % 9]!);
                if (!result.isNoop() && pinned.length > 0) committedWithPins++;
                const active = new Map((await service.getEvents(id, EventFilter.active())).map((e) => [e.id, e]));
                for (const p of pinned) {
                  expect(active.has(p.id), `pinned ${p.id} is active`).to.equal(true);
                  expect(active.get(p.id)!.message).to.deep.equal(p.message);
                }
              }
            },
          ),
          { numRuns: backend.name === 'memory' ? 100 : 25, seed: 20240601 },
        );
        expect(refused, 'compactions refused by the pin guard').to.equal(0);
        expect(committedWithPins, 'compactions committed around pinned events').to.be.greaterThan(10);
      });
    });
  }
});
