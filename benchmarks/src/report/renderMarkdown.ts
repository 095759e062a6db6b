import type { ContenderSummary } from '../metrics/aggregateRuns.js';
import type { BenchResult } from '../runBench.js';
import { renderRecall } from './renderRecall.js';
import { participantNames } from '../BenchConfig.js';

export const LANGCHAIN_PEER = 'langchain-trim';
export const HEADLINE_DATASET = 'locomo';
export const HEADLINE_BUDGET = 8000;

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (n: number) => (Number.isNaN(n) ? '–' : `${(n * 100).toFixed(1)} %`);
const ms = (n: number) => (n === 0 ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(0));
const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** Our total decision time over LangChain trimMessages' on the same sessions and budget (NaN when absent). */
export function timeRatioVsLangChain(row: ContenderSummary, all: readonly ContenderSummary[]): number {
  const lc = all.find((s) => s.dataset === row.dataset && s.budgetTokens === row.budgetTokens && s.contender === LANGCHAIN_PEER);
  return lc === undefined || lc.totalMs === 0 ? Number.NaN : row.totalMs / lc.totalMs;
}

function fidelityTable(rows: readonly ContenderSummary[]): string {
  return table(
    [
      'strategy / peer',
      'kind',
      'evidence',
      'all evidence',
      'answer in context',
      'retention',
      'mean tokens',
      'max tokens',
      'total tokens',
      'compression',
      'calls over budget',
      'empty contexts',
      'orphaned tool results',
    ],
    rows.map((s) => [
      `\`${s.contender}\``,
      s.kind,
      pct(s.evidenceShare),
      pct(s.evidenceVerbatim),
      pct(s.answerFound),
      pct(s.retention),
      int(s.meanTokensSent),
      int(s.maxTokensSent),
      int(s.totalTokensSent),
      ratio(s.compressionRatio),
      pct(s.overBudgetShare),
      pct(s.emptyContextShare),
      s.orphanResults === 0 ? '0' : `${int(s.orphanResults)} (in ${int(s.orphanCalls)} calls)`,
    ]),
  );
}

function costTable(rows: readonly ContenderSummary[], all: readonly ContenderSummary[]): string {
  return table(
    [
      'strategy / peer',
      'compactions',
      'compaction p50 (ms)',
      'compaction p95 (ms)',
      'summariser calls',
      'summariser tokens in / out',
      'total time (ms)',
      `time ratio vs \`${LANGCHAIN_PEER}\``,
    ],
    rows.map((s) => [
      `\`${s.contender}\``,
      s.kind === 'peer' ? '–' : int(s.compactions),
      s.kind === 'peer' ? '–' : ms(s.compactionP50Ms),
      s.kind === 'peer' ? '–' : ms(s.compactionP95Ms),
      s.summarizerCalls === 0
        ? '–'
        : `${int(s.summarizerCalls)}${s.summarizerFailures > 0 ? ` (${s.summarizerFailures} failed)` : ''}`,
      s.summarizerCalls === 0 ? '–' : `${int(s.summarizerInputTokens)} / ${int(s.summarizerOutputTokens)}`,
      ms(s.totalMs),
      ratio(timeRatioVsLangChain(s, all)),
    ]),
  );
}

const money = (n: number) => (Number.isFinite(n) ? `$${n.toPrecision(3)}` : '–');

/** The cost ratio of a row to `langchain-trim` on the same dataset, budget and preset (NaN when absent). */
export function costRatioVsLangChain(row: ContenderSummary, preset: string, all: readonly ContenderSummary[]): number {
  const lc = all.find((s) => s.dataset === row.dataset && s.budgetTokens === row.budgetTokens && s.contender === LANGCHAIN_PEER);
  const theirs = lc?.cost.find((c) => c.preset === preset);
  const ours = row.cost.find((c) => c.preset === preset);
  return theirs === undefined || ours === undefined || theirs.costPerConversation === 0
    ? Number.NaN
    : ours.costPerConversation / theirs.costPerConversation;
}

