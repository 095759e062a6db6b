import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionRequest,
  InvalidArgumentError,
  type SessionEvent,
} from 'session-compaction';
import { estimateEventsTokens, type AdditiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import { oldestToMerge, type Checkpoint } from '../../../src/compaction/strategies/checkpoints.js';
import { A, CharEstimator, U, expectThrows, fixtureSession } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

const est = new CharEstimator();
const additive = (
  options: Partial<AdditiveSummarizationCompactionStrategyOptions> = {},
  client = new ScriptedChatClient(['s']),
) =>
  new AdditiveSummarizationCompactionStrategy({
    chatClient: client,
    maxSummaryTokens: 100_000,
    keepTurns: 1,
    tokenCountEstimator: est,
    logger: silentLogger,
    ...options,
  });

/** Checkpoints of the given costs, and the cost function that reads them. */
function priced(costs: number[]) {
  const byEvents = new Map<readonly SessionEvent[], number>();
  const checkpoints: Checkpoint[] = costs.map((c, i) => {
    const events: SessionEvent[] = [];
    byEvents.set(events, c);
    return { events, level: 1, ordinal: i + 1 };
  });
  return { checkpoints, cost: (events: readonly SessionEvent[]) => byEvents.get(events)! };
}

describe('checkpoints: the level table and how many checkpoints a merge takes', function () {
  it('refuses each malformed entry of the level table, naming it', function () {
    const bad: Array<[unknown, string]> = [
      [null, 'compressionLevels[0] must be an object'],
      ['level 1', 'compressionLevels[0] must be an object'],
      [{ upToTokens: 0, level: 1 }, 'compressionLevels[0].upToTokens must be a number greater than 0 (got 0)'],
      [{ upToTokens: '5', level: 1 }, 'compressionLevels[0].upToTokens must be a number greater than 0 (got "5")'],
      [{ upToTokens: 5, level: 1.5 }, 'compressionLevels[0].level must be an integer >= 1'],
      [{ upToTokens: 5, level: '1' }, 'compressionLevels[0].level must be an integer >= 1'],
      [{ upToTokens: 5, level: 1, instructions: 5 }, 'compressionLevels[0].instructions must be a string'],
      [{ upToTokens: 5, level: 1, lengthShare: 0 }, 'compressionLevels[0].lengthShare must be a number in (0, 1]'],
      [{ upToTokens: 5, level: 1, lengthShare: '0.5' }, 'compressionLevels[0].lengthShare must be a number in (0, 1]'],
    ];
    for (const [entry, message] of bad) {
      expectThrows(() => additive({ compressionLevels: [entry as never] }), InvalidArgumentError, message);
    }
    expectThrows(
      () =>
        additive({
          compressionLevels: [
            { upToTokens: 100, level: 1 },
            { upToTokens: 100, level: 2 },
          ],
        }),
      InvalidArgumentError,
      'compressionLevels[1].upToTokens must be greater than compressionLevels[0].upToTokens (100)',
    );
    expect(additive({ compressionLevels: [{ upToTokens: 5, level: 1, lengthShare: 1 }] }).compressionLevels).to.have.length(1);
  });

  it('a chunk of exactly upToTokens gets that level; one token more, the next', async function () {
    const chunk = [U('q1'), A('a1')];
    const size = estimateEventsTokens(chunk, est);
    const levelOf = async (upToTokens: number) => {
      const strategy = additive({
        compressionLevels: [
          { upToTokens, level: 1 },
          { upToTokens: Number.POSITIVE_INFINITY, level: 2 },
        ],
      });
      const result = await strategy.compact(CompactionRequest.of(fixtureSession(), [...chunk, U('q2'), A('a2')]));
      return result.compactedEvents[1]!.metadata.checkpointLevel;
    };
    expect(await levelOf(size)).to.equal(1);
    expect(await levelOf(size - 1)).to.equal(2);
  });

  it("caps a chunk summary at the level's share of maxChunkSummaryTokens", async function () {
    const client = new ScriptedChatClient(['s']);
    const strategy = additive(
      { maxChunkSummaryTokens: 100, compressionLevels: [{ upToTokens: 1_000_000, level: 1, lengthShare: 0.25 }] },
      client,
    );
    await strategy.compact(CompactionRequest.of(fixtureSession(), [U('q1'), A('a1'), U('q2'), A('a2')]));
    expect(client.requests[0]!.maxTokens).to.equal(25);
  });

  describe('oldestToMerge: as few of the oldest checkpoints as bring the total under the cap', function () {
    // Costs 40, 60, 80, 100 (total 280), shadow prompt 10: merging the first k leaves the rest, plus the
    // expected merged summary (the shadow prompt and half of the merged texts, at most mergeCap).
    const limits = { shadowTokens: 10, mergeCap: 1000 };

    it('merges two when two bring the total to exactly the cap', function () {
      const { checkpoints, cost } = priced([40, 60, 80, 100]);
      // k = 2: 180 left + 10 + (100 - 20) / 2 = 230.
      expect(oldestToMerge(checkpoints, cost, { ...limits, maxTokens: 230 })).to.deep.equal({ count: 2, maxTokens: 40 });
    });

    it('merges three when two leave the total one token over the cap; the merged summary gets what the rest leave', function () {
      const { checkpoints, cost } = priced([40, 60, 80, 100]);
      // k = 3: 100 left + 10 + (180 - 30) / 2 = 185; its output cap is 229 - 100 - 10.
      expect(oldestToMerge(checkpoints, cost, { ...limits, maxTokens: 229 })).to.deep.equal({ count: 3, maxTokens: 119 });
    });

    it('the merged summary is never expected, nor allowed, above mergeCap', function () {
      const { checkpoints, cost } = priced([40, 60, 80, 100]);
      // k = 2: 180 + 10 + min(20, 40) = 210.
      expect(oldestToMerge(checkpoints, cost, { shadowTokens: 10, mergeCap: 20, maxTokens: 229 })).to.deep.equal({
        count: 2,
        maxTokens: 20,
      });
    });

    it('merges all of them when no smaller number fits, and never fewer than two', function () {
      const tight = priced([40, 60, 80, 100]);
      expect(oldestToMerge(tight.checkpoints, tight.cost, { ...limits, maxTokens: 50 })).to.deep.equal({
        count: 4,
        maxTokens: 40,
      });
      const one = priced([1000, 1, 1]);
      expect(oldestToMerge(one.checkpoints, one.cost, { ...limits, maxTokens: 5000 }).count).to.equal(2);
    });
  });
});
