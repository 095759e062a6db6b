import { InvalidArgumentError } from 'session-compaction';
import { requirePromptCacheRules, type PromptCacheRules } from 'session-compaction/spi';

/** One message of a request: `key` is the same number for the same rendered text, `tokens` its size. */
export interface PromptSegment {
  key: number;
  tokens: number;
  /** A system message: with 'breakpoint' rules the system block ends at the last of the leading ones. */
  system?: boolean;
}

/** What the provider would bill for one request's input. */
export interface CacheOutcome {
  inputTokens: number;
  /** Read from the cache. */
  cachedTokens: number;
  /** Written to the cache ('breakpoint' rules only; 'automatic' caches write for free). */
  cacheWriteTokens: number;
}

interface Node {
  children: Map<number, Node>;
  /** Last time a request whose cached prefix reached this node was sent ('automatic'), or -Infinity. */
  usedAt: number;
  /** A breakpoint entry ends here, last used at this time ('breakpoint'), or -Infinity. */
  entryAt: number;
}

const newNode = (): Node => ({ children: new Map(), usedAt: -Infinity, entryAt: -Infinity });

/**
 * A provider's prompt cache, replayed for one conversation: requests are sent in time order, and each one
 * is split into what was read from the cache, written to it, and processed uncached.
 *
 * Prefixes are compared message by message (a message that differs in one character is a miss from its
 * first token: the model does not count the part of a message that still matches). The cache is a trie of
 * the messages sent; a node remembers when a cached prefix last reached it, so expiry is per prefix and a
 * hit refreshes it, as both providers document.
 */
export class PromptCacheSimulator {
  private readonly root = newNode();
  private lastAt = -Infinity;

  constructor(readonly rules: PromptCacheRules) {
    requirePromptCacheRules(rules, 'rules');
  }

  /** The rounding of a shared prefix to what the provider bills as cached. */
  cacheableLength(sharedTokens: number): number {
    const { minCacheableTokens: min, incrementTokens: step } = this.rules;
    if (sharedTokens < Math.max(1, min)) return 0;
    return min + Math.floor((sharedTokens - min) / step) * step;
  }

  /**
   * `breakpoints` ('breakpoint' rules only): the indexes of the segments that carry a cache breakpoint besides
   * the end of the system messages; default the last segment. A client that puts its breakpoint at the end of
   * the stable history (before a recall block rebuilt for every request) passes that index.
   */
  send(segments: readonly PromptSegment[], atMs: number, breakpoints?: readonly number[]): CacheOutcome {
    if (!Number.isFinite(atMs)) throw new InvalidArgumentError('atMs must be a finite time');
    if (breakpoints !== undefined && breakpoints.some((b) => !Number.isInteger(b) || b < 0 || b >= segments.length))
      throw new InvalidArgumentError('breakpoints must be indexes of the segments');
    if (atMs < this.lastAt) throw new InvalidArgumentError('requests must be sent in time order');
    this.lastAt = atMs;
    const inputTokens = segments.reduce((s, x) => s + x.tokens, 0);
    return this.rules.mode === 'automatic'
      ? this.sendAutomatic(segments, atMs, inputTokens)
      : this.sendBreakpoint(segments, atMs, inputTokens, breakpoints ?? [segments.length - 1]);
  }

  private alive(time: number, at: number): boolean {
    return at - time <= this.rules.ttlMs;
  }

  /** OpenAI: the longest live prefix, rounded; every request of at least the minimum length is cached. */
  private sendAutomatic(segments: readonly PromptSegment[], at: number, inputTokens: number): CacheOutcome {
    let node = this.root;
    let shared = 0;
    for (const s of segments) {
      const child = node.children.get(s.key);
      if (child === undefined || !this.alive(child.usedAt, at)) break;
      shared += s.tokens;
      node = child;
    }
    const cachedTokens = this.cacheableLength(shared);
    if (inputTokens >= this.rules.minCacheableTokens) {
      node = this.root;
      for (const s of segments) {
        let child = node.children.get(s.key);
        if (child === undefined || !this.alive(child.usedAt, at)) {
          // An expired branch is dropped whole: nothing under it can be a hit any more.
          child = newNode();
          node.children.set(s.key, child);
        }
        child.usedAt = at;
        node = child;
      }
    }
    return { inputTokens, cachedTokens, cacheWriteTokens: 0 };
  }

  /**
   * Anthropic with a breakpoint after the system messages and the given ones (by default on the last message):
   * a hit is the longest live entry on this request's path within the lookback of a breakpoint; everything
   * after it up to the last breakpoint is written (when that prefix reaches the minimum), the rest of the
   * prompt is processed uncached, and the entries read or written are refreshed.
   */
  private sendBreakpoint(
    segments: readonly PromptSegment[],
    at: number,
    inputTokens: number,
    explicit: readonly number[],
  ): CacheOutcome {
    const { minCacheableTokens: min } = this.rules;
    const lookback = this.rules.lookbackBlocks ?? 20;
    let systemEnd = 0;
    while (systemEnd < segments.length && segments[systemEnd]!.system === true) systemEnd++;
    const breakpoints = [...explicit];
    if (systemEnd > 0 && systemEnd < segments.length && !breakpoints.includes(systemEnd - 1)) breakpoints.push(systemEnd - 1);
    breakpoints.sort((a, b) => a - b);
    const inReach = (i: number) => breakpoints.some((b) => i <= b && b - i < lookback);

    // The path this request shares with earlier ones, and the tokens up to each of its positions.
    const path: Node[] = [];
    const prefixTokens: number[] = [];
    let node = this.root;
    let tokens = 0;
    for (const s of segments) {
      const child = node.children.get(s.key);
      if (child === undefined) break;
      tokens += s.tokens;
      path.push(child);
      prefixTokens.push(tokens);
      node = child;
    }
    let hit = -1;
    for (let i = path.length - 1; i >= 0; i--) {
      if (this.alive(path[i]!.entryAt, at) && inReach(i)) {
        hit = i;
        break;
      }
    }
    const cachedTokens = hit < 0 ? 0 : prefixTokens[hit]!;
    if (hit >= 0) path[hit]!.entryAt = at;

    let cacheWriteTokens = 0;
    // Build the rest of the path, then write an entry at each breakpoint long enough to be cached.
    node = this.root;
    tokens = 0;
    const written: { index: number; tokens: number }[] = [];
    segments.forEach((s, i) => {
      let child = node.children.get(s.key);
      if (child === undefined) {
        child = newNode();
        node.children.set(s.key, child);
      }
      tokens += s.tokens;
      if (breakpoints.includes(i) && tokens >= min && i > hit) {
        child.entryAt = at;
        written.push({ index: i, tokens });
      }
      node = child;
    });
    if (written.length > 0) cacheWriteTokens = written[written.length - 1]!.tokens - cachedTokens;
    return { inputTokens, cachedTokens, cacheWriteTokens };
  }
}
