import { DefaultSessionService, Messages, type Message, InvalidArgumentError, type SessionRepository } from 'session-compaction';
import { formatMessage, estimateEventsTokens, type ProviderPreset } from 'session-compaction/spi';
import {
  Bm25Retriever,
  ContextAssembler,
  type RecallSettings,
  RECALL_BLOCK_HEADER,
  EmbeddingRetriever,
  HybridRetriever,
  type Retriever,
} from 'session-compaction/recall';
import { ConversationCostMeter, type PromptSegmentCoder } from '../cost/ConversationCostMeter.js';
import { ContextSnapshot } from '../metrics/ContextSnapshot.js';
import { evidenceAgeGroup } from '../metrics/evidenceAge.js';
import { orphanedToolResults } from '../metrics/orphanedToolResults.js';
import type { ContenderContext, ContenderOptions, PeerContender, StrategyContender } from '../registry/ContenderRegistry.js';
import type { CountingChatClient } from './CountingChatClient.js';
import type { PreparedSession } from './PreparedSession.js';
import type { RecordedProbe } from '../recorded/RecordedSession.js';
import { emptyRunMetrics, type RunMetrics } from './RunMetrics.js';

export interface ReplayContext extends ContenderContext {
  createRepository(): SessionRepository;
  /** The same summariser as `chatClient`, read for its counters. */
  counter?: CountingChatClient;
  /** Each call is priced under these presets (prompt cache included); none = no cost figures. */
  presets?: readonly ProviderPreset[];
  /** Shared by every contender of a run, so that the same message is the same cache key for all. */
  coder?: PromptSegmentCoder;
}

/** The cost meter of one replay, or null when the run prices nothing. */
function costMeter(context: Partial<ReplayContext>): { meter: ConversationCostMeter; coder: PromptSegmentCoder } | null {
  if (context.presets === undefined || context.presets.length === 0 || context.coder === undefined) return null;
  return { meter: new ConversationCostMeter(context.presets), coder: context.coder };
}

/** Scores the probes asked at call point `k` against what is sent there. */
function askProbes(
  session: PreparedSession,
  k: number,
  messages: readonly Message[],
  metrics: RunMetrics,
  probes: readonly RecordedProbe[] | undefined = session.probesAt.get(k),
): void {
  if (probes === undefined) return;
  const snapshot = new ContextSnapshot(messages);
  // Events of the log when the probe is asked: an evidence event's age is how many came after it.
  const seen = session.callPoints[k]!;
  for (const probe of probes) {
    const outcome = snapshot.evaluate(probe, session.recorded.events);
    metrics.probesScored++;
    const found = outcome.evidencePresent.filter((e) => e.present).length;
    if (outcome.evidencePresent.length > 0) metrics.probeEvidenceShares += found / outcome.evidencePresent.length;
    for (const { index, present } of outcome.evidencePresent) {
      const group = metrics.evidenceByAge[evidenceAgeGroup(Math.max(0, seen - 1 - index))]!;
      metrics.evidenceTurns++;
      group.turns++;
      if (present) {
        metrics.evidenceTurnsPresent++;
        group.present++;
      }
    }
    if (outcome.retained) metrics.probesRetained++;
    if (outcome.evidenceVerbatim) metrics.probesEvidenceVerbatim++;
    if (outcome.answerFound) metrics.probesAnswerFound++;
    if (probe.distractor === undefined) metrics.probesAnswerable++;
  }
}

/**
 * Recall contenders ask each probe the way a user would: its question is the query, and the prompt is
 * assembled for it within the budget (the question's own tokens reserved), then scored.
 */
async function askProbesWithRecall(
  session: PreparedSession,
  k: number,
  assembler: ContextAssembler,
  context: ReplayContext,
  metrics: RunMetrics,
  settings: RecallSettings,
): Promise<void> {
  for (const probe of session.probesAt.get(k) ?? []) {
    const questionTokens = context.estimator.estimate(formatMessage(Messages.user(probe.question)));
    const assembled = await assembler.assemble({
      sessionId: session.replayId,
      maxTokens: context.budgetTokens,
      recall: settings,
      reserveTokens: Math.min(questionTokens, context.budgetTokens - 1),
      query: probe.question,
      // Asked when the replay has reached call k: "yesterday" in a question is read from then.
      now: new Date(session.callTimes[k]!),
    });
    metrics.probeTokens.push(assembled.tokens.total + questionTokens);
    askProbes(session, k, assembled.messages, metrics, [probe]);
  }
}

