import { InvalidArgumentError, providerPreset } from 'session-compaction';
import { requireModelPrices, requirePromptCacheRules, type ProviderPreset } from 'session-compaction/spi';
import { LOCAL_EMBED_MODELS, type LocalEmbedModelName } from './embeddings/localEmbedModel.js';
import { RECORDED_SOURCES, type RecordedSourceName } from './loaders/loadRecordedData.js';
import type { ProbeTiming } from './replay/PreparedSession.js';
import type { SummarizerSettings } from './replay/createSummarizer.js';

export type BenchRepositoryKind = 'memory' | 'sqlite';

/** A contender by registry name; `label` tells apart two settings of one strategy in the report. */
export interface ContenderSpec {
  name: string;
  label?: string;
  options?: Record<string, unknown>;
}

export interface ScalingConfig {
  /** Session lengths in events. */
  sizes: number[];
  repositories: BenchRepositoryKind[];
  budgetTokens: number;
  /** Measurements per point (the median is kept); default 1. A discarded warm-up always runs first. */
  repeats?: number;
  /** Contenders timed; default every replay contender except 'none'. */
  contenders?: string[];
}

export interface BenchConfig {
  /** Recorded-data directories (the layout of docs/benchmarking.md, 'The recorded sources') or neutral-format files. */
  data: string[];
  sources: RecordedSourceName[];
  budgets: number[];
  contenders: ContenderSpec[];
  /** Sessions replayed per dataset (evenly spaced); undefined = all. */
  maxSessionsPerDataset?: number;
  probeAt: ProbeTiming;
  repository: BenchRepositoryKind;
  locomoDateHeaders: boolean;
  /** LoCoMo: each turn's text starts with its speaker's name (see LocomoLoadOptions.speakerNames). */
  locomoSpeakerNames: boolean;
  /**
   * Events carry the times their dataset recorded (LoCoMo's session dates, mini-swe-agent's call times);
   * default true. False replays them one second apart, as if the integration passed no `timestamp`.
   */
  recordedTimes?: boolean;
  /**
   * User and assistant events carry their recorded speaker as the message's `name` (LoCoMo), as an integration
   * passes each turn's author. Default true, false with `locomoSpeakerNames` (the name is then in the text).
   */
  participantNames?: boolean;
  summarizer: SummarizerSettings;
  /**
   * The embedding model of the hybrid recall contenders: one at an OpenAI-compatible endpoint, or a local one read
   * from an installed package (`local`, e.g. 'use-lite'). Without it they are skipped.
   */
  embeddings?: { model: string; baseURL?: string } | { local: LocalEmbedModelName };
  /** null = skip the scaling benchmark. */
  scaling: ScalingConfig | null;
  /** Budget of the token-sawtooth chart; default the budget closest to 8000. */
  sawtoothBudget?: number;
  /** Price tables and prompt-cache rules every call is priced under: preset names or your own tables. */
  pricing: PricingSpec[];
  /** Pairs of contender labels reported side by side: a policy against its plain version. */
  comparisons?: PolicyComparison[];
  outDir: string;
  /** The command line that produced the run, printed in the report. */
  command?: string;
}

export const DEFAULT_CONTENDERS: readonly string[] = Object.freeze([
  'none',
  'sliding-window',
  'turn-window',
  'token-count',
  'token-count-pair-safe',
  'token-count-java',
  'observation-masking',
  'content-policy',
  'recursive-summarization',
  'additive-summarization',
  'pipeline',
  'cache-aware',
  'token-count-cache-aware',
  'langchain-trim',
  'ai-sdk-prune',
]);

/** `policy` and `baseline` are contender labels (or names) of the same run. */
export interface PolicyComparison {
  name: string;
  policy: string;
  baseline: string;
}

/** A preset name, or a user-supplied table: `name`, `prices` and `cache` required, the rest optional. */
export type PricingSpec = string | (Pick<ProviderPreset, 'name' | 'prices' | 'cache'> & Partial<ProviderPreset>);

