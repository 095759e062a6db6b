import { ATTR, SPAN } from '../telemetry/attributes.js';
import { captureContent, inSpan, instruments, secondsSince } from '../telemetry/telemetry.js';
import type { RetrievalRequest, RetrievedEvent, Retriever } from './Retriever.js';

const INSTRUMENTED = Symbol.for('session-compaction.instrumented-retriever');

/**
 * A retriever whose every `retrieve` is a `session_compaction.retrieve` span (retriever name, session, scope,
 * limit, hits) and a `session_compaction.retrieval.duration` measurement. The query goes on the span only with
 * content capture enabled. ContextAssembler (and so SessionMemory's recall) wraps its retriever itself; wrap one you call directly:
 * `instrumentRetriever(new Bm25Retriever(…))`. Wrapping twice is a no-op.
 */
export function instrumentRetriever(retriever: Retriever, name?: string): Retriever {
  if ((retriever as unknown as Record<symbol, unknown>)[INSTRUMENTED] === true) return retriever;
  const retrieverName =
    name ?? (retriever.constructor?.name !== 'Object' ? retriever.constructor?.name : undefined) ?? 'retriever';
  // One span per retrieval, whichever method ran it; `hitsOf` picks the hits from its result.
  const traced = <T>(request: RetrievalRequest, run: () => Promise<T>, hitsOf: (result: T) => readonly RetrievedEvent[]) => {
    const attributes = {
      [ATTR.RETRIEVER]: retrieverName,
      [ATTR.RETRIEVAL_SCOPE]: request?.scope ?? 'session',
      ...(typeof request?.sessionId === 'string' ? { [ATTR.CONVERSATION_ID]: request.sessionId } : {}),
      ...(typeof request?.limit === 'number' ? { [ATTR.RETRIEVAL_LIMIT]: request.limit } : {}),
    };
    return inSpan(SPAN.RETRIEVE, attributes, async (span) => {
      if (captureContent() && typeof request?.query === 'string') span.setAttribute(ATTR.RETRIEVAL_QUERY, request.query);
      const started = performance.now();
      let failed = true;
      try {
        const result = await run();
        failed = false;
        span.setAttribute(ATTR.RETRIEVAL_HITS, hitsOf(result).length);
        return result;
      } finally {
        instruments().retrievalDuration.record(secondsSince(started), {
          [ATTR.RETRIEVER]: retrieverName,
          ...(failed ? { [ATTR.ERROR_TYPE]: 'error' } : {}),
        });
      }
    });
  };
  const instrumented: Retriever & { [INSTRUMENTED]: true } = {
    [INSTRUMENTED]: true,
    retrieve: (request: RetrievalRequest): Promise<RetrievedEvent[]> =>
      traced(
        request,
        () => retriever.retrieve(request),
        (hits) => hits,
      ),
  };
  const withNeighbours = retriever.retrieveWithNeighbours;
  if (typeof withNeighbours === 'function') {
    instrumented.retrieveWithNeighbours = (request, radius) =>
      traced(
        request,
        () => withNeighbours.call(retriever, request, radius),
        (result) => result.hits,
      );
  }
  // Neighbour reads are part of the request that retrieved the hits: passed through as they are.
  const neighbours = retriever.findEventNeighbours;
  if (typeof neighbours === 'function') instrumented.findEventNeighbours = neighbours.bind(retriever);
  // Reads started ahead belong to the request that uses them, which is traced.
  const prepare = retriever.prepare;
  if (typeof prepare === 'function') instrumented.prepare = prepare.bind(retriever);
  return instrumented;
}
