import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SummarizationError,
  type ChatClient,
  type CompactionStrategy,
  type SessionEvent,
} from 'session-compaction';
import type { AdditiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import { DEFAULT_CONSOLIDATION_SYSTEM_PROMPT, summarySystemPrompt } from '../../../src/summarization/prompts.js';
import { A, CharEstimator, U, compactionRequest, expectRejects, expectThrows, texts } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const additive = (chatClient: ChatClient, options: Partial<AdditiveSummarizationCompactionStrategyOptions> = {}) =>
  new AdditiveSummarizationCompactionStrategy({
    chatClient,
    maxSummaryTokens: 100_000,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
    ...options,
  });

/** Every stored byte of an event that a reader could observe. */
const bytes = (e: SessionEvent) =>
  JSON.stringify({ id: e.id, t: e.timestamp.toISOString(), m: e.message, meta: e.metadata, b: e.branch, a: e.archived });

async function newSession() {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger });
  const session = await service.create({ userId: 'u' });
  let n = 0;
  const addTurns = async (count: number) => {
    for (let i = 0; i < count; i++) {
      n += 1;
      await service.appendMessage(session.id, Messages.user(`question ${n}`));
      await service.appendMessage(session.id, Messages.assistant(`answer ${n}`));
    }
  };
  return { service, id: session.id, addTurns };
}

