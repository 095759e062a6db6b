import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionPipeline,
  InvalidArgumentError,
  ObservationMaskingCompactionStrategy,
  TokenCountCompactionStrategy,
  cacheAwareCompaction,
} from 'session-compaction';
import { DEFAULT_PROMPT_CACHE_TTL_MS } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, event, expectThrows } from '../support/fixtures.js';
import { ScriptedChatClient } from '../summarization/support.js';
import { Messages } from 'session-compaction';

describe('cacheAwareCompaction: options and their bounds', function () {
  it('refuses missing options', function () {
    expectThrows(
      () => cacheAwareCompaction(null as unknown as Parameters<typeof cacheAwareCompaction>[0]),
      InvalidArgumentError,
      'options must not be null',
    );
  });

  it('takes each share in (0, 1]: 1 is fine, 0, more than 1 or a non-number are refused, by name', function () {
    const chatClient = new ScriptedChatClient();
    for (const name of ['keptRatio', 'summaryRatio', 'coldRatio'] as const) {
      for (const bad of [0, 1.01, '0.5', NaN]) {
        expectThrows(
          () => cacheAwareCompaction({ budgetTokens: 1000, chatClient, keptRatio: 0.1, summaryRatio: 0.1, [name]: bad }),
          InvalidArgumentError,
          `${name} must be in (0, 1]`,
        );
      }
    }
    const full = cacheAwareCompaction({ budgetTokens: 1000, keptRatio: 1, coldRatio: 1 });
    expect((full.compactionStrategy as TokenCountCompactionStrategy).maxTokens).to.equal(1000);
  });

  it('kept and summary shares may fill the whole budget, and then a cold cache counts only at the full budget', function () {
    const profile = cacheAwareCompaction({
      budgetTokens: 1000,
      chatClient: new ScriptedChatClient(),
      keptRatio: 0.6,
      summaryRatio: 0.4,
    });
    expect(profile.compactionTrigger).to.include({ maxTokens: 1000, coldTokens: 1000 });
  });

  it('never sizes a share below one token, however small the budget', function () {
    const profile = cacheAwareCompaction({ budgetTokens: 1, chatClient: new ScriptedChatClient() });
    expect(profile.compactionStrategy as AdditiveSummarizationCompactionStrategy).to.include({
      maxKeptTokens: 1,
      maxSummaryTokens: 1,
    });
    expect(profile.compactionTrigger).to.include({ coldTokens: 1 });
  });

  it("defaults the cache lifetime to the providers' five minutes, and reads time from `now`", async function () {
    expect(cacheAwareCompaction({ budgetTokens: 100 }).compactionTrigger.cacheTtlMs).to.equal(DEFAULT_PROMPT_CACHE_TTL_MS);
    const answered = new Date('2026-01-01T00:00:00Z');
    const events = [U('q'), event(Messages.assistant('a'), { timestamp: answered })];
    const at = (ms: number) =>
      cacheAwareCompaction({
        budgetTokens: 100,
        coldRatio: 0.01,
        cacheTtlMs: 1000,
        now: () => new Date(answered.getTime() + ms),
      });
    expect(await at(999).compactionTrigger.shouldCompact(compactionRequest(events))).to.equal(false);
    expect(await at(1001).compactionTrigger.shouldCompact(compactionRequest(events))).to.equal(true);
  });

  it('counts with the estimator given, in the trigger and in the strategy', async function () {
    const estimator = new CharEstimator();
    const profile = cacheAwareCompaction({ budgetTokens: 10, tokenCountEstimator: estimator });
    expect((profile.compactionStrategy as TokenCountCompactionStrategy).tokenCountEstimator).to.equal(estimator);
    // Two short events cost more than 10 characters: the trigger fires on the character count.
    expect(await profile.compactionTrigger.shouldCompact(compactionRequest([U('question'), A('answer')]))).to.equal(true);
    const summarising = cacheAwareCompaction({
      budgetTokens: 10,
      tokenCountEstimator: estimator,
      chatClient: new ScriptedChatClient(),
    });
    expect((summarising.compactionStrategy as AdditiveSummarizationCompactionStrategy).tokenCountEstimator).to.equal(estimator);
  });

  it('refuses undefined options as it refuses null', function () {
    expectThrows(
      () => cacheAwareCompaction(undefined as unknown as Parameters<typeof cacheAwareCompaction>[0]),
      InvalidArgumentError,
      'options must not be null',
    );
  });

  it('takes maskToolResults as a boolean or { maxChars }, and refuses anything else', function () {
    for (const bad of ['yes', 5]) {
      expectThrows(
        () => cacheAwareCompaction({ budgetTokens: 1000, maskToolResults: bad as never }),
        InvalidArgumentError,
        'maskToolResults must be a boolean or { maxChars }',
      );
    }
    const maskStage = (maskToolResults: boolean | { maxChars?: number }) =>
      (cacheAwareCompaction({ budgetTokens: 1000, maskToolResults }).compactionStrategy as CompactionPipeline)
        .stages[0] as ObservationMaskingCompactionStrategy;
    expect(maskStage({ maxChars: 500 }).maxChars).to.equal(500);
    expect(maskStage({}).maxChars).to.equal(ObservationMaskingCompactionStrategy.DEFAULT_MAX_CHARS);
    expect(maskStage(true).maxChars).to.equal(ObservationMaskingCompactionStrategy.DEFAULT_MAX_CHARS);
  });

  it('with masking, masks with the estimator given and stops once the window is at kept plus summary shares', function () {
    const estimator = new CharEstimator();
    const pipeline = cacheAwareCompaction({
      budgetTokens: 10_000,
      tokenCountEstimator: estimator,
      chatClient: new ScriptedChatClient(),
      maskToolResults: true,
    }).compactionStrategy as CompactionPipeline;
    expect((pipeline.stages[0] as ObservationMaskingCompactionStrategy).tokenCountEstimator).to.equal(estimator);
    // Kept 50 % + summaries 35 % of the budget.
    expect(pipeline.maxTokens).to.equal(8500);
  });

  it('reports a failed summary to the logger given', async function () {
    const warnings: string[] = [];
    const logger = { error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) };
    const { compactionStrategy } = cacheAwareCompaction({
      budgetTokens: 40,
      tokenCountEstimator: new CharEstimator(),
      chatClient: new ScriptedChatClient([new Error('down')]),
      logger,
    });
    const events = [U('first question'), A('first answer'), U('second question'), A('second answer'), U('third')];
    await compactionStrategy.compact(compactionRequest(events));
    expect(warnings).to.include('summarization failed; no events lost');
  });
});
