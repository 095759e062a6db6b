import {
  type Logger,
  DefaultSessionService,
  SessionEvent,
  type TokenCountEstimator,
  type ChatClient,
  type Message,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import type { BenchRepositoryKind, ContenderSpec, ScalingConfig } from '../BenchConfig.js';
import type {
  ContenderContext,
  ContenderRegistry,
  HistoryItem,
  PeerContender,
  StrategyContender,
} from '../registry/ContenderRegistry.js';
import { createBenchRepository } from '../replay/createBenchRepository.js';
import { syntheticMessages } from './syntheticSession.js';

export interface ScalingPoint {
  contender: string;
  /** 'memory' / 'sqlite' for our strategies; 'none' for peers, which keep no store. */
  repository: BenchRepositoryKind | 'none';
  events: number;
  /** Appending the events one by one (not part of the compaction cost). */
  fillMs: number;
  /** One compact() over the whole session (or one peer call over the whole history). */
  compactMs: number;
  archived: number;
  tokensBefore: number;
  tokensAfter: number;
}

export interface ScalingOptions {
  config: ScalingConfig;
  contenders: readonly ContenderSpec[];
  registry: ContenderRegistry;
  estimator: TokenCountEstimator;
  chatClient?: ChatClient;
  logger: Logger;
  onStep?: (label: string) => void;
}

/** How many scaling measurements `runScaling` will make, for the progress bar. */
export function scalingSteps(options: Pick<ScalingOptions, 'config' | 'contenders' | 'registry'>): number {
  let n = 0;
  for (const spec of options.contenders) {
    const kind = options.registry.get(spec.name).kind;
    n += options.config.sizes.length * (kind === 'peer' ? 1 : options.config.repositories.length);
  }
  return n;
}

/** Sessions this long are measured once even when `repeats` asks for more: one fill takes tens of seconds. */
const SINGLE_SHOT_EVENTS = 100_000;

type Measured = Omit<ScalingPoint, 'contender'>;

async function measurePeer(spec: ContenderSpec, options: ScalingOptions, messages: readonly Message[]): Promise<Measured> {
  const { estimator } = options;
  const sessionId = `scaling-${messages.length}`;
  const history: HistoryItem[] = messages.map((message, index) => {
    const event = SessionEvent.create({ sessionId, id: `s${index}`, message });
    return { index, message, tokens: estimateEventsTokens([event], estimator) };
  });
  const contender = options.registry.get(spec.name) as PeerContender;
  const peer = contender.create(contextFor(options), spec.options ?? {});
  peer.prepare(history);
  const selection = await peer.select(history.length);
  return {
    repository: 'none',
    events: messages.length,
    fillMs: 0,
    compactMs: selection.libraryMs,
    archived: history.length - selection.messages.length,
    tokensBefore: history.reduce((sum, h) => sum + h.tokens, 0),
    tokensAfter: selection.tokens,
  };
}

async function measureStrategy(
  spec: ContenderSpec,
  options: ScalingOptions,
  messages: readonly Message[],
  kind: BenchRepositoryKind,
): Promise<Measured> {
  const { estimator, logger } = options;
  const sessionId = `scaling-${kind}-${messages.length}`;
  const events = messages.map((message, i) =>
    SessionEvent.create({ sessionId, id: `s${i}`, message, timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000) }),
  );
  // Warms the token memo (see runScaling) and gives the "before" figure.
  const tokensBefore = estimateEventsTokens(events, estimator);
  const repository = createBenchRepository(kind);
  try {
    const service = new DefaultSessionService(repository, { logger, tokenCountEstimator: estimator });
    await service.create({ userId: 'bench', id: sessionId });
    const fillStart = performance.now();
    for (const e of events) await service.appendEvent(e);
    const fillMs = performance.now() - fillStart;
    const contender = options.registry.get(spec.name) as StrategyContender;
    const { trigger, strategy } = contender.create(contextFor(options), spec.options ?? {});
    const start = performance.now();
    const result = await service.compact(sessionId, trigger, strategy);
    const compactMs = performance.now() - start;
    return {
      repository: kind,
      events: messages.length,
      fillMs,
      compactMs,
      archived: result.archivedEvents.length,
      tokensBefore,
      tokensAfter: estimateEventsTokens(result.compactedEvents, estimator),
    };
  } finally {
    await repository.close?.();
  }
}

function contextFor(options: ScalingOptions): ContenderContext {
  const context: ContenderContext = {
    budgetTokens: options.config.budgetTokens,
    estimator: options.estimator,
    logger: options.logger,
  };
  if (options.chatClient !== undefined) context.chatClient = options.chatClient;
  return context;
}

/**
 * Compaction cost against session length: a synthetic session of N events, all active, is appended and then
 * compacted once. Token estimates are warmed first, as in a live session whose trigger has counted every
 * event as it arrived, so the figure is the compaction itself, not first-time tokenisation. A warm-up pass
 * at the smallest size is discarded, and each point is the median of `repeats` measurements.
 */
export async function runScaling(options: ScalingOptions): Promise<ScalingPoint[]> {
  const { config, registry } = options;
  const repeats = config.repeats ?? 1;
  const points: ScalingPoint[] = [];
  const smallest = syntheticMessages(Math.min(...config.sizes));
  for (const spec of options.contenders) {
    if (registry.get(spec.name).kind === 'peer') await measurePeer(spec, options, smallest);
    else await measureStrategy(spec, options, smallest, 'memory');
  }
  for (const size of config.sizes) {
    const messages = syntheticMessages(size);
    const times = size >= SINGLE_SHOT_EVENTS ? 1 : repeats;
    for (const spec of options.contenders) {
      const label = spec.label ?? spec.name;
      const kinds: (BenchRepositoryKind | 'none')[] = registry.get(spec.name).kind === 'peer' ? ['none'] : config.repositories;
      for (const kind of kinds) {
        const samples: Measured[] = [];
        for (let r = 0; r < times; r++) {
          samples.push(
            kind === 'none' ? await measurePeer(spec, options, messages) : await measureStrategy(spec, options, messages, kind),
          );
        }
        samples.sort((a, b) => a.compactMs - b.compactMs);
        points.push({ contender: label, ...samples[Math.floor(samples.length / 2)]! });
        options.onStep?.(`${label} ${kind} ${size}`);
        // Lets a progress bar redraw (see runBench).
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }
  return points;
}

/** Time at 10N over time at N, for each contender/repository and each consecutive pair of sizes. */
export function growthFactors(
  points: readonly ScalingPoint[],
): { contender: string; repository: string; from: number; to: number; factor: number }[] {
  const out: { contender: string; repository: string; from: number; to: number; factor: number }[] = [];
  const key = (p: ScalingPoint) => `${p.contender}\u0000${p.repository}`;
  const groups = new Map<string, ScalingPoint[]>();
  for (const p of points) groups.set(key(p), [...(groups.get(key(p)) ?? []), p]);
  for (const list of groups.values()) {
    const sorted = [...list].sort((a, b) => a.events - b.events);
    for (let i = 1; i < sorted.length; i++) {
      const a = sorted[i - 1]!;
      const b = sorted[i]!;
      const perTenX = Math.pow(b.compactMs / Math.max(a.compactMs, 1e-6), 1 / Math.log10(b.events / a.events));
      out.push({ contender: a.contender, repository: a.repository, from: a.events, to: b.events, factor: perTenX });
    }
  }
  return out;
}