/** Money per conversation and per turn, prefix stability, beside answer-in-context: one column group per preset. */
function moneyTable(rows: readonly ContenderSummary[], all: readonly ContenderSummary[]): string {
  const presets = rows[0]?.cost.map((c) => c.preset) ?? [];
  return table(
    [
      'strategy / peer',
      'answer in context',
      'compactions',
      ...presets.flatMap((p) => [
        `${p}: per conversation (× \`${LANGCHAIN_PEER}\`)`,
        'per turn',
        'cache hits / writes',
        'its prompts perfectly cached (× that)',
        'of which compaction',
      ]),
    ],
    rows.map((s) => [
      `\`${s.contender}\``,
      pct(s.answerFound),
      s.kind === 'peer' ? '–' : int(s.compactions),
      ...presets.flatMap((p) => {
        const c = s.cost.find((x) => x.preset === p);
        if (c === undefined) return ['–', '–', '–', '–', '–'];
        const vs = costRatioVsLangChain(s, p, all);
        const perfect = c.perfectCachePerConversation;
        return [
          `${money(c.costPerConversation)} (${ratio(vs)})${c.cachingOff ? ' ¹' : ''}`,
          money(c.costPerTurn),
          `${pct(c.prefixStability)} / ${pct(c.cacheWriteShare)}`,
          perfect === undefined ? '–' : `${money(perfect)} (${ratio(c.costPerConversation / perfect)})`,
          c.compactionCostPerConversation === undefined || c.compactionCostPerConversation === 0
            ? '–'
            : money(c.compactionCostPerConversation),
        ];
      }),
    ]),
  );
}

/**
 * Per dataset, budget and preset: `langchain-trim`'s cost and answer-in-context, and the cheapest of this
 * library's contenders whose answer-in-context is at least as high — the cost comparison at equal quality.
 */
export function cheapestAtEqualAnswer(
  summaries: readonly ContenderSummary[],
): { dataset: string; budget: number; preset: string; peer: ContenderSummary; best: ContenderSummary | null }[] {
  const out: ReturnType<typeof cheapestAtEqualAnswer> = [];
  for (const peer of summaries.filter((s) => s.contender === LANGCHAIN_PEER)) {
    for (const { preset } of peer.cost) {
      const costOf = (s: ContenderSummary) =>
        s.cost.find((c) => c.preset === preset)?.costPerConversation ?? Number.POSITIVE_INFINITY;
      const candidates = summaries.filter(
        (s) =>
          s.kind === 'strategy' &&
          // Sending everything is the reference, not a configuration of the library.
          s.contender !== 'none' &&
          s.dataset === peer.dataset &&
          s.budgetTokens === peer.budgetTokens &&
          s.answerFound >= peer.answerFound &&
          // Answers bought by prompts over the budget (a strategy with nothing to cut) are not at this budget.
          s.overBudgetShare <= peer.overBudgetShare &&
          Number.isFinite(costOf(s)),
      );
      const best = candidates.sort((a, b) => costOf(a) - costOf(b))[0] ?? null;
      out.push({ dataset: peer.dataset, budget: peer.budgetTokens, preset, peer, best });
    }
  }
  return out;
}

