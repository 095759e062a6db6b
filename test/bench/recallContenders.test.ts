import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quickConfig } from '../../benchmarks/src/BenchConfig.js';
import type { StrategyContender } from '../../benchmarks/src/registry/ContenderRegistry.js';
import { createDefaultContenderRegistry } from '../../benchmarks/src/registry/defaultContenders.js';
import { InvalidArgumentError, createDefaultLogger, defaultTokenCountEstimator } from 'session-compaction';
import { expectRejects } from '../support/fixtures.js';
import { writeReport } from '../../benchmarks/src/report/writeReport.js';
import { recallBase } from '../../benchmarks/src/report/renderRecall.js';
import { runBench } from '../../benchmarks/src/runBench.js';

const SAMPLE = new URL('../../benchmarks/data/recorded-sample.json', import.meta.url).pathname;

describe('bench: recall contenders', function () {
  // Replays with a BM25 index per run: tens of seconds on a shared machine.
  this.timeout(120_000);
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), 'bench-recall-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('registers a BM25 and a hybrid recall variant of every strategy', async function () {
    const registry = await createDefaultContenderRegistry();
    const strategies = registry.list().filter((c) => c.kind === 'strategy' && c.recall === undefined);
    expect(strategies.length).to.be.greaterThan(5);
    for (const s of strategies) {
      expect(registry.get(`${s.name}-recall`)).to.include({ kind: 'strategy', recall: 'bm25' });
      expect(registry.get(`${s.name}-recall-hybrid`)).to.include({ kind: 'strategy', recall: 'hybrid' });
    }
    expect(recallBase('additive-summarization-recall-hybrid')).to.equal('additive-summarization');
  });

  it('replays with recall within the budget, probes included, and reports it beside the plain strategy', async function () {
    const config = {
      ...quickConfig([SAMPLE], out),
      budgets: [2000],
      contenders: [{ name: 'token-count' }, { name: 'token-count-recall' }, { name: 'token-count-recall-hybrid' }],
      scaling: null,
      pricing: [],
    };
    const result = await runBench(config, {
      registry: await createDefaultContenderRegistry(),
      estimator: defaultTokenCountEstimator(),
      logger: createDefaultLogger({ silent: true }),
    });
    const plain = result.summaries.find((s) => s.contender === 'token-count')!;
    const recall = result.summaries.find((s) => s.contender === 'token-count-recall')!;
    expect(plain.recall).to.equal(undefined);
    expect(recall.recall).to.equal('bm25');
    expect(recall.maxTokensSent).to.be.at.most(2000);
    expect(recall.maxProbeTokens).to.be.greaterThan(0).and.at.most(2000);
    expect(recall.retrievalP95Ms).to.be.greaterThan(0);
    expect(recall.probesScored).to.equal(plain.probesScored);
    expect(recall.retention).to.be.at.least(plain.retention);
    expect(result.skipped.map((s) => [s.contender, s.reason])).to.deep.include([
      'token-count-recall-hybrid',
      'no embedding model configured (--embed-model or --embed-local)',
    ]);

    const files = await writeReport(result, out);
    expect(files.map((f) => f.slice(out.length + 1))).to.include('fidelity-vs-tokens-recorded-sample.svg');
    const markdown = readFileSync(join(out, 'results.md'), 'utf8');
    expect(markdown).to.include('## Recall: the archive feeds the prompt');
    expect(markdown).to.include('| 2,000 | `token-count` + BM25 |');
  });

  it("a recall contender's recall.maxRatio caps the block and sets its room aside from the strategy's budget", async function () {
    const registry = await createDefaultContenderRegistry();
    const base = registry.get('token-count-recall') as StrategyContender;
    const seen: { budget: number; options: Record<string, unknown> }[] = [];
    registry.register({
      ...base,
      name: 'spy-recall',
      create: (context, options) => {
        seen.push({ budget: context.budgetTokens, options: { ...options } });
        return base.create(context, options);
      },
    });
    const config = {
      ...quickConfig([SAMPLE], out),
      budgets: [2000],
      maxSessionsPerDataset: 1,
      contenders: [
        {
          name: 'spy-recall',
          label: 'capped',
          options: { recall: { maxRatio: 0.4, placement: 'after-system' }, targetRatio: 0.5 },
        },
        { name: 'spy-recall', label: 'uncapped' },
      ],
      scaling: null,
      pricing: [],
    };
    const result = await runBench(config, {
      registry,
      estimator: defaultTokenCountEstimator(),
      logger: createDefaultLogger({ silent: true }),
    });
    // 0.4 x 2,000 set aside: the strategy compacts within 1,200; its own options arrive without `recall`.
    expect(
      seen.filter((s) => s.options.targetRatio === 0.5).every((s) => s.budget === 1200 && !('recall' in s.options)),
    ).to.equal(true);
    expect(seen.filter((s) => s.options.targetRatio === undefined).every((s) => s.budget === 2000)).to.equal(true);
    expect(result.summaries.find((s) => s.contender === 'capped')!.maxTokensSent).to.be.at.most(2000);
  });

  it('prices recall prompts with the cache breakpoint at the end of the history: fewer cache writes and a lower cost than on the last message', async function () {
    const config = {
      ...quickConfig([SAMPLE], out),
      budgets: [4000],
      contenders: [
        { name: 'token-count-recall', label: 'history', options: { recall: { maxRatio: 0.2 } } },
        { name: 'token-count-recall', label: 'last', options: { recall: { maxRatio: 0.2, breakpoint: 'last-message' } } },
      ],
      scaling: null,
      pricing: ['anthropic-claude-sonnet-4.5'],
    };
    const result = await runBench(config, {
      registry: await createDefaultContenderRegistry(),
      estimator: defaultTokenCountEstimator(),
      logger: createDefaultLogger({ silent: true }),
    });
    const cost = (label: string) => result.summaries.find((s) => s.contender === label)!.cost[0]!;
    expect(cost('history').cacheWriteTokens).to.be.lessThan(cost('last').cacheWriteTokens);
    expect(cost('history').costPerConversation).to.be.lessThan(cost('last').costPerConversation);
  });

  it('refuses a recall option on a contender without recall, and unknown or out-of-range recall settings', async function () {
    const registry = await createDefaultContenderRegistry();
    const run = (contender: { name: string; options: Record<string, unknown> }) =>
      runBench(
        {
          ...quickConfig([SAMPLE], out),
          budgets: [2000],
          maxSessionsPerDataset: 1,
          contenders: [contender],
          scaling: null,
          pricing: [],
        },
        {
          registry,
          estimator: defaultTokenCountEstimator(),
          logger: createDefaultLogger({ silent: true }),
        },
      );
    await expectRejects(
      run({ name: 'token-count', options: { recall: { maxRatio: 0.4 } } }),
      InvalidArgumentError,
      'needs a recall contender',
    );
    await expectRejects(
      run({ name: 'token-count-recall', options: { recall: { maxRatio: 1.5 } } }),
      InvalidArgumentError,
      'recall.maxRatio',
    );
    await expectRejects(
      run({ name: 'token-count-recall', options: { recall: { breakpoint: 'system' } } }),
      InvalidArgumentError,
      "recall.breakpoint must be 'history' or 'last-message'",
    );
    await expectRejects(
      run({ name: 'token-count-recall', options: { recall: { ratio: 0.4 } } }),
      InvalidArgumentError,
      'unknown recall option ratio',
    );
  });
});