/**
 * A recall contender's `recall` option: `maxRatio` caps the block at that share of the budget and sets that
 * room aside — the strategy compacts within the rest — so the assembler never trims the window's oldest
 * messages to make room (a trim shifts the prompt's prefix on every call, and the provider's cache misses);
 * `share`, `placement`, `neighbors` and `limit` are RecallSettings'; `breakpoint` is where a
 * breakpoint-rule cache (Anthropic) is marked: 'history' (default; the end of the history, before the block, as
 * AnthropicChatProvider does) or 'last-message' (the last message, block included). A hybrid contender also reads
 * `fusion`: HybridRetriever's `k` and `weights` (BM25's, then the embeddings'; [0, 1] ranks by embeddings alone).
 * The other options go to the strategy.
 */
function recallOptions(
  contender: StrategyContender,
  options: ContenderOptions,
  budgetTokens: number,
): { settings: RecallSettings; rest: ContenderOptions; historyBreakpoint: boolean; fusion: Fusion } {
  const { recall, ...rest } = options;
  if (recall === undefined) return { settings: {}, rest, historyBreakpoint: true, fusion: {} };
  if (contender.recall === undefined)
    throw new InvalidArgumentError(`${contender.name}: the recall option needs a recall contender`);
  if (recall === null || typeof recall !== 'object' || Array.isArray(recall)) {
    throw new InvalidArgumentError(
      `${contender.name}: recall must be an object {maxRatio?, share?, placement?, neighbors?, limit?, breakpoint?, fusion?}`,
    );
  }
  const { maxRatio, share, placement, neighbors, limit, breakpoint, fusion, ...unknown } = recall as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length > 0) throw new InvalidArgumentError(`${contender.name}: unknown recall option ${extra[0]}`);
  const ratio = (key: string, v: unknown): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !(v > 0 && v <= 1))
      throw new InvalidArgumentError(`${contender.name}: recall.${key} must be in (0, 1]`);
    return v;
  };
  const max = ratio('maxRatio', maxRatio);
  const s = ratio('share', share);
  if (placement !== undefined && placement !== 'before-last-user' && placement !== 'after-system') {
    throw new InvalidArgumentError(`${contender.name}: recall.placement must be 'before-last-user' or 'after-system'`);
  }
  const count = (key: string, v: unknown, min: number): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
      throw new InvalidArgumentError(`${contender.name}: recall.${key} must be an integer >= ${min}`);
    return v;
  };
  if (breakpoint !== undefined && breakpoint !== 'history' && breakpoint !== 'last-message') {
    throw new InvalidArgumentError(`${contender.name}: recall.breakpoint must be 'history' or 'last-message'`);
  }
  const n = count('neighbors', neighbors, 0);
  const l = count('limit', limit, 1);
  const settings: RecallSettings = {
    ...(n !== undefined ? { neighbors: n } : {}),
    ...(l !== undefined ? { limit: l } : {}),
    ...(max !== undefined ? { maxTokens: Math.max(1, Math.floor(max * budgetTokens)) } : {}),
    ...(s !== undefined ? { share: s } : {}),
    ...(placement !== undefined ? { placement } : {}),
  };
  return { settings, rest, historyBreakpoint: breakpoint !== 'last-message', fusion: fusionOptions(contender, fusion) };
}

/** How a hybrid contender fuses BM25's ranking with the embeddings' (HybridRetriever's options). */
interface Fusion {
  k?: number;
  weights?: [number, number];
}

