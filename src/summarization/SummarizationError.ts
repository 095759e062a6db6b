/** Why a summariser call failed; `retryable` kinds were already retried by the client before surfacing. */
export type SummarizationErrorKind = 'http' | 'timeout' | 'aborted' | 'connection' | 'malformed-response' | 'blank' | 'quality';

/**
 * A summariser call that failed: the endpoint's HTTP error, a timeout, an abort, a connection failure or
 * an unreadable response. The original error is `cause`. Strategies catch it (failure modes 'skip' and
 * 'stub') or rethrow it (failure mode 'throw').
 */
export class SummarizationError extends Error {
  readonly kind: SummarizationErrorKind;
  /** HTTP status, for kind 'http'. */
  readonly status: number | undefined;

  constructor(message: string, options: { cause?: unknown; kind: SummarizationErrorKind; status?: number }) {
    super(message, { cause: options.cause });
    this.name = 'SummarizationError';
    this.kind = options.kind;
    this.status = options.status;
  }
}
