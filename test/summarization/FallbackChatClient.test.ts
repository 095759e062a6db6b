import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  FallbackChatClient,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SummarizationError,
} from 'session-compaction';
import { DEFAULT_SUMMARY_UPDATE_PROMPT } from 'session-compaction/spi';
import { expectRejects } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from './support.js';

async function session(service: DefaultSessionService, turns: number, from = 0) {
  const { id } = await service.create({ userId: 'u' });
  await more(service, id, turns, from);
  return id;
}
async function more(service: DefaultSessionService, id: string, turns: number, from: number) {
  for (let i = from; i < from + turns; i++) {
    await service.appendMessage(id, Messages.user(`q${i}`));
    await service.appendMessage(id, Messages.assistant(`a${i}`));
  }
}

describe('FallbackChatClient', function () {
  it('asks the next client when one rejects or answers blank, and reports the model that answered', async function () {
    const down = new ScriptedChatClient([new Error('503')], { model: 'primary' });
    const blank = new ScriptedChatClient(['  '], { model: 'secondary' });
    const local = new ScriptedChatClient(['the summary'], { model: 'local' });
    const chain = new FallbackChatClient({ clients: [down, blank, local], logger: silentLogger });
    expect(chain.model).to.equal('primary');
    expect(await chain.call({ system: 's', user: 'u' })).to.equal('the summary');
    expect([down.callCount, blank.callCount, local.callCount]).to.deep.equal([1, 1, 1]);
    expect(chain.model).to.equal('local');
  });

  it('fails with every reason when all clients fail; the strategy then applies its failure mode (stub)', async function () {
    const chain = new FallbackChatClient({
      clients: [new ScriptedChatClient([new Error('503')], { model: 'a' }), new ScriptedChatClient([null], { model: 'b' })],
      logger: silentLogger,
    });
    await expectRejects(chain.call({ user: 'u' }), SummarizationError, 'every summariser failed (a: 503; b: no text)');
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    const id = await session(service, 6);
    const result = await service.compact(
      id,
      () => true,
      new RecursiveSummarizationCompactionStrategy({
        chatClient: chain,
        maxEventsToKeep: 2,
        overlapSize: 0,
        failureMode: 'stub',
        logger: silentLogger,
      }),
    );
    expect(result.eventsRemoved).to.be.greaterThan(0);
    const summary = (await service.getEvents(id, EventFilter.active()))[1]!;
    expect(summary.metadata.summaryMethod).to.equal('stub');
  });

  it('rejects an empty chain', function () {
    expect(() => new FallbackChatClient({ clients: [] })).to.throw('clients must not be empty');
  });
});

describe('RecursiveSummarizationCompactionStrategy updatePrompt', function () {
  it('the first summary uses the system prompt, extending a prior summary uses the update prompt', async function () {
    const client = new ScriptedChatClient(['first summary', 'updated summary']);
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: client,
      maxEventsToKeep: 2,
      overlapSize: 0,
      logger: silentLogger,
    });
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
    const id = await session(service, 4);
    await service.compact(id, () => true, strategy);
    await more(service, id, 3, 10);
    await service.compact(id, () => true, strategy);
    expect(client.requests[0]!.system).to.include(RecursiveSummarizationCompactionStrategy.DEFAULT_SYSTEM_PROMPT);
    expect(client.requests[0]!.system).not.to.include(DEFAULT_SUMMARY_UPDATE_PROMPT);
    expect(client.requests[1]!.system).to.include(DEFAULT_SUMMARY_UPDATE_PROMPT);
    expect(client.requests[1]!.user).to.include('first summary');
  });

  it('a custom systemPrompt without an updatePrompt serves both', function () {
    const strategy = new RecursiveSummarizationCompactionStrategy({ chatClient: new ScriptedChatClient(), systemPrompt: 'mine' });
    expect(strategy.updatePrompt).to.equal('mine');
  });
});