function costHeadline(result: BenchResult): string[] {
  const rows = cheapestAtEqualAnswer(result.summaries);
  if (rows.length === 0) return [];
  const floor = (dataset: string, preset: string) =>
    result.datasets.find((d) => d.name === dataset)?.floorCost.find((c) => c.preset === preset)?.costPerConversation ??
    Number.NaN;
  const perfect = (dataset: string, preset: string) =>
    result.datasets.find((d) => d.name === dataset)?.perfectCacheCost?.find((c) => c.preset === preset)?.costPerConversation ??
    Number.NaN;
  return [
    `## What a conversation costs: this library against \`${LANGCHAIN_PEER}\` at equal answer-in-context`,
    '',
    'Per dataset, budget and provider preset: the cheapest of our strategies whose answer-in-context is at least',
    `\`${LANGCHAIN_PEER}\`'s, in this run (prompt cache modelled, see session-compaction's \`docs/cost.md\`). The floor is the cost of`,
    'sending every message exactly once, uncached, plus the replies, plus the system messages re-read from the cache on',
    'every later call: no policy that keeps the instructions in its prompts can be cheaper. The second reference,',
    '"whole history, perfect cache", sends the whole history at every call with perfect caching — each message written',
    'once, re-read from the cache on every later call — plus the replies: what keeping everything costs when the cache',
    "never misses. Each contender's own perfect-cache cost (its prompts, so cached) is in the tables per budget below.",
    '',
    table(
      [
        'dataset',
        'budget',
        'preset',
        `\`${LANGCHAIN_PEER}\` per conversation`,
        'its answer in context',
        'cheapest of ours at ≥ that',
        'per conversation',
        'answer in context',
        `× \`${LANGCHAIN_PEER}\``,
        'floor ×',
        'whole history, perfect cache ×',
      ],
      rows.map(({ dataset, budget, preset, peer, best }) => {
        const theirs = peer.cost.find((c) => c.preset === preset)!.costPerConversation;
        const ours = best?.cost.find((c) => c.preset === preset)?.costPerConversation ?? Number.NaN;
        return [
          dataset,
          int(budget),
          preset,
          money(theirs),
          pct(peer.answerFound),
          best === null ? 'none' : `\`${best.contender}\``,
          money(ours),
          best === null ? '–' : pct(best.answerFound),
          ratio(ours / theirs),
          ratio(floor(dataset, preset) / theirs),
          ratio(perfect(dataset, preset) / theirs),
        ];
      }),
    ),
    '',
  ];
}

function policyComparisons(result: BenchResult): string[] {
  const comparisons = result.config.comparisons ?? [];
  if (comparisons.length === 0) return [];
  const presets = [...new Set(result.summaries.flatMap((s) => s.cost.map((c) => c.preset)))];
  const rows: string[][] = [];
  for (const c of comparisons) {
    for (const policy of result.summaries.filter((s) => s.contender === c.policy)) {
      const baseline = result.summaries.find(
        (s) => s.contender === c.baseline && s.dataset === policy.dataset && s.budgetTokens === policy.budgetTokens,
      );
      if (baseline === undefined) continue;
      rows.push([
        c.name,
        `\`${c.policy}\` vs \`${c.baseline}\``,
        policy.dataset,
        int(policy.budgetTokens),
        `${int(policy.compactions)} / ${int(baseline.compactions)}`,
        `${pct(policy.answerFound)} / ${pct(baseline.answerFound)}`,
        ...presets.map((p) => {
          const a = policy.cost.find((x) => x.preset === p)?.costPerConversation ?? Number.NaN;
          const b = baseline.cost.find((x) => x.preset === p)?.costPerConversation ?? Number.NaN;
          const delta = (a / b - 1) * 100;
          return `${money(a)} / ${money(b)} (${Number.isFinite(delta) ? `${delta >= 0 ? '+' : ''}${delta.toFixed(1)} %` : '–'})`;
        }),
      ]);
    }
  }
  if (rows.length === 0) return [];
  return [
    '## Cache-aware policies against their plain versions',
    '',
    'Same sessions, same budget; each cell is policy / plain. Cost is per conversation, with the change in percent.',
    '',
    table(
      ['policy', 'pair', 'dataset', 'budget', 'compactions', 'answer in context', ...presets.map((p) => `${p} per conversation`)],
      rows,
    ),
    '',
  ];
}

export interface ChartFiles {
  retention: Map<string, string>;
  /** Cost per conversation against answer-in-context, per dataset and preset. */
  cost?: Map<string, string>;
  /** Cost × trimMessages against answer-in-context with the references, per dataset and budget (one panel per preset). */
  costByBudget?: Map<string, string>;
  sawtooth: Map<string, string>;
  /** Answer in context against tokens sent, per dataset (runs with recall contenders). */
  fidelity?: Map<string, string>;
  scaling?: string;
  /** Why no chart was rendered, when none could be. */
  unavailable?: string;
}

