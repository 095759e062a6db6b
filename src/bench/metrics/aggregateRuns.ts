import type { RunMetrics } from '../replay/RunMetrics.js';
import { max, mean, percentile, sum } from './stats.js';

/** One row of the report: a contender on one dataset at one budget, over all its sessions. */
export interface ContenderSummary {
  dataset: string;
  contender: string;
  kind: 'strategy' | 'peer';
  budgetTokens: number;
  sessions: number;
  calls: number;
  meanTokensSent: number;
  maxTokensSent: number;
  totalTokensSent: number;
  /** Σ uncompacted history tokens / Σ tokens sent, over all calls. */
  compressionRatio: number;
  compactions: number;
  compactionP50Ms: number;
  compactionP95Ms: number;
  totalMs: number;
  summarizerCalls: number;
  summarizerFailures: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
  probesScored: number;
  /** Shares in [0, 1]; NaN when no probe was scored. */
  retention: number;
  evidenceVerbatim: number;
  answerFound: number;
  orphanCalls: number;
  orphanResults: number;
  overBudgetShare: number;
  emptyContextShare: number;
}

const share = (part: number, whole: number) => (whole === 0 ? Number.NaN : part / whole);

export function aggregateRuns(runs: readonly RunMetrics[]): ContenderSummary[] {
  const groups = new Map<string, RunMetrics[]>();
  for (const run of runs) {
    const key = `${run.dataset}\u0000${run.contender}\u0000${run.budgetTokens}`;
    const list = groups.get(key) ?? [];
    list.push(run);
    groups.set(key, list);
  }
  const out: ContenderSummary[] = [];
  for (const list of groups.values()) {
    const first = list[0]!;
    const sent = list.flatMap((r) => r.tokensSent);
    const full = list.flatMap((r) => r.fullTokens);
    const compactionMs = list.flatMap((r) => r.compactionMs);
    const total = (f: (r: RunMetrics) => number) => sum(list.map(f));
    const scored = total((r) => r.probesScored);
    out.push({
      dataset: first.dataset,
      contender: first.contender,
      kind: first.kind,
      budgetTokens: first.budgetTokens,
      sessions: list.length,
      calls: sent.length,
      meanTokensSent: mean(sent),
      maxTokensSent: max(sent),
      totalTokensSent: sum(sent),
      compressionRatio: share(sum(full), sum(sent)),
      compactions: total((r) => r.compactions),
      compactionP50Ms: percentile(compactionMs, 50),
      compactionP95Ms: percentile(compactionMs, 95),
      totalMs: total((r) => r.totalMs),
      summarizerCalls: total((r) => r.summarizerCalls),
      summarizerFailures: total((r) => r.summarizerFailures),
      summarizerInputTokens: total((r) => r.summarizerInputTokens),
      summarizerOutputTokens: total((r) => r.summarizerOutputTokens),
      probesScored: scored,
      retention: share(
        total((r) => r.probesRetained),
        scored,
      ),
      evidenceVerbatim: share(
        total((r) => r.probesEvidenceVerbatim),
        scored,
      ),
      answerFound: share(
        total((r) => r.probesAnswerFound),
        scored,
      ),
      orphanCalls: total((r) => r.orphanCalls),
      orphanResults: total((r) => r.orphanResults),
      overBudgetShare: share(
        total((r) => r.overBudgetCalls),
        sent.length,
      ),
      emptyContextShare: share(
        total((r) => r.emptyContextCalls),
        sent.length,
      ),
    });
  }
  return out;
}
