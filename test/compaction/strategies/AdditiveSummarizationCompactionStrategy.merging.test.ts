import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionRequest,
  InvalidArgumentError,
  Messages,
  type ChatClient,
  type Logger,
  type SessionEvent,
} from 'session-compaction';
import { estimateEventsTokens, type AdditiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import { A, CharEstimator, U, event, expectThrows, fixtureSession } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const est = new CharEstimator();
const additive = (chatClient: ChatClient, options: Partial<AdditiveSummarizationCompactionStrategyOptions> = {}) =>
  new AdditiveSummarizationCompactionStrategy({
    chatClient,
    maxSummaryTokens: 100_000,
    keepTurns: 1,
    tokenCountEstimator: est,
    logger: silentLogger,
    ...options,
  });
const request = (events: readonly SessionEvent[]) => CompactionRequest.of(fixtureSession(), events);
const cost = (events: readonly SessionEvent[]) => estimateEventsTokens(events, est);
const summaries = (window: readonly SessionEvent[]) => window.filter((e) => e.isSynthetic() && e.messageType === 'assistant');

/** A checkpoint pair as an earlier additive compaction wrote it (the metadata is on both halves). */
function checkpoint(text: string, metadata: Record<string, unknown>): SessionEvent[] {
  const meta = { synthetic: true, compactionSource: 'additive-summarization', ...metadata };
  return [
    event(Messages.user('Summarize the conversation we had so far.'), { metadata: meta }),
    event(Messages.assistant(text), { metadata: meta }),
  ];
}

class InfoLogger implements Logger {
  readonly infos: Array<[string, Record<string, unknown> | undefined]> = [];
  error() {}
  warn() {}
  debug() {}
  info(message: string, meta?: Record<string, unknown>) {
    this.infos.push([message, meta]);
  }
}

describe('AdditiveSummarizationCompactionStrategy: chunks, levels and merging', function () {
  it('refuses a keepTurns that is negative, fractional or not a number, naming other options in their messages', function () {
    for (const keepTurns of [-1, 1.5, '2']) {
      expectThrows(
        () => additive(new ScriptedChatClient(), { keepTurns: keepTurns as number }),
        InvalidArgumentError,
        'keepTurns must be >= 0',
      );
    }
    expectThrows(
      () => additive(new ScriptedChatClient(), { maxChunkSummaryTokens: 0 }),
      InvalidArgumentError,
      'maxChunkSummaryTokens must be greater than 0',
    );
    expectThrows(
      () => additive(new ScriptedChatClient(), { consolidationPrompt: ' ' }),
      InvalidArgumentError,
      'consolidationPrompt must not be null or empty',
    );
  });

  it('caps a chunk summary at a quarter of maxSummaryTokens by default, and never below 64', function () {
    expect(additive(new ScriptedChatClient(), { maxSummaryTokens: 1000 }).maxChunkSummaryTokens).to.equal(250);
    expect(additive(new ScriptedChatClient(), { maxSummaryTokens: 100 }).maxChunkSummaryTokens).to.equal(64);
  });

  it("adds a level's instructions after the system prompt, and leaves the prompt alone for a level without any", async function () {
    const prompts: string[] = [];
    for (const instructions of ['  Be terse.  ', undefined]) {
      const client = new ScriptedChatClient(['s']);
      const levels = [{ upToTokens: 1_000_000, level: 1, ...(instructions !== undefined ? { instructions } : {}) }];
      await additive(client, { systemPrompt: 'Summarise.  ', compressionLevels: levels }).compact(
        request([U('q1'), A('a1'), U('q2'), A('a2')]),
      );
      prompts.push(client.requests[0]!.system!);
    }
    expect(prompts[0]!.startsWith('Summarise.\n\nBe terse.\n\n')).to.equal(true);
    expect(prompts[1]!.startsWith('Summarise.\n\n')).to.equal(true);
    expect(prompts[1]!.replace('Summarise.\n\n', '')).to.equal(prompts[0]!.replace('Summarise.\n\nBe terse.\n\n', ''));
  });

  it('keeps a turn that costs exactly maxKeptTokens, and degrades past one that costs a token more', async function () {
    const last = [U('q2'), A('a2')];
    const events = [U('q1'), A('a1'), ...last];
    const kept = await additive(new ScriptedChatClient(['s']), { maxKeptTokens: cost(last) }).compact(request(events));
    expect(kept.archivedEvents).to.deep.equal(events.slice(0, 2));
    const over = await additive(new ScriptedChatClient(['s']), { maxKeptTokens: cost(last) - 1 }).compact(request(events));
    expect(over.archivedEvents).to.deep.equal(events);
  });

  it('a preamble never leaves without a turn: with no more turns than keepTurns it is a no-op', async function () {
    const client = new ScriptedChatClient(['s']);
    const events = [A('preamble'), U('q'), A('a')];
    const result = await additive(client).compact(request(events));
    expect(result.isNoop()).to.equal(true);
    expect(client.callCount).to.equal(0);
  });

  it('when every leaving event is pinned nothing is summarised: a no-op without a model call', async function () {
    const client = new ScriptedChatClient(['s']);
    const pinned = { metadata: { pinned: true } };
    const events = [event(Messages.user('q1'), pinned), event(Messages.assistant('a1'), pinned), U('q2'), A('a2')];
    const result = await additive(client).compact(request(events));
    expect(result.isNoop()).to.equal(true);
    expect(client.callCount).to.equal(0);
  });

  it('a preview with nothing to archive says so, summarises nothing and calls no model', async function () {
    const events = [U('q'), A('a')];
    const preview = await additive(new ScriptedChatClient()).preview(request(events));
    expect(preview.result.skipReason).to.equal('nothing-to-archive');
    expect(preview.summarizedEvents).to.deep.equal([]);
    expect(preview.modelCalled).to.equal(false);
  });

  it("a preview's checkpoint has the level and ordinal the compaction would give it, marked 'preview'", async function () {
    const prior = checkpoint('earlier', { checkpointLevel: 1, compactionOrdinal: 4, coveredEventIds: ['x'] });
    const preview = await additive(new ScriptedChatClient(['s'])).preview(
      request([...prior, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    const placeholder = summaries(preview.result.compactedEvents)[1]!;
    expect(placeholder.metadata).to.deep.include({ summaryMethod: 'preview', checkpointLevel: 1, compactionOrdinal: 5 });
    expect(preview.modelCalled).to.equal(false);
  });

  it("a failed chunk summary in 'skip' mode is a no-op whose reason is the failed summary", async function () {
    const result = await additive(new ScriptedChatClient([null])).compact(request([U('q1'), A('a1'), U('q2'), A('a2')]));
    expect(result.isNoop()).to.equal(true);
    expect(result.skipReason).to.equal('summarization-failed');
  });

  it("a stub chunk names no model; a model's chunk names it", async function () {
    const events = [U('q1'), A('a1'), U('q2'), A('a2')];
    const model = await additive(new ScriptedChatClient(['s'], { model: 'm' })).compact(request(events));
    expect(summaries(model.compactedEvents)[0]!.metadata.model).to.equal('m');
    const stub = await additive(new ScriptedChatClient([null], { model: 'm' }), { failureMode: 'stub' }).compact(request(events));
    expect(summaries(stub.compactedEvents)[0]!.metadata).to.not.have.property('model');
  });

  it('summaries that cost exactly maxSummaryTokens are not merged', async function () {
    const events = [U('q1'), A('a1'), U('q2'), A('a2')];
    const first = await additive(new ScriptedChatClient(['the chunk summary'])).compact(request(events));
    const total = cost(first.compactedEvents.filter((e) => e.isSynthetic()));
    const client = new ScriptedChatClient(['the chunk summary', 'merged']);
    const again = await additive(client, { maxSummaryTokens: total }).compact(request(events));
    expect(client.callCount).to.equal(1);
    expect(summaries(again.compactedEvents).map((e) => e.text)).to.deep.equal(['the chunk summary']);
  });

  it("merging every checkpoint ('all'): one pair a level above the highest, covering all, summing their sources", async function () {
    const logger = new InfoLogger();
    const client = new ScriptedChatClient(['chunk', 'merged'], { model: 'm' });
    const strategy = additive(client, { maxSummaryTokens: 10, merge: 'all', logger });
    const older = checkpoint('older', {
      checkpointLevel: 1,
      compactionOrdinal: 1,
      coveredEventIds: ['x1', 'x2'],
      sourceTokenCount: 100,
    });
    const newer = checkpoint('newer', {
      checkpointLevel: 2,
      compactionOrdinal: 2,
      coveredEventIds: ['x3'],
      sourceTokenCount: 50,
    });
    const chunk = [U('q1'), A('a1')];
    const result = await strategy.compact(request([...older, ...newer, ...chunk, U('q2'), A('a2')]));
    const merged = summaries(result.compactedEvents);
    expect(merged).to.have.length(1);
    expect(merged[0]!.text).to.equal('merged');
    expect(merged[0]!.metadata).to.deep.include({
      summaryMethod: 'consolidated',
      coveredFirstEventId: 'x1',
      coveredLastEventId: chunk[1]!.id,
      sourceTokenCount: 150 + cost(chunk),
      consolidatedSummaries: 3,
      checkpointLevel: 3,
      compactionOrdinal: 3,
      mergedCheckpoints: 3,
      model: 'm',
    });
    expect(merged[0]!.metadata.coveredEventIds).to.deep.equal(['x1', 'x2', 'x3', ...chunk.map((e) => e.id)]);
    // 'all' caps the merged summary at half of maxSummaryTokens.
    expect(client.requests[1]!.maxTokens).to.equal(5);
    expect(logger.infos).to.deep.equal([
      ['oldest additive summaries merged into one checkpoint', { sessionId: fixtureSession().id, merged: 3, kept: 0 }],
    ]);
  });

  it('merges a summary of another origin too, taking ids and source tokens only from the metadata that holds them', async function () {
    const client = new ScriptedChatClient(['chunk', 'merged']);
    const foreign = [
      event(Messages.user('Summarize'), { metadata: { synthetic: true } }),
      event(Messages.assistant('a summary without a ledger'), { metadata: { synthetic: true } }),
    ];
    const odd = checkpoint('odd ids', {
      checkpointLevel: 1,
      compactionOrdinal: 2,
      coveredEventIds: ['x1', 7],
      sourceTokenCount: 40,
    });
    const chunk = [U('q1'), A('a1')];
    const result = await additive(client, { maxSummaryTokens: 10, merge: 'all' }).compact(
      request([...foreign, ...odd, ...chunk, U('q2'), A('a2')]),
    );
    const merged = summaries(result.compactedEvents);
    expect(merged.map((e) => e.text)).to.deep.equal(['merged']);
    expect(merged[0]!.metadata.coveredEventIds).to.deep.equal(['x1', ...chunk.map((e) => e.id)]);
    expect(merged[0]!.metadata.sourceTokenCount).to.equal(40 + cost(chunk));
  });

  it('a synthetic user message after the last summary belongs to that checkpoint; alone, it is checkpoint 1', async function () {
    const note = () => event(Messages.user('a synthetic note'), { metadata: { synthetic: true } });
    const alone = await additive(new ScriptedChatClient(['s'])).compact(request([note(), U('q1'), A('a1'), U('q2'), A('a2')]));
    expect(summaries(alone.compactedEvents)[0]!.metadata.compactionOrdinal).to.equal(2);
    const older = checkpoint('older', { checkpointLevel: 1, compactionOrdinal: 1, coveredEventIds: ['x1'] });
    const merging = await additive(new ScriptedChatClient(['chunk', 'merged']), { maxSummaryTokens: 10, merge: 'all' }).compact(
      request([...older, note(), U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(summaries(merging.compactedEvents)[0]!.metadata.mergedCheckpoints).to.equal(2);
  });

  it('oldest-first merges the oldest two of four and caps the merged summary at what the kept ones leave', async function () {
    const client = new ScriptedChatClient(['chunk', 'merged']);
    const older = [1, 2, 3].map((i) =>
      checkpoint(`summary ${i} ${'x'.repeat(80)}`, { checkpointLevel: 1, compactionOrdinal: i, coveredEventIds: [`x${i}`] }),
    );
    const maxSummaryTokens = 400;
    const result = await additive(client, { maxSummaryTokens }).compact(
      request([...older.flat(), U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    const synthetic = result.compactedEvents.filter((e) => e.isSynthetic());
    expect(synthetic.map((e) => e.text)).to.deep.equal([
      synthetic[0]!.text,
      'merged',
      older[2]![0]!.text,
      older[2]![1]!.text,
      synthetic[4]!.text,
      'chunk',
    ]);
    // What is left for the merged summary: the cap, less the kept checkpoints and the merged pair's prompt.
    const left = maxSummaryTokens - cost(synthetic.slice(2)) - cost(synthetic.slice(0, 1));
    expect(left).to.be.below(maxSummaryTokens / 2);
    expect(client.requests[1]!.maxTokens).to.equal(left);
  });

  it("a failed merge in 'stub' mode keeps the separate checkpoints rather than a stub", async function () {
    const client = new ScriptedChatClient(['chunk', null]);
    const older = checkpoint('older', { checkpointLevel: 1, compactionOrdinal: 1, coveredEventIds: ['x1'] });
    const result = await additive(client, { maxSummaryTokens: 10, failureMode: 'stub' }).compact(
      request([...older, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(summaries(result.compactedEvents).map((e) => e.text)).to.deep.equal(['older', 'chunk']);
    expect(client.callCount).to.equal(2);
  });

  it("another strategy's summary, or one with unreadable checkpoint numbers, counts as checkpoint 1 at level 1", async function () {
    const foreign = [
      event(Messages.user('Summarize'), { metadata: { synthetic: true } }),
      event(Messages.assistant('a recursive summary'), { metadata: { synthetic: true } }),
    ];
    const result = await additive(new ScriptedChatClient(['s'])).compact(
      request([...foreign, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(summaries(result.compactedEvents)[1]!.metadata.compactionOrdinal).to.equal(2);
    const unreadable = checkpoint('odd', { checkpointLevel: '3', compactionOrdinal: '5' });
    const next = await additive(new ScriptedChatClient(['s'])).compact(
      request([...unreadable, U('q1'), A('a1'), U('q2'), A('a2')]),
    );
    expect(summaries(next.compactedEvents)[1]!.metadata.compactionOrdinal).to.equal(2);
  });
});
