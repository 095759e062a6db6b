import { IllegalStateError, InvalidArgumentError, requirePositiveInt } from '../errors.js';
import { EventFilter } from '../filter/EventFilter.js';
import type { SessionService } from '../service/SessionService.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { ownSession, visibleTo } from './access.js';
import type { RetrievalRequest, RetrievedEvent, Retriever } from './Retriever.js';
import { normaliseRetrievalRequest } from './retrievalRequest.js';
import { searchableText } from './searchTerms.js';
import { subscribeToLifecycle } from './lifecycleHooks.js';

/** Turns texts into vectors, one per text, in order (e.g. `openAIEmbeddings`). */
export type EmbedFunction = (texts: string[]) => Promise<number[][]>;

export interface EmbeddingRetrieverOptions {
  sessionService: SessionService;
  embed: EmbedFunction;
  /** Event vectors kept in memory (least recently used dropped first); default 10,000. */
  maxCachedVectors?: number;
  /** Texts per `embed` call; default 128. */
  batchSize?: number;
  /** Hits scoring at or below this cosine similarity are left out; default 0. */
  minScore?: number;
}

export const DEFAULT_MAX_CACHED_VECTORS = 10_000;
const DEFAULT_BATCH_SIZE = 128;

interface CachedVector {
  text: string;
  /** Unit length, so that cosine similarity is a dot product. In flight while the embed call runs. */
  vector: Promise<Float32Array>;
  /** The same vector once it is there: a query over cached vectors then awaits no promise per event. */
  ready?: Float32Array;
  /** The retriever's clock when a request last used it: the smallest is the least recently used. */
  used: number;
}

/**
 * Semantic recall: ranks the events a request may see by cosine similarity between their embedding and the
 * query's. Each event is embedded once — its vector is cached (bounded, least recently used dropped first)
 * and shared by concurrent requests — and again only if its text changes. The access rules are those of
 * every retriever (owner, scope, branch, active window); events are embedded by the same text the BM25
 * retriever indexes (tool calls and results included, shadow prompts left out). Optional: nothing else in
 * the library needs embeddings.
 */
export class EmbeddingRetriever implements Retriever {
  readonly maxCachedVectors: number;
  readonly batchSize: number;
  readonly minScore: number;
  private readonly service: SessionService;
  private readonly embed: EmbedFunction;
  private readonly cache = new Map<string, CachedVector>();
  /**
   * Recency is a counter stamped on each use, not the Map's insertion order: moving 10,000 hits to the end of the
   * Map on every query (a delete and a set each) cost more than the dot products.
   */
  private clock = 0;
  private readonly unsubscribe: () => void;

