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
import type { CompactionProfile, ProfileSettings } from 'session-compaction/spi';
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

  describe('refusals', function () {
    const mine: CompactionProfile = {
      name: 'keep-two',
      description: 'two events',
      needsChatClient: false,
      optionNames: [],
      create: () => ({
        compactionTrigger: new ContextWindowTrigger({ contextWindowTokens: 1000 }),
        compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
      }),
    };

    it('register refuses a profile that is not an object, has no create function or lists no optionNames', function () {
      const registry = new CompactionProfileRegistry();
      expectThrows(() => registry.register(null as never), InvalidArgumentError, 'profile must not be null');
      expectThrows(() => registry.register('sliding-window' as never), InvalidArgumentError, 'profile must not be null');
      expectThrows(
        () => registry.register({ ...mine, create: undefined as never }),
        InvalidArgumentError,
        "profile 'keep-two' must have a create function",
      );
      expectThrows(
        () => registry.register({ ...mine, optionNames: undefined as never }),
        InvalidArgumentError,
        "profile 'keep-two' must list its optionNames",
      );
      expect(registry.names()).to.deep.equal([]);
    });

    it('register refuses a blank name and one that does not start with a letter or digit', function () {
      const registry = new CompactionProfileRegistry();
      expectThrows(() => registry.register({ ...mine, name: ' ' }), InvalidArgumentError, 'name must not be null or empty');
      for (const name of ['-x', '.hidden', '_x']) {
        expectThrows(() => registry.register({ ...mine, name }), InvalidArgumentError, `profile name '${name}'`);
      }
      expect(registry.register({ ...mine, name: 'v1.2_x-y' }).has('v1.2_x-y')).to.equal(true);
    });

    it('register with null options refuses a taken name as without options', function () {
      const registry = new CompactionProfileRegistry().register(mine);
      expectThrows(() => registry.register(mine, null as never), InvalidArgumentError, 'is already registered');
    });

    it('define refuses a missing or non-object definition', function () {
      const registry = CompactionProfileRegistry.withBuiltIns();
      expectThrows(() => registry.define('x', null as never), InvalidArgumentError, 'definition must not be null');
      expectThrows(() => registry.define('x', 'sliding-window' as never), InvalidArgumentError, 'definition must not be null');
      expect(registry.has('x')).to.equal(false);
    });

    it('create refuses a missing or non-object context', function () {
      const registry = CompactionProfileRegistry.withBuiltIns();
      expectThrows(() => registry.create('sliding-window', null as never), InvalidArgumentError, 'context must not be null');
      expectThrows(() => registry.create('sliding-window', 10_000 as never), InvalidArgumentError, 'context must not be null');
    });

    it('an option given to a profile that takes none is refused, listing none', function () {
      expectThrows(
        () => new CompactionProfileRegistry().register(mine).create('keep-two', context, { options: { maxEvents: 3 } }),
        InvalidArgumentError,
        "unknown option 'maxEvents' for profile 'keep-two' (known: none)",
      );
    });
  });

  it('has tells whether a name is registered', function () {
    const registry = CompactionProfileRegistry.withBuiltIns();
    expect(registry.has('recursive')).to.equal(true);
    expect(registry.has('heavy')).to.equal(false);
  });

  it('define: a variant is described after its base unless it brings its own description', function () {
    const registry = CompactionProfileRegistry.withBuiltIns()
      .define('short', { use: 'sliding-window', options: { maxEvents: 4 } })
      .define('tiny', { use: 'sliding-window', description: 'Keep four events.' });
    expect(registry.get('short').description).to.equal(
      `${registry.get('sliding-window').description} (short: based on 'sliding-window')`,
    );
    expect(registry.get('tiny').description).to.equal('Keep four events.');
  });

  it('define: a variant that fixes nothing hands the settings given at create time to its base unchanged', function () {
    const seen: ProfileSettings[] = [];
    const recording: CompactionProfile = {
      name: 'recording',
      description: 'records its settings',
      needsChatClient: false,
      optionNames: ['depth'],
      create: (ctx, settings) => {
        seen.push(settings);
        return {
          compactionTrigger: new ContextWindowTrigger({ contextWindowTokens: ctx.contextWindowTokens }),
          compactionStrategy: new SlidingWindowCompactionStrategy(),
        };
      },
    };
    const registry = new CompactionProfileRegistry().register(recording).define('plain', { use: 'recording' });
    registry.create('plain', context);
    registry.create('plain', context, { options: { depth: 2 } });
    registry.create('plain', context, { trigger: { minTokens: 10 } });
    expect(seen).to.deep.equal([{}, { options: { depth: 2 } }, { trigger: { minTokens: 10 } }]);
  });
});
