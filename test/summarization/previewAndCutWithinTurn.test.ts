import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import type { CutWithinTurn } from 'session-compaction/spi';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from './support.js';

async function conversation(turns: number) {
  const repo = new InMemorySessionRepository();
  const service = new DefaultSessionService(repo, { logger: silentLogger, tokenCountEstimator: new CharEstimator() });
  const s = await service.create({ userId: 'u' });
  for (let i = 1; i <= turns; i++) {
    await service.appendMessage(s.id, Messages.user(`q${i}`));
    await service.appendMessage(s.id, Messages.assistant(`a${i}`));
  }
  return { repo, service, id: s.id };
}

describe('summarising strategies: preview without a model call', function () {
  it('recursive: previewCompaction reports the range it would summarise, calls no model and writes nothing', async function () {
    const { repo, service, id } = await conversation(5);
    const client = new ScriptedChatClient();
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: client,
      maxEventsToKeep: 4,
      overlapSize: 0,
      logger: silentLogger,
    });
    const version = await repo.getEventVersion(id);
    const p = await service.previewCompaction(id, () => true, strategy);
    expect(client.callCount).to.equal(0);
    expect(p.modelCalled).to.equal(false);
    expect(p.summarizedEvents!.map((e) => e.text)).to.deep.equal(['q1', 'a1', 'q2', 'a2', 'q3', 'a3']);
    expect(p.result.compactedEvents.map((e) => e.text).slice(2)).to.deep.equal(['q4', 'a4', 'q5', 'a5']);
    expect(p.result.compactedEvents[1]!.isSynthetic()).to.equal(true);
    expect(await repo.getEventVersion(id)).to.equal(version);
  });

  it('recursive: with callModel the model runs, still without a write', async function () {
    const { repo, service, id } = await conversation(5);
    const client = new ScriptedChatClient(['the summary']);
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: client,
      maxEventsToKeep: 4,
      overlapSize: 0,
      logger: silentLogger,
    });
    const version = await repo.getEventVersion(id);
    const p = await service.previewCompaction(id, () => true, strategy, { callModel: true });
    expect(client.callCount).to.equal(1);
    expect(p.modelCalled).to.equal(true);
    expect(p.result.compactedEvents[1]!.text).to.equal('the summary');
    expect(await repo.getEventVersion(id)).to.equal(version);
  });

  it('additive: preview shows the chunk and the kept turns, with no model call', async function () {
    const { service, id } = await conversation(6);
    const client = new ScriptedChatClient();
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: client,
      keepTurns: 2,
      maxSummaryTokens: 10_000,
      logger: silentLogger,
    });
    const p = await service.previewCompaction(id, () => true, strategy);
    expect(client.callCount).to.equal(0);
    expect(p.summarizedEvents).to.have.length(8);
    expect(p.result.compactedEvents.filter((e) => !e.isSynthetic()).map((e) => e.text)).to.deep.equal(['q5', 'a5', 'q6', 'a6']);
  });
});

describe('RecursiveSummarizationCompactionStrategy cutWithinTurn', function () {
  async function agentRun() {
    const repo = new InMemorySessionRepository();
    const service = new DefaultSessionService(repo, { logger: silentLogger });
    const s = await service.create({ userId: 'u' });
    await service.appendMessage(s.id, Messages.user('fix the failing test'));
    for (let step = 1; step <= 6; step++) {
      const call = Messages.toolCall(`call-${step}`, 'bash', `{"cmd":"step ${step}"}`);
      await service.appendMessage(s.id, Messages.assistant(`thinking ${step}`, { toolCalls: [call] }));
      await service.appendMessage(s.id, Messages.tool([Messages.toolResponse(`call-${step}`, 'bash', `output ${step}`)]));
    }
    return { service, id: s.id };
  }
  const strategy = (cutWithinTurn?: CutWithinTurn) =>
    new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['summary of the early steps']),
      maxEventsToKeep: 4,
      overlapSize: 0,
      logger: silentLogger,
      ...(cutWithinTurn !== undefined ? { cutWithinTurn } : {}),
    });
  const realWindow = (events: readonly SessionEvent[]) => events.filter((e) => !e.isSynthetic());

  it("'never': one long turn is summarised whole — current work included", async function () {
    const { service, id } = await agentRun();
    await service.compact(id, () => true, strategy('never'));
    expect(realWindow(await service.getEvents(id, EventFilter.active()))).to.deep.equal([]);
  });

  it("'tool-pair-safe': keeps the last steps verbatim, every tool result with its call", async function () {
    const { service, id } = await agentRun();
    const result = await service.compact(id, () => true, strategy('tool-pair-safe'));
    expect(result.eventsRemoved).to.be.greaterThan(0);
    const kept = realWindow(await service.getEvents(id, EventFilter.active()));
    expect(kept.length).to.be.greaterThan(0);
    expect(kept[0]!.hasToolCalls()).to.equal(true);
    const callIds = new Set(
      kept.flatMap((e) => (e.message.type === 'assistant' ? (e.message.toolCalls ?? []).map((c) => c.id) : [])),
    );
    for (const e of kept)
      if (e.message.type === 'tool') for (const r of e.message.responses) expect(callIds.has(r.id)).to.equal(true);
    expect(kept[kept.length - 1]!.message.type).to.equal('tool');
    // 13 appended events, all still in the log, plus the summary pair.
    expect(await service.getEvents(id)).to.have.length(15);
  });
});