  constructor(options: EmbeddingRetrieverOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    if (options.sessionService === null || options.sessionService === undefined) {
      throw new InvalidArgumentError('sessionService must not be null');
    }
    if (typeof options.embed !== 'function') throw new InvalidArgumentError('embed must be a function');
    this.service = options.sessionService;
    this.embed = options.embed;
    this.maxCachedVectors = requirePositiveInt(options.maxCachedVectors ?? DEFAULT_MAX_CACHED_VECTORS, 'maxCachedVectors');
    this.batchSize = requirePositiveInt(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize');
    this.minScore = options.minScore ?? 0;
    if (typeof this.minScore !== 'number' || Number.isNaN(this.minScore))
      throw new InvalidArgumentError('minScore must be a number');
    // A cached entry holds the event's text: an erased or redacted one must leave the cache at once.
    this.unsubscribe = subscribeToLifecycle(this.service, 'embeddings', {
      forgetSession: (sessionId) => {
        const prefix = `${sessionId}\u0000`;
        let dropped = 0;
        for (const key of [...this.cache.keys()]) {
          if (key.startsWith(prefix)) {
            this.cache.delete(key);
            dropped++;
          }
        }
        return dropped;
      },
      forgetEvents: (sessionId, eventIds) => {
        for (const id of eventIds) this.cache.delete(`${sessionId}\u0000${id}`);
      },
    });
  }

  /** Stops listening to the service and frees the cache. */
  close(): void {
    this.unsubscribe();
    this.cache.clear();
  }

  /** Vectors held in memory now (at most `maxCachedVectors`). */
  get cachedVectors(): number {
    return this.cache.size;
  }

  async retrieve(request: RetrievalRequest): Promise<RetrievedEvent[]> {
    const r = normaliseRetrievalRequest(request);
    if (r.query.trim() === '') return [];
    const session =
      r.userId === null ? await this.service.findById(r.sessionId) : await ownSession(this.service, r.sessionId, r.userId);
    if (session === null) return [];
    const sessions: Session[] =
      r.scope === 'session' ? [session] : (await this.service.findByUserId(r.userId!)).filter((s) => s.userId === r.userId);
    const visible = visibleTo(r.branch);
    const candidates: Array<{ event: SessionEvent; text: string }> = [];
    for (const s of sessions) {
      // Active events are already in the prompt of the request's own session; other sessions' never are.
      const excludeActive = !r.includeActive && s.id === r.sessionId;
      for (const event of await this.service.getEvents(s.id, EventFilter.all())) {
        if (event.sessionId !== s.id || !visible(event) || (excludeActive && !event.archived)) continue;
        const text = searchableText(event);
        if (text !== null) candidates.push({ event, text });
      }
    }
    if (candidates.length === 0) return [];
    const [query] = await this.embedChecked([r.query]);
    const vectors = await this.vectorsOf(candidates);
    const hits: RetrievedEvent[] = [];
    candidates.forEach((c, i) => {
      const score = dot(query!, vectors[i]!);
      if (score > this.minScore) hits.push({ event: c.event, score });
    });
    return best(hits, r.limit);
  }

  private async vectorsOf(candidates: Array<{ event: SessionEvent; text: string }>): Promise<Float32Array[]> {
    const missing: Array<{ entry: CachedVector; resolve: (v: Float32Array) => void; reject: (e: unknown) => void }> = [];
    const pending = candidates.map(({ event, text }) => {
      const key = `${event.sessionId}\u0000${event.id}`;
      const cached = this.cache.get(key);
      if (cached !== undefined && cached.text === text) {
        cached.used = ++this.clock;
        return cached.ready ?? cached.vector;
      }
      let resolve!: (v: Float32Array) => void;
      let reject!: (e: unknown) => void;
      const vector = new Promise<Float32Array>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const entry: CachedVector = { text, vector, used: ++this.clock };
      this.cache.set(key, entry);
      // A failed embedding is not cached: the next request tries again.
      vector.catch(() => {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      });
      missing.push({ entry, resolve, reject });
      return vector;
    });
    if (this.cache.size > this.maxCachedVectors) this.evictLeastRecentlyUsed();
    for (let from = 0; from < missing.length; from += this.batchSize) {
      const batch = missing.slice(from, from + this.batchSize);
      try {
        const vectors = await this.embedChecked(batch.map((m) => m.entry.text));
        batch.forEach((m, i) => {
          m.entry.ready = vectors[i]!;
          m.resolve(vectors[i]!);
        });
      } catch (error) {
        for (const m of missing.slice(from)) m.reject(error);
        break;
      }
    }
    // All cached (the usual warm query): no promise to await per event.
    if (missing.length === 0 && pending.every((v): v is Float32Array => v instanceof Float32Array)) return pending;
    return Promise.all(pending);
  }

  /** Drops the least recently used vectors down to `maxCachedVectors` (this request's own are the most recent). */
  private evictLeastRecentlyUsed(): void {
    const overflow = this.cache.size - this.maxCachedVectors;
    const oldest = [...this.cache].sort((a, b) => a[1].used - b[1].used).slice(0, overflow);
    for (const [key] of oldest) this.cache.delete(key);
  }

  /** Calls `embed` and checks its answer: one finite, non-empty vector per text, all of one dimension. */
  private async embedChecked(texts: string[]): Promise<Float32Array[]> {
    const vectors = await this.embed(texts);
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new IllegalStateError(
        `embed returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts`,
      );
    }
    return vectors.map((v) => {
      if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new IllegalStateError('embed returned a vector that is not a non-empty array of finite numbers');
      }
      return unit(v);
    });
  }
}

/**
 * The `limit` best hits, best first; equal scores keep log (and session) order. Sorting every event (10,000 objects
 * through a comparator) cost more than finding the limit-th best score in a native numeric sort and sorting only
 * the hits at or above it.
 */
function best(hits: RetrievedEvent[], limit: number): RetrievedEvent[] {
  let top = hits;
  if (hits.length > limit) {
    const scores = Float64Array.from(hits, (h) => h.score).sort();
    const threshold = scores[scores.length - limit]!;
    top = hits.filter((h) => h.score >= threshold);
  }
  // Stable: ties keep the order they had.
  return top.sort((a, b) => b.score - a.score).slice(0, limit);
}

function unit(v: number[]): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  const out = new Float32Array(v.length);
  if (norm > 0) for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) {
    throw new IllegalStateError(`embed returned vectors of different dimensions (${a.length} and ${b.length})`);
  }
  // Four running sums: independent additions the CPU can overlap (a query scores every cached vector).
  const n = a.length;
  const end = n - (n % 4);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < end; i += 4) {
    s0 += a[i]! * b[i]!;
    s1 += a[i + 1]! * b[i + 1]!;
    s2 += a[i + 2]! * b[i + 2]!;
    s3 += a[i + 3]! * b[i + 3]!;
  }
  for (let i = end; i < n; i++) s0 += a[i]! * b[i]!;
  return s0 + s1 + s2 + s3;
}
