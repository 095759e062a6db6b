import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CacheAwareTrigger,
  CompactionProfileRegistry,
  ContextWindowTrigger,
  IllegalStateError,
  InvalidArgumentError,
  PressureBandCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
} from 'session-compaction';
import type { CompactionProfile } from 'session-compaction/spi';
import { expectThrows } from '../../support/fixtures.js';
import { ScriptedChatClient } from '../../summarization/support.js';

const context = { contextWindowTokens: 10_000, chatClient: new ScriptedChatClient() };

describe('CompactionProfileRegistry', function () {
  it('knows the six built-in profiles', function () {
    expect(CompactionProfileRegistry.withBuiltIns().names()).to.deep.equal([
      'sliding-window',
      'token-budget',
      'recursive',
      'additive',
      'cache-aware',
      'pressure-bands',
    ]);
  });

  it('builds each built-in into its trigger and strategy, sized for the context window', function () {
    const registry = CompactionProfileRegistry.withBuiltIns();
    const sliding = registry.create('sliding-window', context, { options: { maxEvents: 7 } });
    expect(sliding.profile).to.equal('sliding-window');
    expect(sliding.compactionTrigger).to.be.instanceOf(ContextWindowTrigger);
    expect((sliding.compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(7);
    const budget = registry.create('token-budget', context);
    expect((budget.compactionStrategy as TokenCountCompactionStrategy).maxTokens).to.equal(5000);
    expect(registry.create('recursive', context).compactionStrategy).to.be.instanceOf(RecursiveSummarizationCompactionStrategy);
    expect(registry.create('additive', context).compactionStrategy).to.be.instanceOf(AdditiveSummarizationCompactionStrategy);
    const cache = registry.create('cache-aware', context);
    expect(cache.compactionTrigger).to.be.instanceOf(CacheAwareTrigger);
    expect(cache.compactBeforeCall).to.equal(true);
    const bands = registry.create('pressure-bands', context);
    expect(bands.compactionStrategy).to.be.instanceOf(PressureBandCompactionStrategy);
    expect((bands.compactionStrategy as PressureBandCompactionStrategy).bands.map((b) => b.name)).to.deep.equal([
      'mask',
      'strip',
      'summarize',
      'truncate',
    ]);
  });

  it('passes trigger settings to the ContextWindowTrigger', function () {
    const setup = CompactionProfileRegistry.withBuiltIns().create('sliding-window', context, {
      trigger: { thresholdRatio: 0.5, reserveTokens: 1000 },
    });
    expect((setup.compactionTrigger as ContextWindowTrigger).thresholdTokens).to.equal(4500);
  });

  it('pressure-bands takes its thresholds from options, and summarises only with a chat client', function () {
    const registry = CompactionProfileRegistry.withBuiltIns();
    const setup = registry.create(
      'pressure-bands',
      { contextWindowTokens: 10_000 },
      { options: { thresholds: { mask: 0.6, strip: 0.7 } } },
    );
    const strategy = setup.compactionStrategy as PressureBandCompactionStrategy;
    expect(strategy.bands.map((b) => [b.name, b.threshold])).to.deep.equal([
      ['mask', 0.6],
      ['strip', 0.7],
      ['truncate', 0.99],
    ]);
    expect(setup.compactionTrigger).to.equal(strategy.trigger);
    expectThrows(
      () => registry.create('pressure-bands', context, { trigger: { thresholdRatio: 0.5 } }),
      InvalidArgumentError,
      'set options.thresholds.mask instead of trigger.thresholdRatio',
    );
  });

  it('a summarising profile without a chat client says so', function () {
    expectThrows(
      () => CompactionProfileRegistry.withBuiltIns().create('recursive', { contextWindowTokens: 10_000 }),
      IllegalStateError,
      "profile 'recursive' summarises: it needs a chat client",
    );
  });

  it('refuses an unknown profile, listing the known ones', function () {
    expectThrows(
      () => CompactionProfileRegistry.withBuiltIns().get('heavy'),
      InvalidArgumentError,
      "Unknown compaction profile 'heavy' (known: sliding-window, token-budget",
    );
  });

  it('refuses an unknown option instead of ignoring it', function () {
    expectThrows(
      () => CompactionProfileRegistry.withBuiltIns().create('sliding-window', context, { options: { maxEvent: 3 } }),
      InvalidArgumentError,
      "unknown option 'maxEvent' for profile 'sliding-window' (known: maxEvents, cutWithinTurn)",
    );
  });

  it('define: a named variant with fixed settings; settings given at create time win', function () {
    const registry = CompactionProfileRegistry.withBuiltIns().define('short', {
      use: 'sliding-window',
      options: { maxEvents: 4 },
      trigger: { thresholdRatio: 0.5 },
    });
    const fixed = registry.create('short', context);
    expect((fixed.compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(4);
    expect((fixed.compactionTrigger as ContextWindowTrigger).thresholdRatio).to.equal(0.5);
    const over = registry.create('short', context, { options: { maxEvents: 9 } });
    expect((over.compactionStrategy as SlidingWindowCompactionStrategy).maxEvents).to.equal(9);
    expect((over.compactionTrigger as ContextWindowTrigger).thresholdRatio).to.equal(0.5);
  });

  it('register: a profile of your own; a taken name is refused unless replace is set', function () {
    const mine: CompactionProfile = {
      name: 'keep-two',
      description: 'two events',
      needsChatClient: false,
      optionNames: [],
      create: (ctx) => ({
        compactionTrigger: new ContextWindowTrigger({ contextWindowTokens: ctx.contextWindowTokens }),
        compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
      }),
    };
    const registry = CompactionProfileRegistry.withBuiltIns().register(mine);
    expect(registry.create('keep-two', context).profile).to.equal('keep-two');
    expectThrows(
      () => registry.register(mine),
      InvalidArgumentError,
      "a compaction profile named 'keep-two' is already registered",
    );
    registry.register({ ...mine, description: 'replaced' }, { replace: true });
    expect(registry.get('keep-two').description).to.equal('replaced');
    expectThrows(() => registry.register({ ...mine, name: 'bad name!' }), InvalidArgumentError, "profile name 'bad name!'");
  });
});
