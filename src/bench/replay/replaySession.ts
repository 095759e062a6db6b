import { DefaultSessionService } from '../../service/DefaultSessionService.js';
import type { Message } from '../../session/Message.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
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
): void {
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
  const { trigger, strategy } = contender.create(context, options);
  const repository = context.createRepository();
  const service = new DefaultSessionService(repository, { logger: context.logger, tokenCountEstimator: context.estimator });
  context.counter?.reset();
  try {
    await service.create({ userId: 'bench', id: session.replayId });
    let appended = 0;
    for (const [k, point] of session.callPoints.entries()) {
      while (appended < point) await service.appendEvent(session.events[appended++]!);
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
  return metrics;
}

/** Replays a session through a peer library: at each model call it selects from the whole history. */
export async function replayWithPeer(
  session: PreparedSession,
  contender: PeerContender,
  options: ContenderOptions,
  context: ContenderContext,
): Promise<RunMetrics> {
  const metrics = emptyRunMetrics({
    dataset: session.dataset,
    sessionId: session.recorded.sessionId,
    contender: contender.name,
    kind: 'peer',
    budgetTokens: context.budgetTokens,
  });
  const peer = contender.create(context, options);
  peer.prepare(session.history);
  for (const [k, point] of session.callPoints.entries()) {
    const selection = await peer.select(point);
    metrics.totalMs += selection.libraryMs;
    recordCall(metrics, session, k, selection.tokens, selection.messages);
  }
  return metrics;
}
