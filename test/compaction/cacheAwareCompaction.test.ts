import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CacheAwareTrigger,
  CompactionPipeline,
  InvalidArgumentError,
  ObservationMaskingCompactionStrategy,
  TokenCountCompactionStrategy,
  cacheAwareCompaction,
} from 'session-compaction';
import { A, CharEstimator, U, compactionRequest, expectThrows } from '../support/fixtures.js';
import { call, long, result } from '../support/beyondEvents.js';
import { ScriptedChatClient } from '../summarization/support.js';

describe('cacheAwareCompaction profile', () => {
  it('with a summariser: appended summaries up to 0.35 of the budget, whole turns up to 0.5, cold compaction from 0.85', () => {
    const profile = cacheAwareCompaction({ budgetTokens: 8000, chatClient: new ScriptedChatClient(), cacheTtlMs: 60_000 });
    expect(profile.compactBeforeCall).to.equal(true);
    expect(profile.compactionTrigger).to.be.instanceOf(CacheAwareTrigger);
    expect(profile.compactionTrigger).to.include({ maxTokens: 8000, coldTokens: 6800, cacheTtlMs: 60_000 });
    const strategy = profile.compactionStrategy as AdditiveSummarizationCompactionStrategy;
    expect(strategy).to.be.instanceOf(AdditiveSummarizationCompactionStrategy);
    expect(strategy).to.include({ maxKeptTokens: 4000, maxSummaryTokens: 2800, keepTurns: Number.MAX_SAFE_INTEGER });
  });

  it('without a summariser: a token-count cut to 0.8 of the budget, cold compaction from there', () => {
    const profile = cacheAwareCompaction({ budgetTokens: 4000 });
    expect(profile.compactionStrategy).to.be.instanceOf(TokenCountCompactionStrategy);
    expect((profile.compactionStrategy as TokenCountCompactionStrategy).maxTokens).to.equal(3200);
    expect(profile.compactionTrigger).to.include({ maxTokens: 4000, coldTokens: 3200 });
  });

  it('with maskToolResults: masks consumed tool results, then cuts to 0.6 of the budget, in one step', async () => {
    const profile = cacheAwareCompaction({ budgetTokens: 1000, maskToolResults: true, tokenCountEstimator: new CharEstimator() });
    const pipeline = profile.compactionStrategy as CompactionPipeline;
    expect(pipeline).to.be.instanceOf(CompactionPipeline);
    expect(pipeline.maxTokens).to.equal(600);
    expect(pipeline.stages[0]).to.be.instanceOf(ObservationMaskingCompactionStrategy);
    expect((pipeline.stages[1] as TokenCountCompactionStrategy).maxTokens).to.equal(600);
    expect(profile.compactionTrigger).to.include({ maxTokens: 1000, coldTokens: 600 });
    // A window whose consumed result masks down under the target is masked, not cut.
    const window = [U('go'), call('c1'), result('c1', long('out', 1200)), A('read it')];
    const r = await pipeline.compact(compactionRequest(window));
    expect(r.compactedEvents).to.have.length(4);
    expect(r.archivedEvents.map((e) => e.id)).to.deep.equal([window[2]!.id]);
  });

  it('refuses shares that do not fit the budget', () => {
    const chatClient = new ScriptedChatClient();
    expectThrows(
      () => cacheAwareCompaction({ budgetTokens: 100, chatClient, keptRatio: 0.7, summaryRatio: 0.4 }),
      InvalidArgumentError,
      'keptRatio + summaryRatio must not exceed 1',
    );
    expectThrows(
      () => cacheAwareCompaction({ budgetTokens: 100, coldRatio: 1.5 }),
      InvalidArgumentError,
      'coldRatio must be in (0, 1]',
    );
    expectThrows(() => cacheAwareCompaction({ budgetTokens: 0 }), InvalidArgumentError, 'budgetTokens must be greater than 0');
  });
});