function fusionOptions(contender: StrategyContender, fusion: unknown): Fusion {
  if (fusion === undefined) return {};
  if (contender.recall !== 'hybrid') throw new InvalidArgumentError(`${contender.name}: recall.fusion needs a hybrid contender`);
  if (fusion === null || typeof fusion !== 'object' || Array.isArray(fusion))
    throw new InvalidArgumentError(`${contender.name}: recall.fusion must be an object {k?, weights?}`);
  const { k, weights, ...unknown } = fusion as Record<string, unknown>;
  const extra = Object.keys(unknown);
  if (extra.length > 0) throw new InvalidArgumentError(`${contender.name}: unknown recall.fusion option ${extra[0]}`);
  if (k !== undefined && (typeof k !== 'number' || !Number.isFinite(k) || k < 0))
    throw new InvalidArgumentError(`${contender.name}: recall.fusion.k must be a finite number >= 0`);
  const isWeight = (w: unknown): w is number => typeof w === 'number' && Number.isFinite(w) && w >= 0;
  if (weights !== undefined && (!Array.isArray(weights) || weights.length !== 2 || !weights.every(isWeight)))
    throw new InvalidArgumentError(`${contender.name}: recall.fusion.weights must be two numbers >= 0 (BM25, embeddings)`);
  return {
    ...(k !== undefined ? { k } : {}),
    ...(weights !== undefined ? { weights: [weights[0] as number, weights[1] as number] } : {}),
  };
}

/** The retriever of a recall contender over the replay's service, timing every call into `metrics`. */
function recallRetriever(
  kind: 'bm25' | 'hybrid',
  service: DefaultSessionService,
  context: ReplayContext,
  metrics: RunMetrics,
  fusion: Fusion,
): { retriever: Retriever; close(): void } {
  const bm25 = new Bm25Retriever({ sessionService: service });
  const inner =
    kind === 'bm25'
      ? bm25
      : new HybridRetriever({
          retrievers: [bm25, new EmbeddingRetriever({ sessionService: service, embed: context.embed! })],
          ...fusion,
        });
  return {
    retriever: {
      async retrieve(request) {
        const start = performance.now();
        try {
          return await inner.retrieve(request);
        } finally {
          metrics.retrievalMs.push(performance.now() - start);
        }
      },
    },
    close: () => bm25.close(),
  };
}

/**
 * With a recall block, the breakpoint a cache-aware client puts at the end of the stable history (what
 * AnthropicChatProvider's `cacheBreakpoints: 'auto'` does): on the message before the block, in the request's
 * order (system messages first). The block and what follows it are processed uncached, never written. Without
 * a block: undefined (the breakpoint on the last message).
 */
function historyBreakpoint(messages: readonly Message[]): number[] | undefined {
  const systems = messages.filter((m) => m.type === 'system').length;
  const rest = messages.filter((m) => m.type !== 'system');
  const block = rest.findIndex((m) => m.type === 'user' && m.text.startsWith(RECALL_BLOCK_HEADER));
  if (block < 0) return undefined;
  const at = systems + block - 1;
  return at >= 0 ? [at] : [];
}

function recordCall(
  metrics: RunMetrics,
  session: PreparedSession,
  k: number,
  tokens: number,
  messages: readonly Message[],
  pricing: { meter: ConversationCostMeter; coder: PromptSegmentCoder } | null,
  probes = true,
  breakAtHistory = true,
): void {
  const breakpoints = breakAtHistory ? historyBreakpoint(messages) : undefined;
  pricing?.meter.call(pricing.coder.request(messages), session.callTimes[k]!, session.replyTokens[k]!, breakpoints);
  metrics.tokensSent.push(tokens);
  metrics.fullTokens.push(session.fullTokens[k]!);
  if (tokens > metrics.budgetTokens) metrics.overBudgetCalls++;
  if (messages.length === 0) metrics.emptyContextCalls++;
  const orphans = orphanedToolResults(messages);
  if (orphans > 0) {
    metrics.orphanCalls++;
    metrics.orphanResults += orphans;
  }
  if (probes) askProbes(session, k, messages, metrics);
}

/**
 * Replays a session event by event through DefaultSessionService: at every model call the service
 * compacts (trigger + strategy + CAS write), and the active window it returns is what is "sent".
 */
