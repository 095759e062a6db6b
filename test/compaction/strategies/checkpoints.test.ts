import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  type ChatClient,
  type SessionEvent,
} from 'session-compaction';
import { DEFAULT_COMPRESSION_LEVELS, type AdditiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import { compactionStatsHooks, compactionStatsOf } from 'session-compaction/telemetry';
import { CharEstimator, expectThrows, texts } from '../../support/fixtures.js';
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

async function newSession(options: { recordCompactionStats?: boolean } = {}) {
  const service = new DefaultSessionService(new InMemorySessionRepository(), {
    logger: silentLogger,
    tokenCountEstimator: est,
    ...options,
  });
  const session = await service.create({ userId: 'u' });
  let n = 0;
  /** `count` turns whose answers are `size` characters long. */
  const addTurns = async (count: number, size = 10) => {
    for (let i = 0; i < count; i++) {
      n += 1;
      await service.appendMessage(session.id, Messages.user(`question ${n}`));
      await service.appendMessage(session.id, Messages.assistant(`answer ${n} ${'x'.repeat(size)}`));
    }
  };
  const summaries = async () =>
    (await service.getEvents(session.id, EventFilter.active())).filter((e) => e.isSynthetic() && e.messageType === 'assistant');
  return { service, id: session.id, addTurns, summaries };
}

const levelOf = (e: SessionEvent) => e.metadata.checkpointLevel;
const ordinalOf = (e: SessionEvent) => e.metadata.compactionOrdinal;

describe('Checkpoints: levels, age and oldest-first merging of additive summaries', function () {
  it('each checkpoint carries its compression level, its compaction ordinal and its creation time', async function () {
    const client = new ScriptedChatClient(['s1', 's2', 's3']);
    const strategy = additive(client);
    const { service, id, addTurns, summaries } = await newSession();
    for (let round = 0; round < 3; round++) {
      await addTurns(2);
      await service.compact(id, () => true, strategy);
    }
    const checkpoints = await summaries();
    expect(checkpoints.map(ordinalOf)).to.deep.equal([1, 2, 3]);
    expect(checkpoints.map(levelOf)).to.deep.equal([1, 1, 1]);
    for (const c of checkpoints) expect(c.metadata.createdAt).to.be.a('string');
  });

  it('chooses the level by the chunk size from the table: instructions and target length change with it', async function () {
    const client = new ScriptedChatClient(['small', 'medium', 'large']);
    const strategy = additive(client, { maxChunkSummaryTokens: 1000 });
    const { service, id, addTurns, summaries } = await newSession();
    await addTurns(2, 100); // a chunk of ~250 tokens: level 1
    await service.compact(id, () => true, strategy);
    await addTurns(2, 4000); // ~4000 tokens: level 2
    await service.compact(id, () => true, strategy);
    await addTurns(2, 20_000); // ~20 000 tokens: level 3
    await service.compact(id, () => true, strategy);

    expect((await summaries()).map(levelOf)).to.deep.equal([1, 2, 3]);
    const [l1, l2, l3] = client.requests;
    expect(l1!.system).to.include('Compression level 1 (detailed)');
    expect(l2!.system).to.include('Compression level 2 (moderate)');
    expect(l3!.system).to.include('Compression level 3 (terse)');
    expect([l1!.maxTokens, l2!.maxTokens, l3!.maxTokens]).to.deep.equal([1000, 600, 300]);
  });

  it('takes a configurable level table; a chunk larger than every entry gets the last level', async function () {
    const client = new ScriptedChatClient(['a', 'b']);
    const strategy = additive(client, {
      maxChunkSummaryTokens: 200,
      compressionLevels: [
        { upToTokens: 100, level: 1, instructions: 'Be thorough.' },
        { upToTokens: 500, level: 5, instructions: 'Be brief.', lengthShare: 0.5 },
      ],
    });
    const { service, id, addTurns, summaries } = await newSession();
    await addTurns(2, 5);
    await service.compact(id, () => true, strategy);
    await addTurns(2, 5000);
    await service.compact(id, () => true, strategy);
    expect((await summaries()).map(levelOf)).to.deep.equal([1, 5]);
    expect(client.requests[0]!.system).to.include('Be thorough.');
    expect(client.requests[1]!.system).to.include('Be brief.');
    expect(client.requests[1]!.maxTokens).to.equal(100);
  });

  it('over maxSummaryTokens it merges the oldest checkpoints first into a higher-level one and leaves the newer ones byte-identical', async function () {
    // Each pair costs 47 (shadow prompt) + 42 (summary) = 89; the cap of 300 holds three, not four.
    const answers = ['first chunk summary aaaaaaaaaaa', 'second chunk summary bbbbbbbbbb', 'third chunk summary ccccccccccc'];
    const client = new ScriptedChatClient([...answers, 'fourth chunk summary ddddddddd', 'merged 1+2']);
    const strategy = additive(client, { maxSummaryTokens: 300 });
    const { service, id, addTurns, summaries } = await newSession();
    for (let round = 0; round < 3; round++) {
      await addTurns(2);
      await service.compact(id, () => true, strategy);
    }
    const before = await summaries();
    expect(before).to.have.length(3);
    await addTurns(2);
    await service.compact(id, () => true, strategy);

    const merge = client.requests[4]!;
    expect(merge.user).to.include('first chunk summary').and.include('second chunk summary');
    expect(merge.user).to.not.include('third chunk summary');
    const after = await summaries();
    expect(texts(after)).to.deep.equal(['merged 1+2', answers[2], 'fourth chunk summary ddddddddd']);
    expect(after[0]!.metadata).to.deep.include({ checkpointLevel: 2, compactionOrdinal: 2, mergedCheckpoints: 2 });
    // The third checkpoint is untouched (same id, same bytes), the newest is the fourth compaction.
    expect(after[1]!.id).to.equal(before[2]!.id);
    expect(after[1]!.metadata).to.deep.equal(before[2]!.metadata);
    expect(ordinalOf(after[2]!)).to.equal(4);
    const coverage = await service.verifyCoverage(id);
    expect(coverage.ok).to.equal(true);
  });

  it("merge 'all' consolidates every checkpoint into one (the former behaviour)", async function () {
    const client = new ScriptedChatClient([
      'first chunk summary aaaaaaaaaaa',
      'second chunk summary bbbbbbbbbb',
      'third chunk summary ccccccccccc',
      'fourth chunk summary ddddddddd',
      'all merged',
    ]);
    const strategy = additive(client, { maxSummaryTokens: 300, merge: 'all' });
    const { service, id, addTurns, summaries } = await newSession();
    for (let round = 0; round < 4; round++) {
      await addTurns(2);
      await service.compact(id, () => true, strategy);
    }
    const after = await summaries();
    expect(texts(after)).to.deep.equal(['all merged']);
    expect(after[0]!.metadata).to.deep.include({ checkpointLevel: 2, mergedCheckpoints: 4, compactionOrdinal: 4 });
  });

  it('with recordCompactionStats the compaction count and cumulative savings are recorded in the session metadata', async function () {
    const strategy = additive(new ScriptedChatClient(['s']));
    const { service, id, addTurns } = await newSession({ recordCompactionStats: true });
    let saved = 0;
    for (let round = 0; round < 3; round++) {
      await addTurns(2);
      saved += (await service.compact(id, () => true, strategy)).tokensEstimatedSaved;
    }
    const stats = compactionStatsOf((await service.findById(id))!);
    expect(stats.count).to.equal(3);
    expect(stats.tokensSaved).to.equal(saved);
    expect(stats.eventsArchived).to.equal(3 * 4 - 2);
  });

  it('by default nothing is recorded; explicit stats hooks replace the option’s (counted once)', async function () {
    const strategy = additive(new ScriptedChatClient(['s']));
    const off = await newSession();
    await off.addTurns(2);
    await off.service.compact(off.id, () => true, strategy);
    expect(compactionStatsOf((await off.service.findById(off.id))!).count).to.equal(0);

    const own = await newSession({ recordCompactionStats: true });
    own.service.addCompactionHooks(compactionStatsHooks(own.service, () => new Date('2026-01-01T00:00:00.000Z')));
    await own.addTurns(2);
    await own.service.compact(own.id, () => true, strategy);
    const stats = compactionStatsOf((await own.service.findById(own.id))!);
    expect(stats).to.deep.include({ count: 1, lastCompactedAt: '2026-01-01T00:00:00.000Z' });
  });

  it('validates the level table and the merge mode', function () {
    const client = new ScriptedChatClient();
    expectThrows(() => additive(client, { compressionLevels: [] }), InvalidArgumentError, 'compressionLevels must not be empty');
    expectThrows(
      () =>
        additive(client, {
          compressionLevels: [
            { upToTokens: 500, level: 1 },
            { upToTokens: 100, level: 2 },
          ],
        }),
      InvalidArgumentError,
      'compressionLevels[1].upToTokens must be greater than compressionLevels[0].upToTokens (500)',
    );
    expectThrows(
      () => additive(client, { compressionLevels: [{ upToTokens: 5, level: 0 }] }),
      InvalidArgumentError,
      'compressionLevels[0].level must be an integer >= 1',
    );
    expectThrows(
      () => additive(client, { compressionLevels: [{ upToTokens: 5, level: 1, lengthShare: 2 }] }),
      InvalidArgumentError,
      'compressionLevels[0].lengthShare',
    );
    expectThrows(
      () => additive(client, { merge: 'newest' as never }),
      InvalidArgumentError,
      "merge must be 'oldest-first' or 'all'",
    );
    expect(DEFAULT_COMPRESSION_LEVELS.map((l) => l.upToTokens)).to.deep.equal([2000, 8000, Number.POSITIVE_INFINITY]);
  });
});
