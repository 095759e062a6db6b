import { InvalidArgumentError } from '../errors.js';

/**
 * What one model's tokens cost, per million tokens, in one currency. Cached and cache-write prices default
 * to the input price (a provider without a prompt cache, or a cache that is not billed apart).
 */
export interface ModelPrices {
  /** Default 'USD'. */
  currency?: string;
  inputPerMTok: number;
  /** Input tokens read from the provider's prompt cache (OpenAI "cached input", Anthropic "cache hits"). */
  cachedInputPerMTok?: number;
  /** Input tokens written to the prompt cache, where that is billed (Anthropic: 1.25 × input for 5 minutes). */
  cacheWritePerMTok?: number;
  outputPerMTok: number;
}

/**
 * How a provider's prompt cache decides what is a hit. The benchmark's cache model (session-compaction-bench)
 * and the cache-aware trigger read it; nothing here calls a provider.
 */
export interface PromptCacheRules {
  /**
   * 'automatic': every request's prefix is cached and any later request sharing a prefix reads it (OpenAI).
   * 'breakpoint': only the prefix up to a cache breakpoint is cached — modelled as a breakpoint after the
   * system messages and one on the last message (Anthropic's automatic caching) — and a hit is an earlier
   * breakpoint's prefix, found within `lookbackBlocks` messages of a breakpoint.
   */
  mode: 'automatic' | 'breakpoint';
  /** Prompts (or, for breakpoints, prefixes) shorter than this are never cached. */
  minCacheableTokens: number;
  /** Past the minimum, cached lengths come in steps of this many tokens (OpenAI: 128); 1 = any length. */
  incrementTokens: number;
  /** A cached prefix unused for this long is gone; every hit refreshes it. */
  ttlMs: number;
  /** 'breakpoint' only: how many messages before a breakpoint the provider looks for an earlier entry. */
  lookbackBlocks?: number;
}

/** A named, dated pair of price table and cache rules for one provider's model. */
export interface ProviderPreset {
  name: string;
  provider: 'openai' | 'anthropic' | 'custom';
  model: string;
  /** The day the prices and rules were read from `sources` (ISO date). Prices change: check before billing. */
  asOf: string;
  sources: readonly string[];
  prices: ModelPrices;
  cache: PromptCacheRules;
}

const MINUTE = 60_000;

const OPENAI_CACHE: PromptCacheRules = Object.freeze({
  mode: 'automatic',
  minCacheableTokens: 1024,
  incrementTokens: 128,
  // "Cached prefixes generally remain active for 5 to 10 minutes of inactivity": the lower bound.
  ttlMs: 5 * MINUTE,
});

const ANTHROPIC_CACHE = (minCacheableTokens: number): PromptCacheRules =>
  Object.freeze({ mode: 'breakpoint', minCacheableTokens, incrementTokens: 1, ttlMs: 5 * MINUTE, lookbackBlocks: 20 });

const OPENAI_SOURCES = Object.freeze([
  'https://platform.openai.com/docs/pricing',
  'https://platform.openai.com/docs/guides/prompt-caching',
]);
const ANTHROPIC_SOURCES = Object.freeze([
  'https://docs.anthropic.com/en/docs/about-claude/pricing',
  'https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching',
]);

/**
 * Published list prices and prompt-cache rules of a few models, each dated. `openai-gpt-4.1` and
 * `anthropic-claude-sonnet-4.5` are the benchmark's defaults; pass your own {@link ProviderPreset} (or
 * just {@link ModelPrices}) for any other model or a negotiated price.
 */
