import { InvalidArgumentError } from '../errors.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { RetrievalRequest, RetrievedEvent, Retriever } from './Retriever.js';
import { normaliseRetrievalRequest } from './retrievalRequest.js';

export interface HybridRetrieverOptions {
  /** Two or more rankings to fuse, e.g. a BM25 (or push-down) retriever and an `EmbeddingRetriever`. */
  retrievers: readonly Retriever[];
  /** The reciprocal-rank-fusion constant: larger values flatten the advantage of top ranks; default 60. */
  k?: number;
  /** One weight per retriever; default 1 each. */
  weights?: readonly number[];
  /** Hits asked of each retriever: default max(limit × 2, 50), so an event ranked lower by one can still be fused. */
  candidates?: number;
}

export const DEFAULT_RRF_K = 60;

/**
 * Fuses rankings by reciprocal rank fusion: an event's score is Σ weightᵢ / (k + rankᵢ) over the retrievers
 * that returned it (rank 1 = best). Only ranks count, so scores on different scales (BM25, cosine) combine
 * without calibration. The retrievers run in parallel with the same request; an access refusal from any of
 * them is the hybrid's refusal.
 */
export class HybridRetriever implements Retriever {
  readonly k: number;
  private readonly retrievers: readonly Retriever[];
  /** Present when one of the retrievers reads neighbours (see Retriever.findEventNeighbours). */
  readonly findEventNeighbours?: (sessionId: string, eventIds: readonly string[], radius: number) => Promise<SessionEvent[][]>;
  private readonly weights: readonly number[];
  private readonly candidates: number | undefined;

  constructor(options: HybridRetrieverOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const { retrievers } = options;
    if (!Array.isArray(retrievers) || retrievers.length === 0) {
      throw new InvalidArgumentError('retrievers must be a non-empty array');
    }
    if (retrievers.some((r) => r === null || typeof r !== 'object' || typeof r.retrieve !== 'function')) {
      throw new InvalidArgumentError('every retriever must have a retrieve function');
    }
    this.retrievers = [...retrievers];
    // Neighbours are positions in the log, the same whoever reads them: the first retriever that can answers.
    const reader = retrievers.find((r) => typeof r.findEventNeighbours === 'function');
    if (reader !== undefined)
      this.findEventNeighbours = (sessionId, eventIds, radius) => reader.findEventNeighbours!(sessionId, eventIds, radius);
    this.k = options.k ?? DEFAULT_RRF_K;
    if (typeof this.k !== 'number' || !Number.isFinite(this.k) || this.k < 0) {
      throw new InvalidArgumentError('k must be a finite number >= 0');
    }
    this.weights = options.weights === undefined ? retrievers.map(() => 1) : [...options.weights];
    if (
      this.weights.length !== retrievers.length ||
      this.weights.some((w) => typeof w !== 'number' || !Number.isFinite(w) || w < 0)
    ) {
      throw new InvalidArgumentError('weights must hold one finite number >= 0 per retriever');
    }
    if (options.candidates !== undefined && (!Number.isInteger(options.candidates) || options.candidates <= 0)) {
      throw new InvalidArgumentError('candidates must be a positive integer');
    }
    this.candidates = options.candidates;
  }

  async retrieve(request: RetrievalRequest): Promise<RetrievedEvent[]> {
    const r = normaliseRetrievalRequest(request);
    if (r.query.trim() === '') return [];
    const limit = this.candidates ?? Math.max(r.limit * 2, 50);
    const rankings = await Promise.all(this.retrievers.map((retriever) => retriever.retrieve({ ...request, limit })));
    const fused = new Map<string, { event: SessionEvent; score: number; first: number }>();
    rankings.forEach((hits, i) => {
      hits.forEach((hit, rank) => {
        const key = `${hit.event.sessionId}\u0000${hit.event.id}`;
        const contribution = this.weights[i]! / (this.k + rank + 1);
        const entry = fused.get(key);
        if (entry === undefined) fused.set(key, { event: hit.event, score: contribution, first: fused.size });
        else entry.score += contribution;
      });
    });
    // Ties keep the order in which the retrievers (in the given order) first returned the events.
    return [...fused.values()]
      .sort((a, b) => b.score - a.score || a.first - b.first)
      .slice(0, r.limit)
      .map(({ event, score }) => ({ event, score }));
  }
}