export async function replayWithStrategy(
  session: PreparedSession,
  contender: StrategyContender,
  options: ContenderOptions,
  context: ReplayContext,
): Promise<RunMetrics> {
  const metrics = emptyRunMetrics({
    dataset: session.dataset,
    sessionId: session.recorded.sessionId,
    contender: contender.name,
    kind: 'strategy',
    budgetTokens: context.budgetTokens,
  });
  const clock = { now: session.callTimes[0] ?? 0 };
  const recallSetup = recallOptions(contender, options, context.budgetTokens);
  // A capped block has its room set aside: the strategy compacts within what the block leaves.
  const strategyBudget = context.budgetTokens - (recallSetup.settings.maxTokens ?? 0);
  const { trigger, strategy } = contender.create(
    { ...context, budgetTokens: strategyBudget, now: () => new Date(clock.now) },
    recallSetup.rest,
  );
  const pricing = costMeter(context);
  const repository = context.createRepository();
  const service = new DefaultSessionService(repository, { logger: context.logger, tokenCountEstimator: context.estimator });
  if (contender.recall !== undefined) metrics.recall = contender.recall;
  const recall =
    contender.recall === undefined ? null : recallRetriever(contender.recall, service, context, metrics, recallSetup.fusion);
  const assembler =
    recall === null
      ? null
      : new ContextAssembler({ sessionService: service, retriever: recall.retriever, tokenCountEstimator: context.estimator });
  context.counter?.reset();
  try {
    await service.create({ userId: 'bench', id: session.replayId });
    let appended = 0;
    for (const [k, point] of session.callPoints.entries()) {
      while (appended < point) await service.appendEvent(session.events[appended++]!);
      clock.now = session.callTimes[k]!;
      const start = performance.now();
      const result = await service.compact(session.replayId, trigger, strategy);
      const elapsed = performance.now() - start;
      metrics.totalMs += elapsed;
      if (!result.isNoop()) {
        metrics.compactions++;
        metrics.compactionMs.push(elapsed);
      }
      const window = result.compactedEvents;
      if (assembler === null) {
        recordCall(
          metrics,
          session,
          k,
          estimateEventsTokens(window, context.estimator),
          window.map((e) => e.message),
          pricing,
        );
        continue;
      }
      // With recall, what is sent is the assembled prompt for the call's last user message.
      const assembleStart = performance.now();
      const assembled = await assembler.assemble({
        sessionId: session.replayId,
        maxTokens: context.budgetTokens,
        recall: recallSetup.settings,
        now: new Date(session.callTimes[k]!),
      });
      metrics.totalMs += performance.now() - assembleStart;
      recordCall(metrics, session, k, assembled.tokens.total, assembled.messages, pricing, false, recallSetup.historyBreakpoint);
      await askProbesWithRecall(session, k, assembler, context, metrics, recallSetup.settings);
    }
  } finally {
    recall?.close();
    await repository.close?.();
  }
  if (context.counter !== undefined) {
    metrics.summarizerCalls = context.counter.calls;
    metrics.summarizerFailures = context.counter.failures;
    metrics.summarizerInputTokens = context.counter.inputTokens;
    metrics.summarizerOutputTokens = context.counter.outputTokens;
  }
  if (pricing !== null) {
    pricing.meter.summarizer(metrics.summarizerInputTokens, metrics.summarizerOutputTokens);
    metrics.cost = pricing.meter.tallies;
  }
  return metrics;
}

/** Replays a session through a peer library: at each model call it selects from the whole history. */
export async function replayWithPeer(
  session: PreparedSession,
  contender: PeerContender,
  options: ContenderOptions,
  context: ContenderContext & Partial<Pick<ReplayContext, 'presets' | 'coder'>>,
): Promise<RunMetrics> {
  const metrics = emptyRunMetrics({
    dataset: session.dataset,
    sessionId: session.recorded.sessionId,
    contender: contender.name,
    kind: 'peer',
    budgetTokens: context.budgetTokens,
  });
  const peer = contender.create(context, options);
  const pricing = costMeter(context);
  peer.prepare(session.history);
  for (const [k, point] of session.callPoints.entries()) {
    const selection = await peer.select(point);
    metrics.totalMs += selection.libraryMs;
    recordCall(metrics, session, k, selection.tokens, selection.messages, pricing);
  }
  if (pricing !== null) metrics.cost = pricing.meter.tallies;
  return metrics;
}
