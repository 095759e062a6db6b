import { expect } from 'chai';
import { Container } from 'inversify';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SessionMemory,
  SlidingWindowCompactionStrategy,
  TYPES,
  createSessionCompactionModule,
  type CompactionHooks,
  type Logger,
} from 'session-compaction';
import type { AfterCompactionContext } from 'session-compaction/spi';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) } as never;
}

async function sessionOf(service: DefaultSessionService, turns = 6) {
  const { id } = await service.create({ userId: 'u' });
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(id, Messages.user(`q${i}`));
    await service.appendMessage(id, Messages.assistant(`a${i}`));
  }
  return id;
}

const summarizer = (client: ScriptedChatClient) =>
  new RecursiveSummarizationCompactionStrategy({ chatClient: client, maxEventsToKeep: 2, overlapSize: 0, logger: silentLogger });

describe('compaction hooks', function () {
  it('a vetoing beforeCompaction leaves the log and the version unchanged, and the strategy never runs', async function () {
    const seen: string[] = [];
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      hooks: { beforeCompaction: async () => ({ veto: true, reason: 'user is typing' }) },
    });
    service.events.on('compactionSkipped', (e) => void seen.push(e.reason));
    const id = await sessionOf(service);
    const version = await service.getEventVersion(id);
    const before = await service.getEvents(id);
    const client = new ScriptedChatClient();
    const result = await service.compact(id, () => true, summarizer(client));
    expect(result.isNoop()).to.equal(true);
    expect(client.callCount).to.equal(0);
    expect(seen).to.deep.equal(['vetoed']);
    expect(await service.getEventVersion(id)).to.equal(version);
    expect(await service.getEvents(id)).to.deep.equal(before);
  });

  it("beforeCompaction's instructions reach the summariser's system prompt for this compaction only", async function () {
    let instruct = true;
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      hooks: { beforeCompaction: () => (instruct ? { instructions: 'Keep the open TODOs.' } : undefined) },
    });
    const id = await sessionOf(service);
    const client = new ScriptedChatClient(['summary']);
    await service.compact(id, () => true, summarizer(client));
    expect(client.requests[0]!.system).to.include('Additional instructions for this summary:\n- Keep the open TODOs.');
    instruct = false;
    for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
    await service.compact(id, () => true, summarizer(client));
    expect(client.requests[1]!.system).not.to.include('Keep the open TODOs.');
  });

  it('afterCompaction is awaited and sees the archived events and the summary', async function () {
    const calls: AfterCompactionContext[] = [];
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      hooks: {
        afterCompaction: async (context) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          calls.push(context);
        },
      },
    });
    const id = await sessionOf(service);
    const result = await service.compact(id, () => true, summarizer(new ScriptedChatClient(['the summary'])));
    expect(calls).to.have.length(1);
    expect(calls[0]!.archivedEvents.map((e) => e.id)).to.deep.equal(result.archivedEvents.map((e) => e.id));
    expect(calls[0]!.summaryEvents.map((e) => e.text)).to.deep.equal([
      RecursiveSummarizationCompactionStrategy.DEFAULT_SUMMARY_SHADOW_PROMPT,
      'the summary',
    ]);
  });

  it('hook errors are isolated and logged: a throwing beforeCompaction does not veto, a throwing afterCompaction does not fail compact', async function () {
    const logger = recordingLogger();
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger,
      tokenCountEstimator: est,
      hooks: [
        {
          beforeCompaction: () => {
            throw new Error('before broke');
          },
          afterCompaction: () => Promise.reject(new Error('after broke')),
        },
      ],
    });
    const id = await sessionOf(service);
    const result = await service.compact(
      id,
      () => true,
      new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est }),
    );
    expect(result.eventsRemoved).to.be.greaterThan(0);
    expect(await service.getEvents(id, EventFilter.active())).to.have.length(2);
    expect(logger.warnings).to.deep.equal(['beforeCompaction threw; ignored', 'afterCompaction threw; ignored']);
  });

  it('addCompactionHooks returns a remover; an invalid hook is rejected', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    let vetoes = 0;
    const remove = service.addCompactionHooks({ beforeCompaction: () => (vetoes++, { veto: true }) });
    const id = await sessionOf(service);
    const strategy = new SlidingWindowCompactionStrategy({ maxEvents: 2 });
    expect((await service.compact(id, () => true, strategy)).isNoop()).to.equal(true);
    remove();
    expect((await service.compact(id, () => true, strategy)).isNoop()).to.equal(false);
    expect(vetoes).to.equal(1);
    expect(() => service.addCompactionHooks({ afterCompaction: 'x' } as never)).to.throw('afterCompaction must be a function');
  });

  it('the DI module passes hooks to the service it binds', async function () {
    const after: string[] = [];
    const container = new Container();
    await container.load(
      createSessionCompactionModule({
        repository: 'memory',
        logger: silentLogger,
        hooks: { afterCompaction: (c) => void after.push(c.sessionId) },
      }),
    );
    const service = container.get<DefaultSessionService>(TYPES.SessionService);
    const id = await sessionOf(service);
    await service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    expect(after).to.deep.equal([id]);
  });

  it('SessionMemory registers its compactionHooks on the service', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    const hooks: CompactionHooks = { beforeCompaction: () => ({ veto: true }) };
    new SessionMemory({ sessionService: service, client: {} as never, model: 'm', compactionHooks: hooks });
    const id = await sessionOf(service);
    expect((await service.compact(id, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }))).isNoop()).to.equal(
      true,
    );
  });
});