/** The presets a run prices calls under unless told otherwise. */
export const DEFAULT_PRICING: readonly string[] = Object.freeze(['openai-gpt-4.1', 'anthropic-claude-sonnet-4.5']);

/** Preset names resolved, custom tables checked. */
export function resolvePricing(pricing: readonly PricingSpec[]): ProviderPreset[] {
  const resolved = pricing.map((p, i) => {
    if (typeof p === 'string') return providerPreset(p);
    if (p === null || typeof p !== 'object' || typeof p.name !== 'string' || p.name.trim() === '')
      throw new InvalidArgumentError(`pricing[${i}] must be a preset name or {name, prices, cache, ...}`);
    requireModelPrices(p.prices, `pricing[${i}].prices`);
    requirePromptCacheRules(p.cache, `pricing[${i}].cache`);
    const preset: ProviderPreset = {
      name: p.name,
      provider: p.provider ?? 'custom',
      model: p.model ?? p.name,
      asOf: p.asOf ?? 'user-supplied',
      sources: p.sources ?? [],
      prices: p.prices,
      cache: p.cache,
    };
    return preset;
  });
  const names = resolved.map((p) => p.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate !== undefined) throw new InvalidArgumentError(`pricing names must be unique ('${duplicate}' twice)`);
  return resolved;
}

/** The full run committed in benchmarks/results/full (see docs/benchmarking.md for its runtime). */
export function fullConfig(data: string[], outDir: string): BenchConfig {
  return {
    data,
    sources: [...RECORDED_SOURCES],
    budgets: [4000, 8000, 16000],
    contenders: DEFAULT_CONTENDERS.map((name) => ({ name })),
    probeAt: 'end',
    repository: 'memory',
    locomoDateHeaders: false,
    locomoSpeakerNames: false,
    summarizer: {},
    scaling: { sizes: [1000, 10000, 100000], repositories: ['memory', 'sqlite'], budgetTokens: 8000, repeats: 3 },
    pricing: [...DEFAULT_PRICING],
    outDir,
  };
}

/** `--quick`: a few sessions per source, one budget, scaling to 10k events — minutes, not tens of minutes. */
export function quickConfig(data: string[], outDir: string): BenchConfig {
  return {
    ...fullConfig(data, outDir),
    budgets: [4000, 8000],
    maxSessionsPerDataset: 4,
    scaling: { sizes: [1000, 10000], repositories: ['memory', 'sqlite'], budgetTokens: 8000, repeats: 1 },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function positiveInts(value: unknown, what: string): number[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => Number.isInteger(v) && (v as number) > 0)) {
    throw new InvalidArgumentError(`${what} must be a non-empty array of positive integers`);
  }
  return value as number[];
}

function repositoryKind(value: unknown, what: string): BenchRepositoryKind {
  if (value !== 'memory' && value !== 'sqlite') throw new InvalidArgumentError(`${what} must be 'memory' or 'sqlite'`);
  return value;
}

/** Whether replayed turns carry their speaker as `name`: on unless turned off, or the name is already in the text. */
export function participantNames(config: BenchConfig): boolean {
  return config.participantNames ?? !config.locomoSpeakerNames;
}

export function parseProbeTiming(value: unknown): ProbeTiming {
  if (value === 'end') return 'end';
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0) return n;
  throw new InvalidArgumentError(
    `probeAt must be 'end' or a number of model calls after the evidence (got ${JSON.stringify(value)})`,
  );
}

/**
 * Applies a JSON config file's settings over `base`. Unknown keys are rejected, so a typo never silently
 * runs the default benchmark.
 */