describe('AdditiveSummarizationCompactionStrategy', function () {
  it('three compaction cycles give three summary pairs in order; the first stays byte-identical', async function () {
    const client = new ScriptedChatClient(['summary of chunk 1', 'summary of chunk 2', 'summary of chunk 3'], {
      model: 'm-1',
    });
    const strategy = additive(client, { keepTurns: 2 });
    const { service, id, addTurns } = await newSession();
    const compactOnce = async () => service.compact(id, () => true, strategy);

    await addTurns(4);
    const first = await compactOnce();
    expect(texts(first.archivedEvents)).to.deep.equal(['question 1', 'answer 1', 'question 2', 'answer 2']);
    const firstPair = (await service.getEvents(id, EventFilter.active())).slice(0, 2).map(bytes);

    await addTurns(2);
    await compactOnce();
    const afterTwo = await service.getEvents(id, EventFilter.active());
    expect(afterTwo.slice(0, 2).map(bytes)).to.deep.equal(firstPair);

    await addTurns(2);
    await compactOnce();
    const active = await service.getEvents(id, EventFilter.active());
    expect(active.slice(0, 2).map(bytes)).to.deep.equal(firstPair);
    expect(texts(active)).to.deep.equal([
      'Summarize the conversation we had so far.',
      'summary of chunk 1',
      'Summarize the conversation we had so far.',
      'summary of chunk 2',
      'Summarize the conversation we had so far.',
      'summary of chunk 3',
      'question 7',
      'answer 7',
      'question 8',
      'answer 8',
    ]);
    for (const e of active.slice(0, 6)) expect(e.metadata.compactionSource).to.equal('additive-summarization');

    // Each cycle summarised only its own chunk: no earlier event and no earlier summary in the prompt.
    const second = client.requests[1]!.user;
    expect(second).to.include('User: question 3').and.include('Assistant: answer 4');
    expect(second).to.not.include('question 1').and.not.include('summary of chunk 1');
    expect(second).to.not.include('question 5');

    // Nothing left the log.
    const all = await service.getEvents(id, EventFilter.all());
    for (let n = 1; n <= 8; n++) expect(texts(all)).to.include(`question ${n}`);
    expect(all.filter((e) => e.archived)).to.have.length(12);
  });

  it('records the covered ids, token counts, model and creation time of each chunk', async function () {
    const now = new Date('2025-06-01T10:00:00.000Z');
    const events = [U('q1'), A('a1'), U('q2'), A('a2')];
    const result = await additive(new ScriptedChatClient(['chunk summary'], { model: 'gpt-x' }), {
      keepTurns: 1,
      now: () => now,
    }).compact(compactionRequest(events));
    const meta = result.compactedEvents[1]!.metadata;
    expect(meta).to.deep.include({
      synthetic: true,
      compactionSource: 'additive-summarization',
      summaryMethod: 'model',
      coveredFirstEventId: events[0]!.id,
      coveredLastEventId: events[1]!.id,
      coveredEventIds: [events[0]!.id, events[1]!.id],
      tokenCount: 'chunk summary'.length,
      sourceTokenCount: 'User: q1'.length + 'Assistant: a1'.length,
      model: 'gpt-x',
      createdAt: '2025-06-01T10:00:00.000Z',
    });
    expect(result.tokensEstimatedSaved).to.equal(meta.sourceTokenCount);
  });

  it('consolidates all summaries into one when together they exceed maxSummaryTokens', async function () {
    const client = new ScriptedChatClient(['first chunk summary', 'second chunk summary', 'merged summary']);
    // Each pair costs 41 (shadow prompt) + ~30 chars: two pairs exceed 150, one does not.
    const strategy = additive(client, { keepTurns: 1, maxSummaryTokens: 150 });
    const { service, id, addTurns } = await newSession();
    await addTurns(2);
    await service.compact(id, () => true, strategy);
    expect(client.callCount).to.equal(1);
    await addTurns(1);
    const result = await service.compact(id, () => true, strategy);
    expect(client.callCount).to.equal(3);

    const consolidation = client.requests[2]!;
    expect(consolidation.system).to.equal(summarySystemPrompt(DEFAULT_CONSOLIDATION_SYSTEM_PROMPT));
    expect(consolidation.user).to.include('Summary 1: first chunk summary').and.include('Summary 2: second chunk summary');
    expect(consolidation.maxTokens).to.equal(75);

    const active = await service.getEvents(id, EventFilter.active());
    expect(texts(active)).to.deep.equal([
      'Summarize the conversation we had so far.',
      'merged summary',
      'question 3',
      'answer 3',
    ]);
    const all = await service.getEvents(id, EventFilter.all());
    const archivedIds = all.filter((e) => e.archived).map((e) => e.id);
    expect(active[1]!.metadata).to.deep.include({ summaryMethod: 'consolidated', consolidatedSummaries: 2 });
    expect(active[1]!.metadata.coveredEventIds).to.deep.equal(archivedIds);
    expect(result.archivedEvents).to.have.length(2);
    for (let n = 1; n <= 3; n++) expect(texts(all)).to.include(`answer ${n}`);
  });

  it('keeps the separate summaries when the consolidation call fails', async function () {
    const client = new ScriptedChatClient(['first chunk summary', 'second chunk summary', null]);
    const failures: string[] = [];
    const strategy = additive(client, {
      keepTurns: 1,
      maxSummaryTokens: 150,
      onSummarizationFailure: (_r, e) => void failures.push(e.kind),
    });
    const { service, id, addTurns } = await newSession();
    await addTurns(2);
    await service.compact(id, () => true, strategy);
    await addTurns(1);
    await service.compact(id, () => true, strategy);
    const active = await service.getEvents(id, EventFilter.active());
    expect(texts(active).filter((t) => t?.includes('chunk summary'))).to.deep.equal([
      'first chunk summary',
      'second chunk summary',
    ]);
    expect(failures).to.deep.equal(['blank']);
  });

  it('the kept buffer degrades 4, 3, 2, 1 turns while it exceeds maxKeptTokens', async function () {
    const big = 'x'.repeat(100);
    // Turns cost ~ 'User: q1'+'Assistant: a1' = 21 each, the big one ~ 121.
    const events = [U('q1'), A('a1'), U('q2'), A(big), U('q3'), A('a3'), U('q4'), A('a4'), U('q5'), A('a5')];
    const client = new ScriptedChatClient(['s']);
    const strategy = additive(client, { keepTurns: 4, maxKeptTokens: 100 });
    const result = await strategy.compact(compactionRequest(events));
    // 4 turns (q2..q5) = 121+21*3 > 100 → 3 turns (q3..q5) = 63 fits.
    expect(texts(result.archivedEvents)).to.deep.equal(['q1', 'a1', 'q2', big]);
    expect(texts(result.compactedEvents.slice(2))).to.deep.equal(['q3', 'a3', 'q4', 'a4', 'q5', 'a5']);
  });

  it('a last turn larger than maxKeptTokens degrades the buffer to 0 turns: everything is summarised', async function () {
    const huge = 'y'.repeat(500);
    const events = [U('q1'), A('a1'), U('q2'), A('a2'), U('q3'), A(huge)];
    const client = new ScriptedChatClient(['all of it']);
    const strategy = additive(client, { keepTurns: 4, maxKeptTokens: 200 });
    expect(
      strategy.keptTurnCount([
        [events[0]!, events[1]!],
        [events[4]!, events[5]!],
      ]),
    ).to.equal(0);
    const result = await strategy.compact(compactionRequest(events));
    expect(result.archivedEvents).to.have.length(6);
    expect(texts(result.compactedEvents)).to.deep.equal(['Summarize the conversation we had so far.', 'all of it']);
    expect(client.requests[0]!.user).to.include(huge);
  });

  it('with no more than keepTurns turns within budget it is a no-op without a model call', async function () {
    const client = new ScriptedChatClient();
    const events = [U('q1'), A('a1'), U('q2'), A('a2')];
    const result = await additive(client, { keepTurns: 2, maxKeptTokens: 1000 }).compact(compactionRequest(events));
    expect(result.isNoop()).to.equal(true);
    expect(client.callCount).to.equal(0);
  });

  it('the preamble leaves with the first chunk; other synthetic events stay first and untouched', async function () {
    const client = new ScriptedChatClient(['s']);
    const prior = [
      ...[U('Summarize.'), A('old recursive summary')].map((e) =>
        e.with({ metadata: { synthetic: true, compactionSource: 'recursive-summarization' } }),
      ),
    ];
    const preamble = A('Welcome!');
    const events = [...prior, preamble, U('q1'), A('a1'), U('q2'), A('a2')];
    const result = await additive(client, { keepTurns: 1 }).compact(compactionRequest(events));
    expect(texts(result.archivedEvents)).to.deep.equal(['Welcome!', 'q1', 'a1']);
    expect(result.compactedEvents.slice(0, 2)).to.deep.equal(prior);
    expect(texts(result.compactedEvents.slice(2))).to.deep.equal(['Summarize the conversation we had so far.', 's', 'q2', 'a2']);
  });

  it('failure modes: skip is a no-op, stub writes a mechanical chunk summary, throw rejects', async function () {
    const events = [U('q1'), TCWithName('search'), A('a1'), U('q2'), A('a2')];
    const skip = await additive(new ScriptedChatClient([null]), { keepTurns: 1 }).compact(compactionRequest(events));
    expect(skip.isNoop()).to.equal(true);

    const stub = await additive(new ScriptedChatClient([new Error('down')]), { keepTurns: 1, failureMode: 'stub' }).compact(
      compactionRequest(events),
    );
    expect(texts(stub.archivedEvents)).to.deep.equal(['q1', null, 'a1']);
    const text = stub.compactedEvents[1]!.text!;
    expect(stub.compactedEvents[1]!.metadata.summaryMethod).to.equal('stub');
    expect(stub.compactedEvents[1]!.metadata.model).to.equal(undefined);
    expect(text).to.include('1 from the user, 2 from the assistant').and.include('search ×1').and.include('"q1"');

    const error = await expectRejects(
      additive(new ScriptedChatClient(['']), { keepTurns: 1, failureMode: 'throw' }).compact(compactionRequest(events)),
      SummarizationError,
    );
    expect((error as SummarizationError).kind).to.equal('blank');
  });

  it('validates its options', function () {
    const c = new ScriptedChatClient();
    expectThrows(() => additive(null as unknown as ChatClient), InvalidArgumentError, 'chatClient must not be null');
    expectThrows(() => additive(c, { keepTurns: -1 }), InvalidArgumentError, 'keepTurns must be >= 0');
    expectThrows(() => additive(c, { maxKeptTokens: 0 }), InvalidArgumentError, 'maxKeptTokens must be greater than 0');
    expectThrows(
      () => additive(c, { maxSummaryTokens: undefined as unknown as number }),
      InvalidArgumentError,
      'maxSummaryTokens must be greater than 0',
    );
    expectThrows(() => additive(c, { systemPrompt: ' ' }), InvalidArgumentError, 'systemPrompt');
    expect(additive(c).keepTurns).to.equal(4);
  });
});

