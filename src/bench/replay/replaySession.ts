import { DefaultSessionService } from '../../service/DefaultSessionService.js';
import type { Message } from '../../session/Message.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { ProviderPreset } from '../../tokens/ModelPrices.js';
import { ConversationCostMeter, type PromptSegmentCoder } from '../cost/ConversationCostMeter.js';
import { ContextSnapshot } from '../metrics/ContextSnapshot.js';
import { orphanedToolResults } from '../metrics/orphanedToolResults.js';
import type { ContenderContext, ContenderOptions, PeerContender, StrategyContender } from '../registry/ContenderRegistry.js';
import type { CountingChatClient } from './CountingChatClient.js';
import type { PreparedSession } from './PreparedSession.js';
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
function askProbes(session: PreparedSession, k: number, messages: readonly Message[], metrics: RunMetrics): void {
  const probes = session.probesAt.get(k);
  if (probes === undefined) return;
  const snapshot = new ContextSnapshot(messages);
  for (const probe of probes) {
    const outcome = snapshot.evaluate(probe, session.recorded.events);
    metrics.probesScored++;
    if (outcome.retained) metrics.probesRetained++;
    if (outcome.evidenceVerbatim) metrics.probesEvidenceVerbatim++;
    if (outcome.answerFound) metrics.probesAnswerFound++;
  }
}

function recordCall(
  metrics: RunMetrics,
  session: PreparedSession,
  k: number,
  tokens: number,
  messages: readonly Message[],
  pricing: { meter: ConversationCostMeter; coder: PromptSegmentCoder } | null,
): void {
  pricing?.meter.call(pricing.coder.request(messages), session.callTimes[k]!, session.replyTokens[k]!);
  metrics.tokensSent.push(tokens);
  metrics.fullTokens.push(session.fullTokens[k]!);
  if (tokens > metrics.budgetTokens) metrics.overBudgetCalls++;
  if (messages.length === 0) metrics.emptyContextCalls++;
  const orphans = orphanedToolResults(messages);
  if (orphans > 0) {
    metrics.orphanCalls++;
    metrics.orphanResults += orphans;
  }
  askProbes(session, k, messages, metrics);
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
  const { trigger, strategy } = contender.create({ ...context, now: () => new Date(clock.now) }, options);
  const pricing = costMeter(context);
  const repository = context.createRepository();
  const service = new DefaultSessionService(repository, { logger: context.logger, tokenCountEstimator: context.estimator });
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
      recordCall(
        metrics,
        session,
        k,
        estimateEventsTokens(window, context.estimator),
        window.map((e) => e.message),
        pricing,
      );
    }
  } finally {
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