/** The results page: headline, then per dataset and budget the fidelity and cost tables, charts, scaling. */
export function renderMarkdown(result: BenchResult, charts: ChartFiles): string {
  const { config, summaries } = result;
  const out: string[] = [];
  out.push('# Benchmark results', '');
  out.push('<!-- generated by `session-compaction-bench`; do not edit by hand -->', '');
  out.push(
    `Produced by \`${config.command ?? 'session-compaction-bench'}\` on ${result.startedAt.slice(0, 10)} in ${(result.durationMs / 1000).toFixed(0)} s`,
  );
  out.push(
    `(Node ${result.environment.node}, ${result.environment.platform}, ${result.environment.cpus} × ${result.environment.cpuModel}).`,
  );
  out.push(`Summariser: ${result.summarizer}. Repository for the replays: \`${config.repository}\`.`);
  out.push(
    `Probes are asked ${config.probeAt === 'end' ? 'at the end of each session' : `${config.probeAt} model calls after their last evidence event`}.`,
  );
  out.push(
    config.recordedTimes === false
      ? 'Events were replayed one second apart (`--no-recorded-times`), not at their recorded times.'
      : 'Events carry the times their dataset recorded, where it has them (LoCoMo, mini-swe-agent).',
  );
  out.push(
    participantNames(config)
      ? "Turns carry their recorded speaker as the message's `name`, where the dataset has speakers (LoCoMo)."
      : config.locomoSpeakerNames
        ? "LoCoMo turns start with their speaker's name in the text (`--speaker-names`), with no `name`."
        : "Turns were replayed without their speaker's name (`--no-participant-names`).",
  );
  out.push("What every column means, and how the replay works: session-compaction's `docs/benchmarking.md`.", '');

  out.push('## Data', '');
  out.push(
    table(
      ['dataset', 'sessions replayed', 'events', 'probes (unscored: no evidence)', 'source'],
      result.datasets.map((d) => [
        d.name,
        `${d.sessionsReplayed} of ${d.sessionsTotal}`,
        int(d.events),
        `${int(d.probes)} (${d.unscoredProbes})`,
        d.source ?? '',
      ]),
    ),
    '',
  );

  const headline = summaries.filter((s) => s.dataset === HEADLINE_DATASET && s.budgetTokens === HEADLINE_BUDGET);
  if (headline.length > 0) {
    out.push(`## Headline: LoCoMo at an ${HEADLINE_BUDGET / 1000}k-token budget`, '');
    out.push(
      table(
        [
          'strategy / peer',
          'evidence',
          'all evidence',
          'retention',
          'mean tokens sent',
          `time ratio vs \`${LANGCHAIN_PEER}\` (ours / theirs)`,
        ],
        headline.map((s) => [
          `\`${s.contender}\``,
          pct(s.evidenceShare),
          pct(s.evidenceVerbatim),
          pct(s.retention),
          int(s.meanTokensSent),
          ratio(timeRatioVsLangChain(s, summaries)),
        ]),
      ),
      '',
    );
  }

  out.push(...costHeadline(result), ...policyComparisons(result), ...renderRecall(result, charts.fidelity ?? new Map()));

  const datasets = [...new Set(summaries.map((s) => s.dataset))];
  for (const dataset of datasets) {
    out.push(`## ${dataset}`, '');
    const file = charts.retention.get(dataset);
    if (file !== undefined) out.push(`![retention vs tokens, ${dataset}](${file})`, '');
    const saw = charts.sawtooth.get(dataset);
    if (saw !== undefined) out.push(`![token sawtooth, ${dataset}](${saw})`, '');
    const budgets = [...new Set(summaries.filter((s) => s.dataset === dataset).map((s) => s.budgetTokens))].sort((a, b) => a - b);
    for (const budget of budgets) {
      const rows = summaries.filter((s) => s.dataset === dataset && s.budgetTokens === budget);
      out.push(`### ${dataset}, budget ${int(budget)} tokens`, '');
      out.push(
        `${rows[0]!.sessions} sessions, ${int(rows[0]!.calls)} model calls, ${int(rows[0]!.probesScored)} probes scored.`,
        '',
      );
      out.push(fidelityTable(rows), '', costTable(rows, summaries), '');
      if (rows.some((r) => r.cost.length > 0)) {
        out.push(`What a conversation costs (prompt cache modelled per preset; see session-compaction's \`docs/cost.md\`):`, '');
        out.push(moneyTable(rows, summaries), '');
        if (rows.some((r) => r.cost.some((c) => c.cachingOff)))
          out.push('¹ Billed without prompt caching: with this prefix, cache writes would cost more than they save.', '');
      }
    }
    const info = result.datasets.find((d) => d.name === dataset);
    if (info !== undefined && info.sendOnceCost.length > 0) {
      out.push(
        `Reference — every message sent exactly once, uncached, plus the recorded replies (no policy that shows the model each message can cost less): ${info.sendOnceCost.map((c) => `${c.preset} ${money(c.costPerConversation)}`).join(', ')} per conversation.`,
        '',
      );
      out.push(
        `Floor — the same plus the system messages re-read from the cache on every later call (no policy that keeps the instructions in every prompt can cost less): ${info.floorCost.map((c) => `${c.preset} ${money(c.costPerConversation)}`).join(', ')} per conversation.`,
        '',
      );
      if (info.perfectCacheCost !== undefined)
        out.push(
          `Whole history, perfect cache — every call sends the whole history, each message written to the cache once and re-read on every later call, plus the replies: ${info.perfectCacheCost.map((c) => `${c.preset} ${money(c.costPerConversation)}`).join(', ')} per conversation.`,
          '',
        );
    }
    for (const [key, file] of charts.cost ?? []) {
      if (key.startsWith(`${dataset}\u0000`))
        out.push(`![cost vs answer in context, ${dataset}, ${key.split('\u0000')[1]}](${file})`, '');
    }
    for (const [key, file] of charts.costByBudget ?? []) {
      if (key.startsWith(`${dataset}\u0000`))
        out.push(`![cost × trimMessages vs answer in context, ${dataset}, budget ${key.split('\u0000')[1]}](${file})`, '');
    }
  }

  if (result.scaling.length > 0) {
    out.push('## Scaling: compaction cost vs session length', '');
    if (charts.scaling !== undefined) out.push(`![scaling](${charts.scaling})`, '');
    const sizes = [...new Set(result.scaling.map((p) => p.events))].sort((a, b) => a - b);
    const keys = [...new Set(result.scaling.map((p) => `${p.contender}\u0000${p.repository}`))];
    out.push(
      table(
        [
          'strategy / peer',
          'repository',
          ...sizes.map((n) => `${int(n)} events (ms)`),
          'growth per 10× events',
          'archived at the largest size',
        ],
        keys.map((key) => {
          const [contender, repository] = key.split('\u0000') as [string, string];
          const points = result.scaling.filter((p) => p.contender === contender && p.repository === repository);
          const growth = result.growth.filter((g) => g.contender === contender && g.repository === repository);
          const largest = points.sort((a, b) => b.events - a.events)[0];
          return [
            `\`${contender}\``,
            repository,
            ...sizes.map((n) => ms(points.find((p) => p.events === n)?.compactMs ?? 0)),
            growth.map((g) => `${g.factor.toFixed(1)}×`).join(', '),
            largest === undefined ? '' : `${int(largest.archived)} of ${int(largest.events)}`,
          ];
        }),
      ),
      '',
    );
    out.push(
      'Growth per 10×: time at 10N over time at N (1× = constant, 10× = linear, 100× = quadratic). Each point is one',
      '`compact()` over a synthetic agent-style session whose events are all active, with token estimates warm.',
      '',
    );
  }

  out.push('## Not measured', '');
  if (charts.unavailable !== undefined) out.push(`- ${charts.unavailable}.`);
  for (const s of result.skipped)
    out.push(`- \`${s.contender}\` on ${s.dataset}: ${s.reason}${s.install === undefined ? '' : ` — \`${s.install}\``}.`);
  out.push(
    "- LibreChat's pruning (`@librechat/agents`): it requires Node 24 and is not installed in this Node 20 project, so it",
    '  is not in the comparison.',
    '',
  );
  return out.join('\n');
}