function TCWithName(name: string) {
  return A(null).with({
    message: Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', name, '{"q":"x"}')] }),
  });
}

describe('summarisation under a concurrent compaction', function () {
  const strategies: Array<[string, () => CompactionStrategy]> = [
    [
      'recursive',
      () =>
        new RecursiveSummarizationCompactionStrategy({
          chatClient: new ScriptedChatClient(['slow summary'], { delayMs: 50 }),
          maxEventsToKeep: 2,
          overlapSize: 0,
          tokenCountEstimator: new CharEstimator(),
          logger: silentLogger,
        }),
    ],
    ['additive', () => additive(new ScriptedChatClient(['slow summary'], { delayMs: 50 }), { keepTurns: 1 })],
  ];
  for (const [name, make] of strategies) {
    it(`${name}: two racing compactions with a slow summariser → one wins, the loser archives nothing`, async function () {
      const { service, id, addTurns } = await newSession();
      await addTurns(3);
      const strategy = make();
      const results = await Promise.all([service.compact(id, () => true, strategy), service.compact(id, () => true, strategy)]);
      const archivedCounts = results.map((r) => r.archivedEvents.length).sort();
      expect(archivedCounts[0]).to.equal(0);
      expect(archivedCounts[1]).to.be.greaterThan(0);
      const all = await service.getEvents(id, EventFilter.all());
      expect(all.filter((e) => e.isSynthetic())).to.have.length(2);
      expect(all.filter((e) => e.isSynthetic() && e.messageType === 'assistant').map((e) => e.text)).to.deep.equal([
        'slow summary',
      ]);
      expect(all.filter((e) => !e.isSynthetic())).to.have.length(6);
    });
  }
});
