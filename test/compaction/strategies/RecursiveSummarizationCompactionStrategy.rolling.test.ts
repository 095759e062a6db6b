import { expect } from 'chai';
import {
  CompactionRequest,
  formatEvent,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  type ChatClient,
  type SessionEvent,
} from 'session-compaction';
import {
  DEFAULT_SUMMARY_UPDATE_PROMPT,
  type CutWithinTurn,
  type RecursiveSummarizationCompactionStrategyOptions,
} from 'session-compaction/spi';
import { A, CharEstimator, SA, SU, U, event, expectThrows, fixtureSession } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

function recursive(chatClient: ChatClient, options: Partial<RecursiveSummarizationCompactionStrategyOptions> = {}) {
  return new RecursiveSummarizationCompactionStrategy({
    chatClient,
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
    ...options,
  });
}

const request = (events: readonly SessionEvent[]) => CompactionRequest.of(fixtureSession(), events);
const summaryOf = (window: readonly SessionEvent[]) => window.find((e) => e.isSynthetic() && e.messageType === 'assistant')!;

/** Two compactions in a row: q1 a1 leave first, then q2 a2; the second summary extends the first. */
async function twoCycles(strategy: RecursiveSummarizationCompactionStrategy) {
  const first = [U('q1'), A('a1'), U('q2'), A('a2')];
  const r1 = await strategy.compact(request(first));
  const second = [...r1.compactedEvents, U('q3'), A('a3')];
  const r2 = await strategy.compact(request(second));
  return { first, second, r1, r2 };
}