export function applyConfigFile(base: BenchConfig, file: unknown, where: string): BenchConfig {
  if (!isObject(file)) throw new InvalidArgumentError(`${where} must hold a JSON object`);
  const known = new Set([
    'data',
    'sources',
    'budgets',
    'contenders',
    'maxSessionsPerDataset',
    'probeAt',
    'repository',
    'locomoDateHeaders',
    'locomoSpeakerNames',
    'recordedTimes',
    'participantNames',
    'summarizer',
    'embeddings',
    'scaling',
    'sawtoothBudget',
    'pricing',
    'comparisons',
    'outDir',
  ]);
  const unknown = Object.keys(file).filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`${where}: unknown keys ${unknown.join(', ')}; allowed: ${[...known].join(', ')}`);
  const out: BenchConfig = { ...base };
  if (file.data !== undefined) {
    if (!Array.isArray(file.data) || !file.data.every((d) => typeof d === 'string'))
      throw new InvalidArgumentError(`${where}: data must be an array of paths`);
    out.data = (file.data as string[]).map((path) => expandEnvironment(path, `${where}: data`));
  }
  if (file.sources !== undefined) {
    if (!Array.isArray(file.sources) || !file.sources.every((s) => (RECORDED_SOURCES as readonly unknown[]).includes(s)))
      throw new InvalidArgumentError(`${where}: sources must be an array of ${RECORDED_SOURCES.join(', ')}`);
    out.sources = file.sources as RecordedSourceName[];
  }
  if (file.budgets !== undefined) out.budgets = positiveInts(file.budgets, `${where}: budgets`);
  if (file.contenders !== undefined) {
    if (!Array.isArray(file.contenders)) throw new InvalidArgumentError(`${where}: contenders must be an array`);
    out.contenders = file.contenders.map((c, i) => {
      if (typeof c === 'string') return { name: c };
      if (!isObject(c) || typeof c.name !== 'string')
        throw new InvalidArgumentError(`${where}: contenders[${i}] must be a name or {name, label?, options?}`);
      if (c.options !== undefined && !isObject(c.options))
        throw new InvalidArgumentError(`${where}: contenders[${i}].options must be an object`);
      if (c.label !== undefined && typeof c.label !== 'string')
        throw new InvalidArgumentError(`${where}: contenders[${i}].label must be a string`);
      const spec: ContenderSpec = { name: c.name };
      if (typeof c.label === 'string') spec.label = c.label;
      if (isObject(c.options)) spec.options = c.options;
      return spec;
    });
  }
  if (file.maxSessionsPerDataset !== undefined)
    out.maxSessionsPerDataset = positiveInts([file.maxSessionsPerDataset], `${where}: maxSessionsPerDataset`)[0]!;
  if (file.probeAt !== undefined) out.probeAt = parseProbeTiming(file.probeAt);
  if (file.repository !== undefined) out.repository = repositoryKind(file.repository, `${where}: repository`);
  if (file.locomoSpeakerNames !== undefined) {
    if (typeof file.locomoSpeakerNames !== 'boolean')
      throw new InvalidArgumentError(`${where}: locomoSpeakerNames must be a boolean`);
    out.locomoSpeakerNames = file.locomoSpeakerNames;
  }
  if (file.locomoDateHeaders !== undefined) {
    if (typeof file.locomoDateHeaders !== 'boolean')
      throw new InvalidArgumentError(`${where}: locomoDateHeaders must be a boolean`);
    out.locomoDateHeaders = file.locomoDateHeaders;
  }
  if (file.participantNames !== undefined) {
    if (typeof file.participantNames !== 'boolean')
      throw new InvalidArgumentError(`${where}: participantNames must be a boolean`);
    out.participantNames = file.participantNames;
  }
  if (file.recordedTimes !== undefined) {
    if (typeof file.recordedTimes !== 'boolean') throw new InvalidArgumentError(`${where}: recordedTimes must be a boolean`);
    out.recordedTimes = file.recordedTimes;
  }
  if (file.summarizer !== undefined) {
    if (!isObject(file.summarizer))
      throw new InvalidArgumentError(`${where}: summarizer must be an object {model?, baseURL?, extractiveMaxTokens?}`);
    out.summarizer = { ...out.summarizer, ...(file.summarizer as SummarizerSettings) };
  }
  if (file.embeddings !== undefined) {
    const e = file.embeddings;
    if (isObject(e) && e.local !== undefined) {
      if (e.model !== undefined || e.baseURL !== undefined)
        throw new InvalidArgumentError(`${where}: embeddings is either {model, baseURL?} or {local}, not both`);
      if (!(LOCAL_EMBED_MODELS as readonly unknown[]).includes(e.local))
        throw new InvalidArgumentError(`${where}: embeddings.local must be one of ${LOCAL_EMBED_MODELS.join(', ')}`);
      out.embeddings = { local: e.local as LocalEmbedModelName };
    } else {
      if (!isObject(e) || typeof e.model !== 'string' || (e.baseURL !== undefined && typeof e.baseURL !== 'string'))
        throw new InvalidArgumentError(`${where}: embeddings must be an object {model, baseURL?} or {local}`);
      out.embeddings = { model: e.model, ...(typeof e.baseURL === 'string' ? { baseURL: e.baseURL } : {}) };
    }
  }
  if (file.scaling !== undefined) {
    if (file.scaling === null) out.scaling = null;
    else {
      if (!isObject(file.scaling)) throw new InvalidArgumentError(`${where}: scaling must be an object or null`);
      const s = file.scaling;
      const scaling: ScalingConfig = {
        sizes: s.sizes === undefined ? (base.scaling?.sizes ?? [1000, 10000]) : positiveInts(s.sizes, `${where}: scaling.sizes`),
        repositories:
          s.repositories === undefined
            ? (base.scaling?.repositories ?? ['memory'])
            : (Array.isArray(s.repositories) ? s.repositories : [s.repositories]).map((r) =>
                repositoryKind(r, `${where}: scaling.repositories[]`),
              ),
        budgetTokens:
          s.budgetTokens === undefined
            ? (base.scaling?.budgetTokens ?? 8000)
            : positiveInts([s.budgetTokens], `${where}: scaling.budgetTokens`)[0]!,
      };
      if (s.repeats !== undefined) scaling.repeats = positiveInts([s.repeats], `${where}: scaling.repeats`)[0]!;
      if (s.contenders !== undefined) {
        if (!Array.isArray(s.contenders) || !s.contenders.every((c) => typeof c === 'string'))
          throw new InvalidArgumentError(`${where}: scaling.contenders must be an array of names`);
        scaling.contenders = s.contenders as string[];
      }
      out.scaling = scaling;
    }
  }
  if (file.sawtoothBudget !== undefined) out.sawtoothBudget = positiveInts([file.sawtoothBudget], `${where}: sawtoothBudget`)[0]!;
  if (file.pricing !== undefined) {
    if (!Array.isArray(file.pricing)) throw new InvalidArgumentError(`${where}: pricing must be an array`);
    out.pricing = file.pricing as PricingSpec[];
    try {
      resolvePricing(out.pricing);
    } catch (error) {
      throw new InvalidArgumentError(`${where}: ${(error as Error).message}`);
    }
  }
  if (file.comparisons !== undefined) {
    const ok =
      Array.isArray(file.comparisons) &&
      file.comparisons.every(
        (c) => isObject(c) && typeof c.name === 'string' && typeof c.policy === 'string' && typeof c.baseline === 'string',
      );
    if (!ok) throw new InvalidArgumentError(`${where}: comparisons must be an array of {name, policy, baseline}`);
    out.comparisons = file.comparisons as PolicyComparison[];
  }
  if (file.outDir !== undefined) {
    if (typeof file.outDir !== 'string') throw new InvalidArgumentError(`${where}: outDir must be a path`);
    out.outDir = file.outDir;
  }
  return out;
}

/**
 * `$NAME` and `${NAME}` in a data path are read from the environment, so a saved configuration (the ones beside
 * the published results) runs on any machine that sets RECORDED_DIR; an unset variable is an error naming it.
 */
export function expandEnvironment(path: string, where: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.replace(
    /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_match, braced?: string, bare?: string) => {
      const name = (braced ?? bare)!;
      const value = env[name];
      if (value === undefined || value === '')
        throw new InvalidArgumentError(
          `${where} names $${name}, which is not set: set it (for RECORDED_DIR, to the recorded conversations laid out as docs/benchmarking.md says) or pass --data`,
        );
      return value;
    },
  );
}