export const PROVIDER_PRESETS: Readonly<Record<string, ProviderPreset>> = Object.freeze({
  'openai-gpt-4o': Object.freeze({
    name: 'openai-gpt-4o',
    provider: 'openai',
    model: 'gpt-4o',
    asOf: '2024-10-01',
    sources: OPENAI_SOURCES,
    prices: Object.freeze({ currency: 'USD', inputPerMTok: 2.5, cachedInputPerMTok: 1.25, outputPerMTok: 10 }),
    cache: OPENAI_CACHE,
  }),
  'openai-gpt-4.1': Object.freeze({
    name: 'openai-gpt-4.1',
    provider: 'openai',
    model: 'gpt-4.1',
    asOf: '2025-04-14',
    sources: OPENAI_SOURCES,
    prices: Object.freeze({ currency: 'USD', inputPerMTok: 2, cachedInputPerMTok: 0.5, outputPerMTok: 8 }),
    cache: OPENAI_CACHE,
  }),
  'openai-gpt-5': Object.freeze({
    name: 'openai-gpt-5',
    provider: 'openai',
    model: 'gpt-5',
    asOf: '2025-08-07',
    sources: OPENAI_SOURCES,
    prices: Object.freeze({ currency: 'USD', inputPerMTok: 1.25, cachedInputPerMTok: 0.125, outputPerMTok: 10 }),
    cache: OPENAI_CACHE,
  }),
  'anthropic-claude-sonnet-4.5': Object.freeze({
    name: 'anthropic-claude-sonnet-4.5',
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    asOf: '2025-09-29',
    sources: ANTHROPIC_SOURCES,
    prices: Object.freeze({
      currency: 'USD',
      inputPerMTok: 3,
      cachedInputPerMTok: 0.3,
      cacheWritePerMTok: 3.75,
      outputPerMTok: 15,
    }),
    cache: ANTHROPIC_CACHE(1024),
  }),
  'anthropic-claude-haiku-4.5': Object.freeze({
    name: 'anthropic-claude-haiku-4.5',
    provider: 'anthropic',
    model: 'claude-haiku-4-5',
    asOf: '2025-10-15',
    sources: ANTHROPIC_SOURCES,
    prices: Object.freeze({
      currency: 'USD',
      inputPerMTok: 1,
      cachedInputPerMTok: 0.1,
      cacheWritePerMTok: 1.25,
      outputPerMTok: 5,
    }),
    cache: ANTHROPIC_CACHE(4096),
  }),
});

function price(value: unknown, name: string, optional: boolean): void {
  if (optional && value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${name} must be a number >= 0`);
  }
}

/** Checks a price table; returns it for fluent use. */
export function requireModelPrices(value: unknown, name = 'prices'): ModelPrices {
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(`${name} must not be null`);
  const p = value as Partial<ModelPrices>;
  price(p.inputPerMTok, `${name}.inputPerMTok`, false);
  price(p.outputPerMTok, `${name}.outputPerMTok`, false);
  price(p.cachedInputPerMTok, `${name}.cachedInputPerMTok`, true);
  price(p.cacheWritePerMTok, `${name}.cacheWritePerMTok`, true);
  if (p.currency !== undefined && (typeof p.currency !== 'string' || p.currency.trim() === ''))
    throw new InvalidArgumentError(`${name}.currency must not be empty`);
  return value as ModelPrices;
}

/** Checks cache rules; returns them for fluent use. */
export function requirePromptCacheRules(value: unknown, name = 'cache'): PromptCacheRules {
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(`${name} must not be null`);
  const c = value as Partial<PromptCacheRules>;
  if (c.mode !== 'automatic' && c.mode !== 'breakpoint')
    throw new InvalidArgumentError(`${name}.mode must be 'automatic' or 'breakpoint'`);
  for (const key of ['minCacheableTokens', 'incrementTokens', 'ttlMs'] as const) {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < (key === 'minCacheableTokens' ? 0 : 1))
      throw new InvalidArgumentError(`${name}.${key} must be an integer >= ${key === 'minCacheableTokens' ? 0 : 1}`);
  }
  if (c.lookbackBlocks !== undefined && (!Number.isInteger(c.lookbackBlocks) || c.lookbackBlocks < 1))
    throw new InvalidArgumentError(`${name}.lookbackBlocks must be an integer >= 1`);
  return value as PromptCacheRules;
}

/** A preset by name, with the known names in the error. */
export function providerPreset(name: string): ProviderPreset {
  const preset = PROVIDER_PRESETS[name];
  if (preset === undefined)
    throw new InvalidArgumentError(`unknown provider preset '${name}'; known: ${Object.keys(PROVIDER_PRESETS).join(', ')}`);
  return preset;
}
