import os from 'node:os';
import type { EmbedFunction, Logger, TokenCountEstimator } from 'session-compaction';
import { openAIEmbeddings } from 'session-compaction/openai';
import { participantNames, resolvePricing, type BenchConfig } from './BenchConfig.js';
import { PromptSegmentCoder } from './cost/ConversationCostMeter.js';
import { conversationFloors } from './cost/conversationFloor.js';
import { loadRecordedData } from './loaders/loadRecordedData.js';
import { aggregateRuns, type ContenderSummary } from './metrics/aggregateRuns.js';
import type { RecordedDataset, RecordedSession } from './recorded/RecordedSession.js';
import { loadLocalEmbedModel, memoizeEmbed } from './embeddings/localEmbedModel.js';
import { checkContenderOptions, type ContenderRegistry } from './registry/ContenderRegistry.js';
import { CountingChatClient } from './replay/CountingChatClient.js';
import { createBenchRepository } from './replay/createBenchRepository.js';
import { createSummarizer } from './replay/createSummarizer.js';
import { PreparedSession } from './replay/PreparedSession.js';
import { replayWithPeer, replayWithStrategy, type ReplayContext } from './replay/replaySession.js';
import type { RunMetrics } from './replay/RunMetrics.js';
import { growthFactors, runScaling, scalingSteps, type ScalingPoint } from './scaling/runScaling.js';

export interface DatasetInfo {
  name: string;
  source?: string;
  sessionsTotal: number;
  sessionsReplayed: number;
  events: number;
  probes: number;
  unscoredProbes: number;
  /**
   * Per provider preset: the mean cost of a conversation that sends every message exactly once, uncached,
   * plus the recorded replies — what no context policy can undercut while still showing the model each
   * message once. A reference for the cost tables.
   */
  sendOnceCost: { preset: string; costPerConversation: number }[];
  /**
   * Per provider preset: `sendOnceCost` plus the system messages re-read from the prompt cache on every call
   * after the first — the floor for any policy that keeps the instructions in every prompt (see
   * `conversationFloors`).
   */
  floorCost: { preset: string; costPerConversation: number }[];
  /**
   * Per provider preset: the whole history sent at every call with perfect caching (each message written
   * once, re-read from the cache on every later call), plus the replies — what keeping everything costs when
   * the cache never misses (see `conversationFloors`).
   */
  perfectCacheCost?: { preset: string; costPerConversation: number }[];
}

/** Tokens sent at each call of one session, per contender: the sawtooth chart. */
export interface SawtoothSeries {
  dataset: string;
  sessionId: string;
  budgetTokens: number;
  series: { contender: string; tokensSent: number[]; fullTokens: number[] }[];
}

export interface BenchResult {
  config: BenchConfig;
  datasets: DatasetInfo[];
  summaries: ContenderSummary[];
  sawtooth: SawtoothSeries[];
  scaling: ScalingPoint[];
  growth: ReturnType<typeof growthFactors>;
  /** Contenders left out, and why (e.g. a peer that does not apply to a dataset). */
  skipped: { contender: string; dataset: string; reason: string; install?: string }[];
  summarizer: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string };
  startedAt: string;
  durationMs: number;
}

export interface BenchProgress {
  start(total: number, phase: string): void;
  tick(label: string): void;
  stop(): void;
}

export interface RunBenchOptions {
  registry: ContenderRegistry;
  estimator: TokenCountEstimator;
  logger: Logger;
  progress?: BenchProgress;
}

