import type { Message, TokenCountEstimator } from 'session-compaction';
import { formatMessage, type ProviderPreset } from 'session-compaction/spi';
import { PromptCacheSimulator, type PromptSegment } from './PromptCacheSimulator.js';

/** What one conversation cost under one provider preset. Money in the preset's currency. */
export interface CostTally {
  preset: string;
  inputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  /** Input + output + summariser, with the prompt cache as the preset's rules say. */
  cost: number;
  /** The same calls with no prompt caching at all (what a user who never marks breakpoints pays). */
  costWithoutCache: number;
  /**
   * The same calls with perfect caching: each distinct message billed once at the input price (the
   * cache-write price where the provider bills writes) and re-read at the cached price on every later call
   * that sends it, wherever it stands in the prompt, with no minimum, rounding or expiry; the same output and
   * compaction cost. What this contender's prompts would cost if no rewrite ever missed the cache.
   */
  costPerfectCache: number;
  /** Of `cost` (and of the two references), what compactions cost: the summariser's calls. */
  compactionCost: number;
}

export function emptyCostTally(preset: string): CostTally {
  return {
    preset,
    inputTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    cost: 0,
    costWithoutCache: 0,
    costPerfectCache: 0,
    compactionCost: 0,
  };
}

/**
 * Messages as prompt-cache segments: the same rendered text is the same key, so two contenders (or two
 * calls) that send the same message share a key. Memoised per message object and per text.
 */
export class PromptSegmentCoder {
  private readonly byText = new Map<string, PromptSegment>();
  private readonly byMessage = new WeakMap<Message, PromptSegment>();

  constructor(private readonly estimator: TokenCountEstimator) {}

  segment(message: Message): PromptSegment {
    const known = this.byMessage.get(message);
    if (known !== undefined) return known;
    const text = formatMessage(message);
    let segment = this.byText.get(text);
    if (segment === undefined) {
      segment = {
        key: this.byText.size,
        tokens: this.estimator.estimate(text),
        ...(message.type === 'system' ? { system: true } : {}),
      };
      this.byText.set(text, segment);
    }
    this.byMessage.set(message, segment);
    return segment;
  }

  /** System messages first, as chat integrations send them (and as every provider's cache sees them). */
  request(messages: readonly Message[]): PromptSegment[] {
    const segments = messages.map((m) => this.segment(m));
    return [...segments.filter((s) => s.system === true), ...segments.filter((s) => s.system !== true)];
  }
}

const perToken = (pricePerMTok: number) => pricePerMTok / 1e6;

/**
 * Prices every model call of one replayed conversation under each preset: the prompt goes through that
 * preset's cache model, the recorded reply is billed as output, and the summariser's tokens (finish) at
 * the uncached input and the output price.
 */
export class ConversationCostMeter {
  private readonly caches: PromptCacheSimulator[];
  /** Message keys sent so far: a perfect cache holds each of them. */
  private readonly sent = new Set<number>();
  readonly tallies: CostTally[];

  constructor(readonly presets: readonly ProviderPreset[]) {
    this.caches = presets.map((p) => new PromptCacheSimulator(p.cache));
    this.tallies = presets.map((p) => emptyCostTally(p.name));
  }

  /** `breakpoints`: see PromptCacheSimulator.send (used by breakpoint-rule presets only). */
  call(request: readonly PromptSegment[], atMs: number, outputTokens: number, breakpoints?: readonly number[]): void {
    let seen = 0;
    let fresh = 0;
    for (const segment of request) {
      if (this.sent.has(segment.key)) seen += segment.tokens;
      else fresh += segment.tokens;
    }
    for (const segment of request) this.sent.add(segment.key);
    this.presets.forEach((preset, i) => {
      const outcome = this.caches[i]!.send(request, atMs, breakpoints);
      const prices = preset.prices;
      const tally = this.tallies[i]!;
      const uncached = outcome.inputTokens - outcome.cachedTokens - outcome.cacheWriteTokens;
      const output = outputTokens * perToken(prices.outputPerMTok);
      tally.inputTokens += outcome.inputTokens;
      tally.cachedTokens += outcome.cachedTokens;
      tally.cacheWriteTokens += outcome.cacheWriteTokens;
      tally.outputTokens += outputTokens;
      tally.cost +=
        uncached * perToken(prices.inputPerMTok) +
        outcome.cachedTokens * perToken(prices.cachedInputPerMTok ?? prices.inputPerMTok) +
        outcome.cacheWriteTokens * perToken(prices.cacheWritePerMTok ?? prices.inputPerMTok) +
        output;
      tally.costWithoutCache += outcome.inputTokens * perToken(prices.inputPerMTok) + output;
      tally.costPerfectCache +=
        fresh * perToken(prices.cacheWritePerMTok ?? prices.inputPerMTok) +
        seen * perToken(prices.cachedInputPerMTok ?? prices.inputPerMTok) +
        output;
    });
  }

  /**
   * Adds what compactions cost — the summariser's calls, its prompts billed uncached — to the conversation
   * and, apart, to `compactionCost`.
   */
  summarizer(inputTokens: number, outputTokens: number): void {
    this.presets.forEach((preset, i) => {
      const cost = inputTokens * perToken(preset.prices.inputPerMTok) + outputTokens * perToken(preset.prices.outputPerMTok);
      const tally = this.tallies[i]!;
      tally.cost += cost;
      tally.costWithoutCache += cost;
      tally.costPerfectCache += cost;
      tally.compactionCost += cost;
    });
  }
}
