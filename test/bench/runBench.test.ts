import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyConfigFile,
  expandEnvironment,
  fullConfig,
  participantNames,
  quickConfig,
  resolvePricing,
} from '../../benchmarks/src/BenchConfig.js';
import { createDefaultContenderRegistry } from '../../benchmarks/src/registry/defaultContenders.js';
import { checkContenderOptions } from '../../benchmarks/src/registry/ContenderRegistry.js';
import { writeReport } from '../../benchmarks/src/report/writeReport.js';
import { cheapestAtEqualAnswer, renderMarkdown } from '../../benchmarks/src/report/renderMarkdown.js';
import { runBench } from '../../benchmarks/src/runBench.js';
import { growthFactors, type ScalingPoint } from '../../benchmarks/src/scaling/runScaling.js';
import { createDefaultLogger, defaultTokenCountEstimator, InvalidArgumentError } from 'session-compaction';
import { rejection } from '../support/rejection.js';

const SAMPLE = new URL('../../benchmarks/data/recorded-sample.json', import.meta.url).pathname;

describe('bench: config', () => {
  it('rejects unknown keys in a config file, naming them', () => {
    expect(() => applyConfigFile(fullConfig([], 'out'), { budget: [1000] }, 'bench.json')).to.throw(
      /bench.json: unknown keys budget/,
    );
  });

  it('reads $RECORDED_DIR in a data path from the environment, so a saved configuration runs elsewhere', () => {
    expect(expandEnvironment('$RECORDED_DIR', 'c.json: data', { RECORDED_DIR: '/data/rec' })).to.equal('/data/rec');
    expect(expandEnvironment('${RECORDED_DIR}/locomo', 'c.json: data', { RECORDED_DIR: '/r' })).to.equal('/r/locomo');
    expect(expandEnvironment('plain/path', 'c.json: data', {})).to.equal('plain/path');
  });

  it('names the unset variable a data path needs instead of reading a directory called "$RECORDED_DIR"', () => {
    expect(() => expandEnvironment('$RECORDED_DIR', 'c.json: data', {})).to.throw(
      /c.json: data names \$RECORDED_DIR, which is not set/,
    );
  });

  it('reads the LoCoMo rendering switches, and refuses a switch that is not a boolean', () => {
    const config = applyConfigFile(fullConfig([], 'out'), { locomoSpeakerNames: true, locomoDateHeaders: true }, 'bench.json');
    expect(config).to.include({ locomoSpeakerNames: true, locomoDateHeaders: true });
    expect(fullConfig([], 'out').locomoSpeakerNames).to.equal(false);
    expect(() => applyConfigFile(fullConfig([], 'out'), { locomoSpeakerNames: 'yes' }, 'bench.json')).to.throw(
      'bench.json: locomoSpeakerNames must be a boolean',
    );
  });

  it("replays speakers as the message's name unless turned off or already written into the text", () => {
    const base = fullConfig([], 'out');
    expect(participantNames(base)).to.equal(true);
    expect(participantNames(applyConfigFile(base, { participantNames: false }, 'bench.json'))).to.equal(false);
    expect(participantNames({ ...base, locomoSpeakerNames: true })).to.equal(false);
    expect(participantNames({ ...base, locomoSpeakerNames: true, participantNames: true })).to.equal(true);
    expect(() => applyConfigFile(base, { participantNames: 1 }, 'bench.json')).to.throw(
      'bench.json: participantNames must be a boolean',
    );
  });

  it('reads contenders as names or {name, label, options}', () => {
    const config = applyConfigFile(
      fullConfig([], 'out'),
      {
        contenders: ['none', { name: 'token-count', label: 'token-count-80', options: { targetRatio: 0.8 } }],
        budgets: [2000],
        scaling: null,
      },
      'bench.json',
    );
    expect(config.contenders).to.deep.equal([
      { name: 'none' },
      { name: 'token-count', label: 'token-count-80', options: { targetRatio: 0.8 } },
    ]);
    expect(config.budgets).to.deep.equal([2000]);
    expect(config.scaling).to.equal(null);
  });

  it('reads pricing as preset names or user tables, and names the known presets for an unknown one', () => {
    const table = {
      name: 'my-model',
      prices: { inputPerMTok: 1, outputPerMTok: 2 },
      cache: { mode: 'automatic', minCacheableTokens: 0, incrementTokens: 1, ttlMs: 60_000 },
    };
    const config = applyConfigFile(fullConfig([], 'out'), { pricing: ['openai-gpt-5', table] }, 'bench.json');
    expect(resolvePricing(config.pricing).map((p) => [p.name, p.provider, p.asOf])).to.deep.equal([
      ['openai-gpt-5', 'openai', '2025-08-07'],
      ['my-model', 'custom', 'user-supplied'],
    ]);
    expect(() => applyConfigFile(fullConfig([], 'out'), { pricing: ['gpt-9'] }, 'bench.json')).to.throw(
      /bench.json: unknown provider preset 'gpt-9'; known: openai-gpt-4o/,
    );
    expect(() =>
      applyConfigFile(fullConfig([], 'out'), { pricing: [{ ...table, cache: { ...table.cache, mode: 'lru' } }] }, 'bench.json'),
    ).to.throw(/pricing\[0\].cache.mode must be 'automatic' or 'breakpoint'/);
  });

  it('names every registered contender in the error for an unknown one', async () => {
    const registry = await createDefaultContenderRegistry();
    expect(() => registry.get('magic')).to.throw(/unknown strategy or peer 'magic'; known: none, sliding-window/);
    expect(() => registry.get('librechat-prune')).to.throw(/requires Node >= 24/);
  });

  it('refuses a contender option the contender does not read, before any replay, naming the ones it reads', async () => {
    const out = mkdtempSync(join(tmpdir(), 'bench-options-'));
    try {
      const config = {
        ...quickConfig([SAMPLE], out),
        contenders: [{ name: 'none' }, { name: 'token-count', options: { targetRatoi: 0.4 } }],
        scaling: null,
      };
      const started = Date.now();
      const error = await rejection(
        runBench(config, {
          registry: await createDefaultContenderRegistry(),
          estimator: defaultTokenCountEstimator(),
          logger: createDefaultLogger({ silent: true }),
        }),
      );
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect(error.message).to.equal(
        "unknown option 'targetRatoi' for strategy 'token-count' (known: targetRatio, maxTokens, cutWithinTurn)",
      );
      expect(Date.now() - started).to.be.lessThan(2000);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('refuses an option value of the wrong kind from a config file', async () => {
    const registry = await createDefaultContenderRegistry();
    expect(() => checkContenderOptions(registry.get('turn-window'), { maxTurns: '10' })).to.throw(
      `option 'maxTurns' of 'turn-window' must be a number (got "10")`,
    );
    expect(() => checkContenderOptions(registry.get('token-count-recall'), { recall: { maxRatio: 0.4 } })).to.not.throw();
  });
});

describe('bench: growth factor per 10x', () => {
  it('is the time ratio per decade of session length', () => {
    const point = (events: number, compactMs: number): ScalingPoint => ({
      contender: 'x',
      repository: 'memory',
      events,
      fillMs: 0,
      compactMs,
      archived: 0,
      tokensBefore: 0,
      tokensAfter: 0,
    });
    const [linear, quadratic] = [
      growthFactors([point(1000, 2), point(10000, 20)]),
      growthFactors([point(1000, 1), point(100000, 10000)]),
    ];
    expect(linear[0]!.factor).to.be.closeTo(10, 1e-9);
    expect(quadratic[0]!.factor).to.be.closeTo(100, 1e-9);
  });
});

describe('bench: end to end on the shipped sample', function () {
  this.timeout(120_000);
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), 'bench-report-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('replays every contender, writes the tables, the JSON and the vega-rendered charts', async () => {
    const config = {
      ...quickConfig([SAMPLE], out),
      budgets: [2000],
      scaling: {
        sizes: [100, 1000],
        repositories: ['memory' as const],
        budgetTokens: 2000,
        contenders: ['token-count', 'langchain-trim'],
      },
    };
    const result = await runBench(config, {
      registry: await createDefaultContenderRegistry(),
      estimator: defaultTokenCountEstimator(),
      logger: createDefaultLogger({ silent: true }),
    });
    const none = result.summaries.find((s) => s.contender === 'none')!;
    const tokenCount = result.summaries.find((s) => s.contender === 'token-count')!;
    expect(none.retention).to.equal(1);
    expect(none.compressionRatio).to.equal(1);
    expect(tokenCount.maxTokensSent).to.be.at.most(2000);
    expect(tokenCount.compactions).to.be.greaterThan(0);
    expect(result.scaling.map((p) => `${p.contender}@${p.events}`)).to.deep.equal([
      'token-count@100',
      'langchain-trim@100',
      'token-count@1000',
      'langchain-trim@1000',
    ]);

    const files = await writeReport(result, out);
    expect(files.map((f) => f.slice(out.length + 1))).to.include.members([
      'results.md',
      'results.json',
      'scaling.svg',
      'retention-vs-tokens-recorded-sample.svg',
      'sawtooth-recorded-sample.svg',
      'cost-vs-answer-recorded-sample-openai-gpt-4.1.svg',
      'cost-vs-answer-recorded-sample-anthropic-claude-sonnet-4.5.svg',
    ]);
    expect(readFileSync(join(out, 'scaling.svg'), 'utf8')).to.match(/^<svg /);
    const markdown = readFileSync(join(out, 'results.md'), 'utf8');
    expect(markdown).to.include('### recorded-sample, budget 2,000 tokens');
    expect(markdown).to.include('| `token-count` |');
    expect(markdown).to.include('@librechat/agents');
    expect(markdown).to.include('What a conversation costs');
  });

  it('prices every call under each default preset: the uncompacted history is mostly cache hits', async () => {
    const result = await runBench(
      {
        ...quickConfig([SAMPLE], out),
        budgets: [2000],
        contenders: [{ name: 'none' }, { name: 'langchain-trim' }],
        scaling: null,
      },
      {
        registry: await createDefaultContenderRegistry(),
        estimator: defaultTokenCountEstimator(),
        logger: createDefaultLogger({ silent: true }),
      },
    );
    const none = result.summaries.find((s) => s.contender === 'none')!;
    expect(none.cost.map((c) => c.preset)).to.deep.equal(['openai-gpt-4.1', 'anthropic-claude-sonnet-4.5']);
    for (const c of none.cost) {
      // An append-only history re-reads its prefix on every call after the first.
      expect(c.prefixStability).to.be.greaterThan(0.8);
      expect(c.costPerConversation).to.be.closeTo(c.totalCost / none.sessions, 1e-12);
      expect(c.costPerTurn).to.be.closeTo(c.totalCost / none.calls, 1e-12);
    }
    const once = result.datasets[0]!.sendOnceCost.find((c) => c.preset === 'openai-gpt-4.1')!;
    const floor = result.datasets[0]!.floorCost.find((c) => c.preset === 'openai-gpt-4.1')!;
    expect(floor.costPerConversation).to.be.at.least(once.costPerConversation);
    expect(none.cost[0]!.costPerConversation).to.be.greaterThan(floor.costPerConversation);
  });

  it('reports the cheapest of ours at equal answer-in-context and each policy beside its plain version', async () => {
    const config = {
      ...quickConfig([SAMPLE], out),
      budgets: [2000],
      contenders: [{ name: 'token-count' }, { name: 'token-count-cache-aware' }, { name: 'langchain-trim' }],
      comparisons: [{ name: 'cold cache', policy: 'token-count-cache-aware', baseline: 'token-count' }],
      scaling: null,
    };
    const result = await runBench(config, {
      registry: await createDefaultContenderRegistry(),
      estimator: defaultTokenCountEstimator(),
      logger: createDefaultLogger({ silent: true }),
    });
    const rows = cheapestAtEqualAnswer(result.summaries);
    expect(rows.map((r) => r.preset)).to.deep.equal(['openai-gpt-4.1', 'anthropic-claude-sonnet-4.5']);
    for (const row of rows) {
      if (row.best === null) continue;
      expect(row.best.answerFound).to.be.at.least(row.peer.answerFound);
      expect(row.best.kind).to.equal('strategy');
    }
    const markdown = renderMarkdown(result, { retention: new Map(), sawtooth: new Map() });
    expect(markdown).to.include('## What a conversation costs: this library against `langchain-trim`');
    // A cheaper configuration that finds every answer only by sending more than the budget is not chosen.
    const base = result.summaries.find((s) => s.contender === 'token-count')!;
    const overBudget = {
      ...base,
      contender: 'over-budget',
      answerFound: 1,
      overBudgetShare: 0.05,
      cost: base.cost.map((c) => ({ ...c, costPerConversation: 0 })),
    };
    const chosen = cheapestAtEqualAnswer([...result.summaries, overBudget]);
    expect(chosen.map((r) => r.best?.contender)).to.deep.equal(rows.map((r) => r.best?.contender));
    expect(cheapestAtEqualAnswer([...result.summaries, { ...overBudget, overBudgetShare: 0 }])[0]!.best!.contender).to.equal(
      'over-budget',
    );
    expect(markdown).to.include('| cold cache | `token-count-cache-aware` vs `token-count` | recorded-sample | 2,000 |');
  });
});
