import type { ContenderSummary } from '../metrics/aggregateRuns.js';
import type { BenchResult } from '../runBench.js';
import { evidenceAgeLabel } from '../metrics/evidenceAge.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (n: number) => (Number.isNaN(n) ? '–' : `${(n * 100).toFixed(1)} %`);
const ms = (n: number) => (n === 0 ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(0));
const pair = (without: string, withRecall: string) => `${without} → **${withRecall}**`;

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** The contender a recall variant was built from: `token-count-recall` → `token-count`. */
export function recallBase(contender: string): string {
  return contender.replace(/-recall(-hybrid)?$/, '');
}

/**
 * The recall section: per dataset and budget, each strategy without and with recall side by side (the
 * probe's question is the query), next to the whole history and LangChain's trimMessages, and the chart of
 * answer-in-context against tokens sent. Empty when the run had no recall contender.
 */
export function renderRecall(result: BenchResult, charts: ReadonlyMap<string, string>): string[] {
  const recall = result.summaries.filter((s) => s.recall !== undefined);
  if (recall.length === 0) return [];
  const out: string[] = ['## Recall: the archive feeds the prompt', ''];
  out.push(
    'Each strategy compacts as it does alone; with recall, every prompt is built by `ContextAssembler` within the same',
    'budget, and each probe is asked as a user would ask it: its question is the query and its tokens are reserved.',
    '**evidence** is the headline: the share of the evidence events the probes cite (the turns a question needs)',
    'whose whole text is in the prompt — an excerpt or snippet of a turn does not count; **all evidence** is the share',
    'of probes with every evidence event present. **answer in context** counts probes with an answer (LoCoMo’s',
    'adversarial ones are left out), matched as words: most gold answers are never written word for word. Cells read',
    '_without recall → **with recall**_. **max probe prompt** is the largest prompt of any probe, question included;',
    'retrieval latency covers every retriever call of the replay, index updates included.',
    '',
  );
  for (const dataset of [...new Set(recall.map((s) => s.dataset))]) {
    out.push(`### ${dataset}`, '');
    const chart = charts.get(dataset);
    if (chart !== undefined) out.push(`![answer in context vs tokens sent, ${dataset}](${chart})`, '');
    const rows: string[][] = [];
    const budgets = [...new Set(recall.filter((s) => s.dataset === dataset).map((s) => s.budgetTokens))].sort((a, b) => a - b);
    for (const budget of budgets) {
      const at = result.summaries.filter((s) => s.dataset === dataset && s.budgetTokens === budget);
      for (const withRecall of at.filter((s) => s.recall !== undefined)) {
        const base = at.find((s) => s.contender === recallBase(withRecall.contender) && s.recall === undefined);
        rows.push(recallRow(budget, withRecall, base));
      }
      for (const reference of at.filter((s) => s.contender === 'none' || s.contender === 'langchain-trim')) {
        rows.push([
          int(budget),
          `\`${reference.contender}\` (reference)`,
          pct(reference.evidenceShare),
          pct(reference.evidenceVerbatim),
          pct(reference.answerInContext),
          pct(reference.retention),
          int(reference.meanTokensSent),
          int(reference.maxTokensSent),
          '–',
        ]);
      }
    }
    out.push(
      table(
        [
          'budget',
          'strategy',
          'evidence',
          'all evidence',
          'answer in context',
          'retention',
          'mean tokens sent',
          'max probe prompt',
          'retrieval p50 / p95 (ms)',
        ],
        rows,
      ),
      '',
    );
    out.push(
      ...lostInCompaction(
        result.summaries.filter((s) => s.dataset === dataset),
        budgets,
      ),
    );
  }
  return out;
}

/**
 * Evidence present against its age when asked (events logged after it), each recall contender beside its
 * strategy alone: without recall the share falls as compaction archives older turns; recall should hold it.
 */
function lostInCompaction(rows: readonly ContenderSummary[], budgets: readonly number[]): string[] {
  const out: string[] = [];
  for (const budget of budgets) {
    const at = rows.filter((s) => s.budgetTokens === budget);
    const pairs = at
      .filter((s) => s.recall !== undefined)
      .map((r) => ({ r, base: at.find((s) => s.contender === recallBase(r.contender) && s.recall === undefined) }));
    if (pairs.length === 0 || pairs[0]!.r.evidenceByAge.every((g) => g.turns === 0)) continue;
    const header = ['evidence age (events after it)', 'evidence events'];
    for (const { r } of pairs) header.push(`\`${recallBase(r.contender)}\` → + ${r.recall === 'bm25' ? 'BM25' : 'hybrid'}`);
    const body = pairs[0]!.r.evidenceByAge.map((g, i) => {
      const cells = [evidenceAgeLabel(i), int(g.turns)];
      for (const { r, base } of pairs) {
        const present = (s: ContenderSummary) => {
          const c = s.evidenceByAge[i]!;
          return pct(c.turns === 0 ? Number.NaN : c.present / c.turns);
        };
        cells.push(pair(base === undefined ? '–' : present(base), present(r)));
      }
      return cells;
    });
    out.push(`#### Lost in compaction, budget ${int(budget)}`, '', table(header, body), '');
  }
  return out;
}

function recallRow(budget: number, r: ContenderSummary, base: ContenderSummary | undefined): string[] {
  const b = (f: (s: ContenderSummary) => string) => (base === undefined ? '–' : f(base));
  return [
    int(budget),
    `\`${recallBase(r.contender)}\` + ${r.recall === 'bm25' ? 'BM25' : 'hybrid'}`,
    pair(
      b((s) => pct(s.evidenceShare)),
      pct(r.evidenceShare),
    ),
    pair(
      b((s) => pct(s.evidenceVerbatim)),
      pct(r.evidenceVerbatim),
    ),
    pair(
      b((s) => pct(s.answerInContext)),
      pct(r.answerInContext),
    ),
    pair(
      b((s) => pct(s.retention)),
      pct(r.retention),
    ),
    pair(
      b((s) => int(s.meanTokensSent)),
      int(r.meanTokensSent),
    ),
    int(r.maxProbeTokens),
    `${ms(r.retrievalP50Ms)} / ${ms(r.retrievalP95Ms)}`,
  ];
}
