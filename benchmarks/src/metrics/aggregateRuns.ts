import type { RunMetrics } from '../replay/RunMetrics.js';
import type { CostTally } from '../cost/ConversationCostMeter.js';
import { addEvidenceAges, emptyEvidenceAges, EVIDENCE_AGE_EDGES, type EvidenceAgeCount } from './evidenceAge.js';
import { max, mean, percentile, sum } from './stats.js';

/** What a contender's conversations cost under one provider preset, over all its sessions. */
export interface CostSummary {
  preset: string;
  /** Mean cost of one conversation, in the preset's currency. */
  costPerConversation: number;
  /** Total cost / model calls. */
  costPerTurn: number;
  totalCost: number;
  /** Share of input tokens that were cache hits (NaN with no input). */
  prefixStability: number;
  /** Share of input tokens written to the cache. */
  cacheWriteShare: number;
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  /**
   * True when not caching at all was cheaper for this contender (a provider that bills cache writes, and a
   * prefix that changes every call): the cost columns then show the cheaper, uncached figure.
   */
  cachingOff: boolean;
  /** Mean cost of a conversation with perfect caching of this contender's own prompts (see CostTally). */
  perfectCachePerConversation: number;
  /** Of `costPerConversation`, what compactions cost (the summariser's calls). */
  compactionCostPerConversation: number;
}

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
  /**
   * The headline measure: the share of a probe's evidence events (the turns its annotators cite) whose whole
   * text is in the prompt, averaged over the scored probes (each question weighs the same). Strict: an excerpt
   * or snippet of a turn does not count.
   */
  evidenceShare: number;
  /** Evidence events present over all evidence events cited (a probe citing five weighs five). */
  evidenceTurnShare: number;
  evidenceTurns: number;
  /** Probes whose every evidence event is in the prompt whole (the all-evidence share). */
  evidenceVerbatim: number;
  /** Evidence present by its age when asked (events after it), groups starting at `from`: lost in compaction. */
  evidenceByAge: (EvidenceAgeCount & { from: number })[];
  answerFound: number;
  orphanCalls: number;
  orphanResults: number;
  overBudgetShare: number;
  emptyContextShare: number;
  /** One entry per provider preset of the run. */
  cost: CostSummary[];
  /**
   * Answer found, over the probes that have an answer (`answerFound` divides by every scored probe, LoCoMo's
   * adversarial ones included, whose answer is an abstention that no context contains).
   */
  answerInContext: number;
  probesAnswerable: number;
  /** Recall contenders: the retriever, its latency (index updates included) and the largest probe prompt. */
  recall?: 'bm25' | 'hybrid';
  retrievalP50Ms: number;
  retrievalP95Ms: number;
  maxProbeTokens: number;
}

function costSummaries(list: readonly RunMetrics[], calls: number): CostSummary[] {
  const byPreset = new Map<string, CostTally[]>();
  for (const run of list) for (const t of run.cost) byPreset.set(t.preset, [...(byPreset.get(t.preset) ?? []), t]);
  return [...byPreset.entries()].map(([preset, tallies]) => {
    const total = (f: (t: CostTally) => number) => sum(tallies.map(f));
    const cached = total((t) => t.cost);
    const uncached = total((t) => t.costWithoutCache);
    const cachingOff = uncached < cached;
    const totalCost = cachingOff ? uncached : cached;
    const input = total((t) => t.inputTokens);
    return {
      preset,
      perfectCachePerConversation: total((t) => t.costPerfectCache) / list.length,
      compactionCostPerConversation: total((t) => t.compactionCost) / list.length,
      costPerConversation: totalCost / list.length,
      costPerTurn: calls === 0 ? Number.NaN : totalCost / calls,
      totalCost,
      prefixStability: cachingOff
        ? 0
        : share(
            total((t) => t.cachedTokens),
            input,
          ),
      cacheWriteShare: cachingOff
        ? 0
        : share(
            total((t) => t.cacheWriteTokens),
            input,
          ),
      inputTokens: input,
      cachedTokens: cachingOff ? 0 : total((t) => t.cachedTokens),
      cacheWriteTokens: cachingOff ? 0 : total((t) => t.cacheWriteTokens),
      cachingOff,
    };
  });
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
      evidenceShare: share(
        total((r) => r.probeEvidenceShares),
        scored,
      ),
      evidenceTurnShare: share(
        total((r) => r.evidenceTurnsPresent),
        total((r) => r.evidenceTurns),
      ),
      evidenceTurns: total((r) => r.evidenceTurns),
      evidenceVerbatim: share(
        total((r) => r.probesEvidenceVerbatim),
        scored,
      ),
      evidenceByAge: list
        .reduce((into, r) => addEvidenceAges(into, r.evidenceByAge), emptyEvidenceAges())
        .map((c, i) => ({ ...c, from: EVIDENCE_AGE_EDGES[i]! })),
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
      cost: costSummaries(list, sent.length),
      answerInContext: share(
        total((r) => r.probesAnswerFound),
        total((r) => r.probesAnswerable),
      ),
      probesAnswerable: total((r) => r.probesAnswerable),
      ...(first.recall !== undefined ? { recall: first.recall } : {}),
      retrievalP50Ms: percentile(
        list.flatMap((r) => r.retrievalMs),
        50,
      ),
      retrievalP95Ms: percentile(
        list.flatMap((r) => r.retrievalMs),
        95,
      ),
      maxProbeTokens: max(list.flatMap((r) => r.probeTokens)),
    });
  }
  return out;
}
