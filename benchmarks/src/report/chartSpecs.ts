import type { TopLevelSpec } from 'vega-lite';
import type { ContenderSummary } from '../metrics/aggregateRuns.js';
import type { SawtoothSeries } from '../runBench.js';
import type { ScalingPoint } from '../scaling/runScaling.js';

const WIDTH = 560;
const HEIGHT = 320;

/** Retention against mean tokens sent, one line per contender through its budgets. */
export function retentionVsTokensSpec(dataset: string, summaries: readonly ContenderSummary[]): TopLevelSpec {
  const values = summaries
    .filter((s) => s.dataset === dataset && !Number.isNaN(s.retention))
    .map((s) => ({
      contender: s.contender,
      kind: s.kind,
      budget: s.budgetTokens,
      tokens: Math.round(s.meanTokensSent),
      retention: Math.round(s.retention * 1000) / 10,
    }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Evidence retention vs tokens sent — ${dataset}`,
      subtitle: 'one point per token budget; up and left is better',
    },
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    encoding: {
      x: { field: 'tokens', type: 'quantitative', title: 'mean tokens sent per model call' },
      y: { field: 'retention', type: 'quantitative', title: 'probes retained (%)', scale: { domain: [0, 100] } },
      color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
    },
    layer: [
      { mark: { type: 'line', opacity: 0.6 }, encoding: { order: { field: 'budget', type: 'quantitative' } } },
      { mark: { type: 'point', filled: true, size: 70 }, encoding: { shape: { field: 'kind', type: 'nominal', title: 'kind' } } },
    ],
  };
}

/** Tokens sent at each model call of one long session: the sawtooth of compactions. */
export function sawtoothSpec(series: SawtoothSeries): TopLevelSpec {
  const values: { call: number; tokens: number; contender: string }[] = [];
  const none = series.series.find((s) => s.contender === 'none') ?? series.series[0];
  if (none !== undefined)
    none.fullTokens.forEach((tokens, call) => values.push({ call, tokens, contender: 'uncompacted history' }));
  for (const s of series.series) {
    if (s.contender === 'none') continue;
    s.tokensSent.forEach((tokens, call) => values.push({ call, tokens, contender: s.contender }));
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Tokens sent per model call — ${series.dataset} ${series.sessionId}`,
      subtitle: `budget ${series.budgetTokens} tokens (dashed)`,
    },
    width: WIDTH + 200,
    height: HEIGHT,
    layer: [
      {
        data: { values },
        mark: { type: 'line', strokeWidth: 1.3, interpolate: 'step-after' },
        encoding: {
          x: { field: 'call', type: 'quantitative', title: 'model call' },
          y: { field: 'tokens', type: 'quantitative', title: 'tokens sent' },
          color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
        },
      },
      {
        data: { values: [{ budget: series.budgetTokens }] },
        mark: { type: 'rule', strokeDash: [6, 4], color: '#444' },
        encoding: { y: { field: 'budget', type: 'quantitative' } },
      },
    ],
  };
}

/** Compaction time against session length, log-log, one line per contender and repository. */
export function scalingSpec(points: readonly ScalingPoint[]): TopLevelSpec {
  const values = points.map((p) => ({
    contender: p.contender,
    repository: p.repository,
    events: p.events,
    ms: Math.max(p.compactMs, 0.01),
  }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: 'Compaction cost vs session length',
      subtitle: 'one compact() over N active events (peers: one call over N messages)',
    },
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'events', type: 'quantitative', scale: { type: 'log' }, title: 'events in the session' },
      y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'time (ms)' },
      color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
      strokeDash: { field: 'repository', type: 'nominal', title: 'repository' },
    },
  };
}

/** Cost per conversation against answer-in-context for one dataset and preset, one panel per budget. */
export function costVsAnswerSpec(dataset: string, preset: string, summaries: readonly ContenderSummary[]): TopLevelSpec {
  const values = summaries
    .filter((s) => s.dataset === dataset && !Number.isNaN(s.answerFound))
    .flatMap((s) => {
      const c = s.cost.find((x) => x.preset === preset);
      return c === undefined
        ? []
        : [
            {
              contender: s.contender,
              kind: s.kind,
              budget: `budget ${s.budgetTokens}`,
              cost: Math.round(c.costPerConversation * 10000) / 10000,
              answer: Math.round(s.answerFound * 1000) / 10,
            },
          ];
    });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Cost per conversation vs answer in context — ${dataset}, ${preset}`,
      subtitle: 'prompt cache modelled; up and left is better',
    },
    data: { values },
    facet: { column: { field: 'budget', type: 'nominal', title: null } },
    spec: {
      width: 300,
      height: HEIGHT,
      mark: { type: 'point', filled: true, size: 80 },
      encoding: {
        x: { field: 'cost', type: 'quantitative', title: 'cost per conversation (USD)', scale: { zero: true } },
        y: { field: 'answer', type: 'quantitative', title: 'answer in context (%)' },
        color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
        shape: { field: 'kind', type: 'nominal', title: 'kind' },
        tooltip: [{ field: 'contender' }, { field: 'cost' }, { field: 'answer' }],
      },
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
  };
}

/** Answer in context (answerable probes) against mean tokens sent, one line per contender through its budgets. */
export function fidelityVsTokensSpec(dataset: string, summaries: readonly ContenderSummary[]): TopLevelSpec {
  const values = summaries
    .filter((s) => s.dataset === dataset && !Number.isNaN(s.answerInContext))
    .map((s) => ({
      contender: s.contender,
      recall: s.recall === undefined ? 'without recall' : `recall (${s.recall})`,
      budget: s.budgetTokens,
      tokens: Math.round(s.meanTokensSent),
      answer: Math.round(s.answerInContext * 1000) / 10,
    }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Answer in context vs tokens sent — ${dataset}`,
      subtitle: 'probes with an answer; one point per token budget; up and left is better',
    },
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    encoding: {
      x: { field: 'tokens', type: 'quantitative', title: 'mean tokens sent per model call' },
      y: { field: 'answer', type: 'quantitative', title: 'answer in context (%)' },
      color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
    },
    layer: [
      {
        mark: { type: 'line', opacity: 0.6 },
        encoding: {
          order: { field: 'budget', type: 'quantitative' },
          strokeDash: { field: 'recall', type: 'nominal', title: 'prompt' },
        },
      },
      {
        mark: { type: 'point', filled: true, size: 70 },
        encoding: { shape: { field: 'recall', type: 'nominal', title: 'prompt' } },
      },
    ],
  };
}
