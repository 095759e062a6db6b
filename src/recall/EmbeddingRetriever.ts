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
  /** Insertion order is recency order. */
  private readonly cache = new Map<string, CachedVector>();
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
    // Stable sort: equal scores keep log (and session) order.
    hits.sort((a, b) => b.score - a.score);
    return hits.slice(0, r.limit);
  }

  private async vectorsOf(candidates: Array<{ event: SessionEvent; text: string }>): Promise<Float32Array[]> {
    const missing: Array<{ key: string; text: string; resolve: (v: Float32Array) => void; reject: (e: unknown) => void }> = [];
    const pending = candidates.map(({ event, text }) => {
      const key = `${event.sessionId}\u0000${event.id}`;
      const cached = this.cache.get(key);
      if (cached !== undefined && cached.text === text) {
        this.cache.delete(key);
        this.cache.set(key, cached);
        return cached.vector;
      }
      let resolve!: (v: Float32Array) => void;
      let reject!: (e: unknown) => void;
      const vector = new Promise<Float32Array>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const entry = { text, vector };
      this.cache.delete(key);
      this.cache.set(key, entry);
      // A failed embedding is not cached: the next request tries again.
      vector.catch(() => {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      });
      missing.push({ key, text, resolve, reject });
      return vector;
    });
    while (this.cache.size > this.maxCachedVectors) this.cache.delete(this.cache.keys().next().value as string);
    for (let from = 0; from < missing.length; from += this.batchSize) {
      const batch = missing.slice(from, from + this.batchSize);
      try {
        const vectors = await this.embedChecked(batch.map((m) => m.text));
        batch.forEach((m, i) => m.resolve(vectors[i]!));
      } catch (error) {
        for (const m of missing.slice(from)) m.reject(error);
        break;
      }
    }
    return Promise.all(pending);
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
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
