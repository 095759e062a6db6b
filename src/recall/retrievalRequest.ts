import { InvalidArgumentError, requireText } from '../errors.js';
import { DEFAULT_RETRIEVAL_LIMIT, type RetrievalRequest } from './Retriever.js';

/** A RetrievalRequest with every default applied and every field checked. */
export interface NormalisedRetrievalRequest {
  sessionId: string;
  query: string;
  limit: number;
  scope: 'session' | 'user';
  userId: string | null;
  includeActive: boolean;
  branch: string | null;
}

/**
 * Validates a request the way every retriever must: bad arguments throw InvalidArgumentError, a blank
 * query is not an error (the caller gets []), and scope 'user' without a user id is refused rather than
 * widened to "every user".
 */
export function normaliseRetrievalRequest(request: RetrievalRequest): NormalisedRetrievalRequest {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  const sessionId = requireText(request.sessionId, 'sessionId');
  if (typeof request.query !== 'string') throw new InvalidArgumentError('query must be a string');
  const limit = request.limit ?? DEFAULT_RETRIEVAL_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit <= 0) {
    throw new InvalidArgumentError('limit must be greater than 0');
  }
  const scope = request.scope ?? 'session';
  if (scope !== 'session' && scope !== 'user') throw new InvalidArgumentError("scope must be 'session' or 'user'");
  const userId = request.userId === undefined || request.userId === null ? null : requireText(request.userId, 'userId');
  if (scope === 'user' && userId === null) throw new InvalidArgumentError("userId is required for scope 'user'");
  const branch = request.branch ?? null;
  if (branch !== null && typeof branch !== 'string') throw new InvalidArgumentError('branch must be a string or null');
  return {
    sessionId,
    query: request.query,
    limit,
    scope,
    userId,
    includeActive: request.includeActive === true,
    branch: branch === '' ? null : branch,
  };
}
