import type { ContenderSummary } from '../metrics/aggregateRuns.js';
import type { BenchResult } from '../runBench.js';
import { HEADLINE_BUDGET, HEADLINE_DATASET } from './renderMarkdown.js';

const pct = (n: number) => (Number.isNaN(n) ? '–' : `${(n * 100).toFixed(1)} %`);
const int = (n: number) => (Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

/** The dataset and budget the terminal table shows: LoCoMo at 8k when the run has it, else the closest run. */
export function headlineSelection(result: BenchResult): { dataset: string; budget: number } | null {
  const rows = result.summaries;
  if (rows.length === 0) return null;
  const datasets = [...new Set(rows.map((s) => s.dataset))];
  const dataset = datasets.includes(HEADLINE_DATASET) ? HEADLINE_DATASET : datasets[0]!;
  const budgets = [...new Set(rows.filter((s) => s.dataset === dataset).map((s) => s.budgetTokens))];
  const budget = budgets.reduce((best, b) => (Math.abs(b - HEADLINE_BUDGET) < Math.abs(best - HEADLINE_BUDGET) ? b : best));
  return { dataset, budget };
}

/**
 * The run's headline as a plain-text table for the terminal: every contender (rows) against the key metrics
 * (columns) on one dataset and budget; results.md has every dataset and budget.
 */
export function renderHeadline(result: BenchResult): string {
  const selection = headlineSelection(result);
  if (selection === null) return 'No contender produced results.\n';
  const { dataset, budget } = selection;
  const rows = result.summaries.filter((s) => s.dataset === dataset && s.budgetTokens === budget);
  const preset = rows[0]?.cost[0]?.preset;
  const costOf = (s: ContenderSummary) => s.cost.find((c) => c.preset === preset)?.costPerConversation ?? Number.NaN;
  const header = [
    'contender',
    'kind',
    'evidence',
    'all evidence',
    'retention',
    'mean tokens sent',
    'compression',
    'compaction p95 ms',
    ...(preset === undefined ? [] : [`cost/conversation (${preset})`]),
  ];
  const body = rows.map((s) => [
    s.contender,
    s.kind,
    pct(s.evidenceShare),
    pct(s.evidenceVerbatim),
    pct(s.retention),
    int(s.meanTokensSent),
    `${fixed(s.compressionRatio, 2)}×`,
    fixed(s.compactionP95Ms, 1),
    ...(preset === undefined ? [] : [fixed(costOf(s), 4)]),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    `Headline: ${dataset} at a ${budget / 1000}k-token budget (${rows.length} contenders)`,
    '',
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...body.map(line),
    '',
  ].join('\n');
}
