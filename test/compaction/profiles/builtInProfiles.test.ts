import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionProfileRegistry,
  IllegalStateError,
  PressureBandCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  TokenCountCompactionStrategy,
} from 'session-compaction';
import { CharEstimator, compactionRequest, expectThrows, msgs } from '../../support/fixtures.js';
import { ScriptedChatClient } from '../../summarization/support.js';

/** A valid value for every option a built-in profile lists. */
const VALUES: Readonly<Record<string, unknown>> = {
  maxEvents: 5,
  cutWithinTurn: 'never',
  maxTokens: 100,
  maxEventsToKeep: 5,
  overlapSize: 1,
  maxSummaryTokens: 100,
  updatePrompt: 'Update the summary.',
  systemPrompt: 'Summarise.',
  shadowPrompt: 'Summary so far?',
  failureMode: 'stub',
  summarizeFrom: 'window',
  keepTurns: 2,
  maxKeptTokens: 100,
  maxChunkSummaryTokens: 50,
  consolidationPrompt: 'Merge these summaries.',
  compressionLevels: [{ upToTokens: 10, level: 1 }],
  merge: 'all',
  keptRatio: 0.5,
  summaryRatio: 0.3,
  coldRatio: 0.8,
  cacheTtlMs: 1000,
  thresholds: { mask: 0.8 },
  emergencyTargetRatio: 0.5,
  maskToolResults: true,
  minSavedTokens: 100,
};

describe('the built-in compaction profiles', function () {
  const registry = CompactionProfileRegistry.withBuiltIns();
  const context = { contextWindowTokens: 10_000, chatClient: new ScriptedChatClient() };

  it('each describes itself, and says whether it needs a summariser', function () {
    const needs = registry.names().map((name) => {
      expect(registry.get(name).description.trim(), name).to.not.equal('');
      return [name, registry.get(name).needsChatClient];
    });
    expect(Object.fromEntries(needs)).to.deep.equal({
      'sliding-window': false,
      'token-budget': false,
      recursive: true,
      additive: true,
      'cache-aware': false,
      'pressure-bands': false,
    });
  });

  it('each accepts every option it lists', function () {
    for (const name of registry.names()) {
      const profile = registry.get(name);
      expect(profile.optionNames.length, name).to.be.above(0);
      for (const option of profile.optionNames) {
        expect(VALUES, `a value for ${option}`).to.have.property(option);
        expect(
          () => registry.create(name, context, { options: { [option]: VALUES[option] } }),
          `${name}: ${option}`,
        ).to.not.throw();
      }
    }
  });
});

describe('the built-in compaction profiles and their context', function () {
  const registry = CompactionProfileRegistry.withBuiltIns();
  const estimator = new CharEstimator();
  const context = { contextWindowTokens: 10_000, chatClient: new ScriptedChatClient(), tokenCountEstimator: estimator };

  it("size triggers and strategies with the context's token estimator", function () {
    const estimatorOf = (x: unknown) => (x as { tokenCountEstimator?: unknown }).tokenCountEstimator;
    for (const name of ['sliding-window', 'token-budget', 'recursive', 'additive']) {
      const setup = registry.create(name, context);
      expect(estimatorOf(setup.compactionTrigger), `${name} trigger`).to.equal(estimator);
      expect(estimatorOf(setup.compactionStrategy), `${name} strategy`).to.equal(estimator);
    }
    const bands = registry.create('pressure-bands', context);
    expect(estimatorOf(bands.compactionTrigger)).to.equal(estimator);
    const summarize = (bands.compactionStrategy as PressureBandCompactionStrategy).bands.find((b) => b.name === 'summarize');
    expect(estimatorOf(summarize!.strategy)).to.equal(estimator);
  });

  it("a summarising profile reports a failed summary to the context's logger", async function () {
    const warnings: string[] = [];
    const logger = { error() {}, info() {}, debug() {}, warn: (message: string) => void warnings.push(message) };
    const setup = registry.create(
      'recursive',
      { contextWindowTokens: 10_000, chatClient: new ScriptedChatClient([new Error('down')]), logger },
      { options: { maxEventsToKeep: 2, overlapSize: 0 } },
    );
    const r = await setup.compactionStrategy.compact(compactionRequest(msgs(6)));
    expect(r.isNoop()).to.equal(true);
    expect(warnings).to.include('summarization failed; no events lost');
  });

  it('additive keeps its summaries within 15 % of the window by default', function () {
    const setup = registry.create('additive', context);
    expect((setup.compactionStrategy as AdditiveSummarizationCompactionStrategy).maxSummaryTokens).to.equal(1500);
  });

  it('additive without a chat client says it needs one, by name', function () {
    expectThrows(
      () => registry.create('additive', { contextWindowTokens: 10_000 }),
      IllegalStateError,
      "profile 'additive' summarises: it needs a chat client",
    );
  });

  it('cache-aware appends summaries with a chat client and cuts without one', function () {
    expect(registry.create('cache-aware', context).compactionStrategy).to.be.instanceOf(AdditiveSummarizationCompactionStrategy);
    expect(registry.create('cache-aware', { contextWindowTokens: 10_000 }).compactionStrategy).to.be.instanceOf(
      TokenCountCompactionStrategy,
    );
  });

  it("pressure-bands passes maxEventsToKeep and overlapSize to its summarise band's strategy", function () {
    const setup = registry.create('pressure-bands', context, { options: { maxEventsToKeep: 5, overlapSize: 1 } });
    const band = (setup.compactionStrategy as PressureBandCompactionStrategy).bands.find((b) => b.name === 'summarize');
    expect(band!.strategy).to.be.instanceOf(RecursiveSummarizationCompactionStrategy);
    expect(band!.strategy).to.include({ maxEventsToKeep: 5, overlapSize: 1 });
  });
});
