import type { CostTally } from '../cost/ConversationCostMeter.js';
import { emptyEvidenceAges, type EvidenceAgeCount } from '../metrics/evidenceAge.js';

/** What one contender did on one session at one budget. Aggregated by aggregateRuns for the report. */
export interface RunMetrics {
  dataset: string;
  sessionId: string;
  contender: string;
  kind: 'strategy' | 'peer';
  budgetTokens: number;
  /** Tokens sent at each model call (our active window, or the peer's selection). */
  tokensSent: number[];
  /** Tokens of the whole uncompacted history at each call. */
  fullTokens: number[];
  compactions: number;
  /** Duration of each compact() that archived something (ours only). */
  compactionMs: number[];
  /** All time spent deciding what to send: every compact() call (ours) or every library call (peers). */
  totalMs: number;
  summarizerCalls: number;
  summarizerFailures: number;
  summarizerInputTokens: number;
  summarizerOutputTokens: number;
  probesScored: number;
  probesRetained: number;
  probesEvidenceVerbatim: number;
  probesAnswerFound: number;
  /** Evidence events of the scored probes (one per probe that cites it), and how many were in the prompt whole. */
  evidenceTurns: number;
  evidenceTurnsPresent: number;
  /** Σ over scored probes of the share of its evidence events in the prompt (each question weighs the same). */
  probeEvidenceShares: number;
  /** The same, grouped by the evidence's age when asked (EVIDENCE_AGE_EDGES): the lost-in-compaction curve. */
  evidenceByAge: EvidenceAgeCount[];
  /** Model calls whose context held a tool result without its call, and how many such results in all. */
  orphanCalls: number;
  orphanResults: number;
  overBudgetCalls: number;
  /** Model calls sent with no message at all: the strategy or peer dropped everything. */
  emptyContextCalls: number;
  /** What the conversation cost under each provider preset of the run, prompt cache included. */
  cost: CostTally[];
  /** Probes that have an answer to find (LoCoMo's adversarial ones have none: they are scored on evidence only). */
  probesAnswerable: number;
  /** Recall contenders: which retriever built the prompts. */
  recall?: 'bm25' | 'hybrid';
  /** Recall contenders: duration of every retriever call (index updates included). */
  retrievalMs: number[];
  /** Recall contenders: tokens of each probe's prompt (its question included). */
  probeTokens: number[];
}

export function emptyRunMetrics(
  init: Pick<RunMetrics, 'dataset' | 'sessionId' | 'contender' | 'kind' | 'budgetTokens'>,
): RunMetrics {
  return {
    ...init,
    tokensSent: [],
    fullTokens: [],
    compactions: 0,
    compactionMs: [],
    totalMs: 0,
    summarizerCalls: 0,
    summarizerFailures: 0,
    summarizerInputTokens: 0,
    summarizerOutputTokens: 0,
    probesScored: 0,
    probesRetained: 0,
    probesEvidenceVerbatim: 0,
    probesAnswerFound: 0,
    evidenceTurns: 0,
    evidenceTurnsPresent: 0,
    probeEvidenceShares: 0,
    evidenceByAge: emptyEvidenceAges(),
    orphanCalls: 0,
    orphanResults: 0,
    overBudgetCalls: 0,
    emptyContextCalls: 0,
    cost: [],
    probesAnswerable: 0,
    retrievalMs: [],
    probeTokens: [],
  };
}
