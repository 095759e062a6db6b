import { expect } from 'chai';
import { CompactionProfileRegistry } from 'session-compaction';
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