/**
 * Replays await only already-settled promises, so timers never fire during them; a progress bar redraws on a
 * timer, hence one trip through the event loop per unit of work.
 */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Evenly spaced, so a quick run still spans a source (τ-bench's first sessions are all task 0). */
export function pickSessions(sessions: readonly RecordedSession[], max: number | undefined): RecordedSession[] {
  if (max === undefined || sessions.length <= max) return [...sessions];
  return Array.from({ length: max }, (_, i) => sessions[Math.floor((i * sessions.length) / max)]!);
}

/**
 * The embed function of the hybrid recall contenders, or why there is none. A local model's vectors are
 * memoised by text for the whole run: every budget and contender replays the same turns.
 */
async function benchEmbedding(
  settings: BenchConfig['embeddings'],
): Promise<{ embed?: EmbedFunction; embedUnavailable?: { reason: string; install: string } }> {
  if (settings === undefined) return {};
  if (!('local' in settings)) {
    return {
      embed: openAIEmbeddings({
        model: settings.model,
        ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      }),
    };
  }
  const loaded = await loadLocalEmbedModel(settings.local);
  if ('unavailable' in loaded) return { embedUnavailable: { reason: loaded.unavailable, install: loaded.install } };
  return { embed: memoizeEmbed(loaded.embed) };
}

/** Replays every chosen session through every contender at every budget, then runs the scaling benchmark. */
export async function runBench(config: BenchConfig, options: RunBenchOptions): Promise<BenchResult> {
  const startedAt = new Date();
  const { registry, estimator, logger, progress } = options;
  const skipped: BenchResult['skipped'] = [];
  const contenders = config.contenders.flatMap((spec) => {
    const reason = registry.unavailableReason(spec.name);
    if (reason !== null && !registry.has(spec.name)) {
      const install = registry.installHint(spec.name);
      skipped.push({ contender: spec.label ?? spec.name, dataset: 'all', reason, ...(install !== null ? { install } : {}) });
      return [];
    }
    const contender = registry.get(spec.name);
    // Before anything runs: a misspelt option would otherwise be ignored for the whole run.
    checkContenderOptions(contender, spec.options ?? {});
    return [{ spec, contender, label: spec.label ?? spec.name }];
  });
  const presets = resolvePricing(config.pricing ?? []);
  const coder = new PromptSegmentCoder(estimator);
  const summarizer = createSummarizer(config.summarizer, estimator, logger);
  const { embed, embedUnavailable } = await benchEmbedding(config.embeddings);
  const counter = new CountingChatClient(summarizer.client, estimator);

  const datasets: RecordedDataset[] = config.data.flatMap((path) =>
    loadRecordedData(path, {
      sources: config.sources,
      locomo: { dateHeaders: config.locomoDateHeaders, speakerNames: config.locomoSpeakerNames },
    }),
  );
  const infos: DatasetInfo[] = [];
  const plan: { dataset: RecordedDataset; sessions: RecordedSession[] }[] = [];
  for (const dataset of datasets) {
    const sessions = pickSessions(dataset.sessions, config.maxSessionsPerDataset);
    plan.push({ dataset, sessions });
    infos.push({
      name: dataset.name,
      ...(dataset.source !== undefined ? { source: dataset.source } : {}),
      sessionsTotal: dataset.sessions.length,
      sessionsReplayed: sessions.length,
      events: sessions.reduce((s, x) => s + x.events.length, 0),
      probes: sessions.reduce((s, x) => s + (x.probes?.length ?? 0), 0),
      unscoredProbes: 0,
      sendOnceCost: presets.map((p) => ({ preset: p.name, costPerConversation: 0 })),
      floorCost: presets.map((p) => ({ preset: p.name, costPerConversation: 0 })),
      perfectCacheCost: presets.map((p) => ({ preset: p.name, costPerConversation: 0 })),
    });
  }

  const units = plan.reduce((s, p) => s + p.sessions.length, 0) * contenders.length * config.budgets.length;
  progress?.start(units, 'replay');
  const runs: RunMetrics[] = [];
  // A failed replay must not leave the progress bar's timer holding the process open.
  try {
    for (const [di, { dataset, sessions }] of plan.entries()) {
      const applicable = contenders.filter(({ contender, label }) => {
        const reason =
          contender.kind === 'peer'
            ? (contender.notApplicable?.(dataset) ?? null)
            : contender.recall === 'hybrid' && embed === undefined
              ? (embedUnavailable?.reason ?? 'no embedding model configured (--embed-model or --embed-local)')
              : null;
        const install = contender.kind === 'strategy' ? embedUnavailable?.install : undefined;
        if (reason !== null)
          skipped.push({ contender: label, dataset: dataset.name, reason, ...(install !== undefined ? { install } : {}) });
        return reason === null;
      });
      for (const recorded of sessions) {
        const prepared = new PreparedSession(
          dataset.name,
          recorded,
          `${dataset.name}:${recorded.sessionId}`,
          estimator,
          config.probeAt,
          config.recordedTimes ?? true,
          participantNames(config),
        );
        infos[di]!.unscoredProbes += prepared.unscoredProbes;
        let systemTokens = 0;
        for (const h of prepared.history) {
          if (h.message.type !== 'system') break;
          systemTokens += h.tokens;
        }
        const floors = conversationFloors(
          {
            inputTokens: prepared.history.reduce((sum, h) => sum + h.tokens, 0),
            outputTokens: prepared.replyTokens.reduce((sum, t) => sum + t, 0),
            systemTokens,
            calls: prepared.callPoints.length,
            historyTokensAtCall: prepared.fullTokens,
          },
          presets,
        );
        floors.forEach((f, i) => {
          infos[di]!.sendOnceCost[i]!.costPerConversation += f.sendOnce / sessions.length;
          infos[di]!.floorCost[i]!.costPerConversation += f.withSystem / sessions.length;
          infos[di]!.perfectCacheCost![i]!.costPerConversation += f.perfectCache / sessions.length;
        });
        for (const budgetTokens of config.budgets) {
          const context: ReplayContext = {
            budgetTokens,
            estimator,
            logger,
            chatClient: counter,
            counter,
            ...(embed !== undefined ? { embed } : {}),
            createRepository: () => createBenchRepository(config.repository),
            presets,
            coder,
          };
          for (const { spec, contender, label } of contenders) {
            if (!applicable.some((a) => a.label === label)) {
              progress?.tick(`${dataset.name} ${label}`);
              await yieldToEventLoop();
              continue;
            }
            const run =
              contender.kind === 'strategy'
                ? await replayWithStrategy(prepared, contender, spec.options ?? {}, context)
                : await replayWithPeer(prepared, contender, spec.options ?? {}, context);
            run.contender = label;
            runs.push(run);
            progress?.tick(`${dataset.name} ${recorded.sessionId} ${label} @${budgetTokens}`);
            await yieldToEventLoop();
          }
        }
      }
    }
  } finally {
    progress?.stop();
  }

  const sawtoothBudget =
    config.sawtoothBudget ?? [...config.budgets].sort((a, b) => Math.abs(a - 8000) - Math.abs(b - 8000))[0] ?? config.budgets[0]!;
  const sawtooth = plan.map(({ dataset, sessions }) => {
    // The session with the most model calls shows the most teeth.
    const longest = [...sessions].sort((a, b) => b.events.length - a.events.length)[0];
    const series = runs
      .filter((r) => r.dataset === dataset.name && r.sessionId === longest?.sessionId && r.budgetTokens === sawtoothBudget)
      .map((r) => ({ contender: r.contender, tokensSent: r.tokensSent, fullTokens: r.fullTokens }));
    return { dataset: dataset.name, sessionId: longest?.sessionId ?? '', budgetTokens: sawtoothBudget, series };
  });

  let scaling: ScalingPoint[] = [];
  if (config.scaling !== null) {
    const names = config.scaling.contenders ?? contenders.map((c) => c.spec.name).filter((n) => n !== 'none');
    const specs = names.map((name) => contenders.find((c) => c.spec.name === name)?.spec ?? { name });
    const scalingOptions = { config: config.scaling, contenders: specs, registry, estimator, logger, chatClient: counter };
    progress?.start(scalingSteps(scalingOptions), 'scaling');
    scaling = await runScaling({ ...scalingOptions, onStep: (label) => progress?.tick(label) });
    progress?.stop();
  }

  return {
    config,
    datasets: infos,
    summaries: aggregateRuns(runs),
    sawtooth,
    scaling,
    growth: growthFactors(scaling),
    skipped,
    summarizer: summarizer.description,
    environment: {
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
    },
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
  };
}
