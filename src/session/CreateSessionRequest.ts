import { InvalidArgumentError, requireText } from '../errors.js';

export interface CreateSessionRequest {
  userId: string;
  /** Blank or missing → a random UUID. */
  id?: string;
  /** Overrides the service's default time to live; may be negative (already expired). */
  timeToLiveMs?: number;
  metadata?: Record<string, unknown>;
}

/** Validates a create request ("userId must not be null or empty"). */
export function validateCreateSessionRequest(request: CreateSessionRequest): CreateSessionRequest {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  requireText(request.userId, 'userId');
  if (request.timeToLiveMs !== undefined && request.timeToLiveMs !== null && !Number.isFinite(request.timeToLiveMs)) {
    throw new InvalidArgumentError('timeToLiveMs must be a finite number');
  }
  return request;
}