describe('RecursiveSummarizationCompactionStrategy: the rolling summary', function () {
  it('refuses an overlap that is negative, fractional or not a number', function () {
    for (const overlapSize of [-1, 1.5, '1']) {
      expectThrows(
        () => recursive(new ScriptedChatClient(), { overlapSize: overlapSize as number }),
        InvalidArgumentError,
        'overlapSize must be >= 0',
      );
    }
  });

  it('names the option in the messages for a bad maxSummaryTokens and a blank updatePrompt', function () {
    expectThrows(
      () => recursive(new ScriptedChatClient(), { maxSummaryTokens: 0 }),
      InvalidArgumentError,
      'maxSummaryTokens must be greater than 0',
    );
    expectThrows(
      () => recursive(new ScriptedChatClient(), { updatePrompt: ' ' }),
      InvalidArgumentError,
      'updatePrompt must not be null or empty',
    );
  });

  it('a custom systemPrompt without an updatePrompt serves for updates too; without either, the default update prompt', function () {
    expect(recursive(new ScriptedChatClient(), { systemPrompt: 'Summarise tersely.' }).updatePrompt).to.equal(
      'Summarise tersely.',
    );
    expect(recursive(new ScriptedChatClient()).updatePrompt).to.equal(DEFAULT_SUMMARY_UPDATE_PROMPT);
  });

  it('reports its settings and renders events as formatEvent does', function () {
    const strategy = recursive(new ScriptedChatClient(), { maxEventsToKeep: 7, overlapSize: 3 });
    expect(strategy.getMaxEventsToKeep()).to.equal(7);
    expect(strategy.getOverlapSize()).to.equal(3);
    const e = U('hello');
    expect(RecursiveSummarizationCompactionStrategy.formatEvent(e)).to.equal(formatEvent(e));
  });

  for (const cutWithinTurn of ['agent-safe', 'tool-pair-safe', 'never'] as CutWithinTurn[]) {
    it(`with cutWithinTurn '${cutWithinTurn}', no more events than maxEventsToKeep is a no-op without a model call`, async function () {
      const client = new ScriptedChatClient();
      const events = [A('preamble'), U('q'), A('a')];
      const result = await recursive(client, { maxEventsToKeep: 3, cutWithinTurn }).compact(request(events));
      expect(result.isNoop()).to.equal(true);
      expect(result.compactedEvents).to.deep.equal(events);
      expect(client.callCount).to.equal(0);
    });
  }

  it('a preview with nothing to archive says so, summarises nothing and calls no model', async function () {
    const events = [U('q'), A('a')];
    const preview = await recursive(new ScriptedChatClient()).preview(request(events));
    expect(preview.result.skipReason).to.equal('nothing-to-archive');
    expect(preview.result.compactedEvents).to.deep.equal(events);
    expect(preview.summarizedEvents).to.deep.equal([]);
    expect(preview.modelCalled).to.equal(false);
  });

  it("a preview's summary is marked 'preview' and names no model", async function () {
    const client = new ScriptedChatClient(['s'], { model: 'gpt-test' });
    const preview = await recursive(client).preview(request([U('q1'), A('a1'), U('q2'), A('a2')]));
    const summary = summaryOf(preview.result.compactedEvents);
    expect(summary.metadata.summaryMethod).to.equal('preview');
    expect(summary.metadata).to.not.have.property('model');
  });

  it('the first summary is written with the system prompt, an extension of it with the update prompt', async function () {
    const client = new ScriptedChatClient(['first', 'second']);
    await twoCycles(recursive(client, { systemPrompt: 'WRITE A SUMMARY.', updatePrompt: 'UPDATE THE SUMMARY.' }));
    expect(client.requests[0]!.system!.startsWith('WRITE A SUMMARY.')).to.equal(true);
    expect(client.requests[1]!.system!.startsWith('UPDATE THE SUMMARY.')).to.equal(true);
  });

  it('the extended summary covers exactly the events of both compactions, from the first one archived', async function () {
    const { first, r2 } = await twoCycles(recursive(new ScriptedChatClient(['first', 'second'])));
    const summary = summaryOf(r2.compactedEvents);
    expect(summary.metadata.coveredFirstEventId).to.equal(first[0]!.id);
    expect(summary.metadata.coveredLastEventId).to.equal(first[3]!.id);
    expect(summary.metadata.coveredEventIds).to.deep.equal(first.map((e) => e.id));
  });

  it('a blank prior summary is no summary: no prior-summary section, and the first-summary prompt', async function () {
    const client = new ScriptedChatClient(['s']);
    const blank = [SU(), SA('   '), event(Messages.assistant(null), { metadata: { synthetic: true } })];
    await recursive(client, { systemPrompt: 'WRITE A SUMMARY.', updatePrompt: 'UPDATE THE SUMMARY.' }).compact(
      request([...blank, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(client.requests[0]!.system!.startsWith('WRITE A SUMMARY.')).to.equal(true);
    expect(client.requests[0]!.user.startsWith('=== CONVERSATION TO SUMMARIZE ===')).to.equal(true);
  });

  it("the covered range starts where the prior summary's did, even behind a synthetic note of another origin", async function () {
    const note = event(Messages.user('a synthetic note'), { metadata: { synthetic: true } });
    const meta = { synthetic: true, coveredFirstEventId: 'x0', coveredLastEventId: 'x1', coveredEventIds: ['x0', 'x1'] };
    const prior = [event(Messages.user('Summarize'), { metadata: meta }), event(Messages.assistant('prior'), { metadata: meta })];
    const result = await recursive(new ScriptedChatClient(['s'])).compact(
      request([note, ...prior, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(summaryOf(result.compactedEvents).metadata.coveredFirstEventId).to.equal('x0');
  });

  it("in 'stub' mode a failed update carries the prior summary verbatim, and names no model", async function () {
    const client = new ScriptedChatClient(['the first summary', null], { model: 'gpt-test' });
    const { r1, r2 } = await twoCycles(recursive(client, { failureMode: 'stub' }));
    expect(summaryOf(r1.compactedEvents).metadata.model).to.equal('gpt-test');
    const stub = summaryOf(r2.compactedEvents);
    expect(stub.metadata.summaryMethod).to.equal('stub');
    expect(stub.text).to.contain('Earlier summary:\nthe first summary');
    expect(stub.text).to.contain('First user request: "q2"');
    expect(stub.metadata).to.not.have.property('model');
  });
});
