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

/** The references a cost chart draws beside the contenders, per preset (money per conversation). */
export interface CostReferences {
  preset: string;
  /** `trimMessages` (the peer every ratio is against). */
  peer: number;
  /** Send-once plus the system messages re-read from the cache: the floor. */
  floor?: number;
  /** The whole history sent at every call with perfect caching. */
  perfectCache?: number;
}

/**
 * Cost per conversation as a multiple of `trimMessages`' against answer-in-context, for one dataset and budget:
 * one panel per preset, a point per contender, and vertical rules at `trimMessages` (1×), the floor and the
 * whole history perfectly cached.
 */
export function costVsAnswerByBudgetSpec(
  dataset: string,
  budgetTokens: number,
  summaries: readonly ContenderSummary[],
  references: readonly CostReferences[],
): TopLevelSpec {
  const points = summaries
    .filter((s) => s.dataset === dataset && s.budgetTokens === budgetTokens && !Number.isNaN(s.answerFound))
    .flatMap((s) =>
      references.flatMap((ref) => {
        const c = s.cost.find((x) => x.preset === ref.preset);
        return c === undefined || !(ref.peer > 0)
          ? []
          : [
              {
                row: 'contender',
                preset: ref.preset,
                contender: s.contender,
                kind: s.kind,
                ratio: Math.round((c.costPerConversation / ref.peer) * 1000) / 1000,
                answer: Math.round(s.answerFound * 1000) / 10,
              },
            ];
      }),
    );
  const rules = references.flatMap((ref) =>
    (
      [
        ['trimMessages', ref.peer],
        ['floor', ref.floor],
        ['whole history, perfect cache', ref.perfectCache],
      ] as const
    ).flatMap(([label, value]) =>
      value === undefined || !Number.isFinite(value) || !(ref.peer > 0)
        ? []
        : [{ row: 'reference', preset: ref.preset, label, ratio: Math.round((value / ref.peer) * 1000) / 1000 }],
    ),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: `Cost vs answer in context — ${dataset}, budget ${budgetTokens.toLocaleString('en-US')} tokens`,
      subtitle: 'cost per conversation ÷ trimMessages’ (prompt cache modelled); dashed: the references; up and left is better',
    },
    data: { values: [...points, ...rules] },
    facet: { column: { field: 'preset', type: 'nominal', title: null } },
    spec: {
      width: 300,
      height: HEIGHT,
      layer: [
        {
          transform: [{ filter: "datum.row === 'reference'" }],
          mark: { type: 'rule', strokeDash: [5, 4], color: '#666' },
          encoding: { x: { field: 'ratio', type: 'quantitative' } },
        },
        {
          transform: [{ filter: "datum.row === 'reference'" }],
          mark: { type: 'text', angle: 270, align: 'right', baseline: 'bottom', dy: -3, dx: -4, fontSize: 9, color: '#444' },
          encoding: {
            x: { field: 'ratio', type: 'quantitative' },
            y: { value: 0 },
            text: { field: 'label' },
          },
        },
        {
          transform: [{ filter: "datum.row === 'contender'" }],
          mark: { type: 'point', filled: true, size: 70 },
          encoding: {
            x: {
              field: 'ratio',
              type: 'quantitative',
              title: 'cost per conversation (× trimMessages)',
              scale: { zero: false },
            },
            y: { field: 'answer', type: 'quantitative', title: 'answer in context (%)', scale: { zero: false } },
            color: { field: 'contender', type: 'nominal', title: 'strategy / peer' },
            shape: { field: 'kind', type: 'nominal', title: 'kind' },
            tooltip: [{ field: 'contender' }, { field: 'ratio' }, { field: 'answer' }],
          },
        },
      ],
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
  };
}
