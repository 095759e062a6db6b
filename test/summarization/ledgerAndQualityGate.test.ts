import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SummaryQualityGate,
} from 'session-compaction';
import type { CompactionSkipReason } from 'session-compaction/spi';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from './support.js';

async function serviceWithTurns(turns: number) {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
  const s = await service.create({ userId: 'u' });
  for (let i = 1; i <= turns; i++) {
    await service.appendMessage(s.id, Messages.user(`question ${i} about order ORD-${1000 + i}`));
    await service.appendMessage(s.id, Messages.assistant(`answer ${i}`));
  }
  return { service, id: s.id };
}

describe('summaries and the coverage ledger', function () {
  it('a recursive summary covers the prior summary’s events too, so two cycles leave every event covered once', async function () {
    const { service, id } = await serviceWithTurns(6);
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['first summary', 'second summary']),
      maxEventsToKeep: 4,
      overlapSize: 0,
      tokenCountEstimator: new CharEstimator(),
      logger: silentLogger,
    });
    await service.compact(id, () => true, strategy);
    for (let i = 7; i <= 9; i++) {
      await service.appendMessage(id, Messages.user(`question ${i}`));
      await service.appendMessage(id, Messages.assistant(`answer ${i}`));
    }
    await service.compact(id, () => true, strategy);
    const report = await service.verifyCoverage(id);
    expect(report.ok, JSON.stringify(report)).to.equal(true);
    expect(report.originals).to.equal(18);
    expect(report.summarized).to.have.length(18 - report.verbatim.length);
  });

  it('additive summaries cover each chunk once across cycles', async function () {
    const { service, id } = await serviceWithTurns(8);
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['chunk summary']),
      keepTurns: 2,
      maxSummaryTokens: 100_000,
      tokenCountEstimator: new CharEstimator(),
      logger: silentLogger,
    });
    await service.compact(id, () => true, strategy);
    await service.appendMessage(id, Messages.user('question 9'));
    await service.appendMessage(id, Messages.assistant('answer 9'));
    await service.compact(id, () => true, strategy);
    const report = await service.verifyCoverage(id);
    expect(report.ok, JSON.stringify(report)).to.equal(true);
    expect(report.verbatim).to.have.length(4);
  });
});

describe('summary quality gate wired into the summarisers', function () {
  it('a summary that drops the identifiers is rejected: skip mode leaves the window unchanged and reports summarization-failed', async function () {
    const { service, id } = await serviceWithTurns(6);
    const reasons: CompactionSkipReason[] = [];
    service.events.on('compactionSkipped', (e) => reasons.push(e.reason));
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['The user asked some questions and got answers.']),
      maxEventsToKeep: 4,
      overlapSize: 0,
      qualityGate: new SummaryQualityGate({ minIdentifierShare: 0.5 }),
      logger: silentLogger,
    });
    const result = await service.compact(id, () => true, strategy);
    expect(result.eventsRemoved).to.equal(0);
    expect(reasons).to.deep.equal(['summarization-failed']);
    expect(await service.getEvents(id, EventFilter.active())).to.have.length(12);
  });

  it('a summary that keeps the identifiers passes the gate and is committed', async function () {
    const { service, id } = await serviceWithTurns(6);
    const ids = Array.from({ length: 6 }, (_, i) => `ORD-${1001 + i}`).join(', ');
    const strategy = new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient([`The user asked about orders ${ids}.`]),
      maxEventsToKeep: 4,
      overlapSize: 0,
      qualityGate: new SummaryQualityGate({ minIdentifierShare: 0.5 }),
      logger: silentLogger,
    });
    const result = await service.compact(id, () => true, strategy);
    expect(result.eventsRemoved).to.equal(8);
  });

  it("a rejected summary in 'stub' mode still shrinks the context with a mechanical summary", async function () {
    const { service, id } = await serviceWithTurns(6);
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(["I'm sorry, I can't help with that."]),
      keepTurns: 2,
      maxSummaryTokens: 100_000,
      failureMode: 'stub',
      qualityGate: new SummaryQualityGate(),
      logger: silentLogger,
    });
    const result = await service.compact(id, () => true, strategy);
    expect(result.eventsRemoved).to.equal(8);
    const summary = result.compactedEvents.find((e) => e.isSynthetic() && e.messageType === 'assistant');
    expect(summary?.metadata.summaryMethod).to.equal('stub');
    expect(summary?.text).to.not.include("I'm sorry");
  });
});
