import { expect } from 'chai';
import {
  CompactionPipeline,
  InvalidArgumentError,
  ObservationMaskingCompactionStrategy,
  PressureBandCompactionStrategy,
  createDefaultLogger,
  defaultTokenCountEstimator,
} from 'session-compaction';
import type { StrategyContender } from '../../benchmarks/src/registry/ContenderRegistry.js';
import { createDefaultContenderRegistry } from '../../benchmarks/src/registry/defaultContenders.js';
import { expectThrows } from '../support/fixtures.js';

const context = {
  budgetTokens: 4000,
  estimator: defaultTokenCountEstimator(),
  logger: createDefaultLogger({ level: 'error' }),
  chatClient: { call: async () => 'summary' },
  now: () => new Date(0),
};

describe('bench: cache-aware masking contenders', function () {
  const create = async (name: string, options: Record<string, unknown> = {}) => {
    const registry = await createDefaultContenderRegistry();
    return (registry.get(name) as StrategyContender).create(context, options).strategy;
  };

  it('masking-pipeline masks, then cuts to 0.6 of the budget', async function () {
    const strategy = (await create('masking-pipeline')) as CompactionPipeline;
    expect(strategy).to.be.instanceOf(CompactionPipeline);
    expect(strategy.maxTokens).to.equal(2400);
    expect(strategy.stages[0]).to.be.instanceOf(ObservationMaskingCompactionStrategy);
    expect(strategy.deferral.minSavedTokens).to.equal(0);
  });

  it('minSavedRatio becomes minSavedTokens, a share of the budget, on masking, pipelines and pressure bands', async function () {
    const masking = (await create('observation-masking', { minSavedRatio: 0.2 })) as ObservationMaskingCompactionStrategy;
    expect(masking.deferral.minSavedTokens).to.equal(800);
    const pipeline = (await create('pipeline', { minSavedRatio: 0.25, cacheTtlMs: 60_000 })) as CompactionPipeline;
    expect(pipeline.deferral).to.include({ minSavedTokens: 1000, cacheTtlMs: 60_000 });
    const bands = (await create('pressure-bands', { minSavedRatio: 0.1 })) as PressureBandCompactionStrategy;
    expect(bands).to.be.instanceOf(PressureBandCompactionStrategy);
    expect(((await create('observation-masking')) as ObservationMaskingCompactionStrategy).deferral.minSavedTokens).to.equal(0);
  });

  it('maskToolResults turns the cache-aware profile into a masking pipeline and takes no strategy options', async function () {
    const strategy = await create('token-count-cache-aware', { maskToolResults: true });
    expect(strategy).to.be.instanceOf(CompactionPipeline);
    expect((strategy as CompactionPipeline).maxTokens).to.equal(2400);
    const registry = await createDefaultContenderRegistry();
    expectThrows(
      () =>
        (registry.get('token-count-cache-aware') as StrategyContender).create(context, { maskToolResults: true, maxTokens: 10 }),
      InvalidArgumentError,
      'maskToolResults takes no strategy options',
    );
  });
});
