import { InvalidArgumentError } from '../errors.js';
import {
  invalid,
  requireFiniteNumber,
  requireJsonObject,
  requireStorableString,
  requireStorableText,
} from '../validation/inputs.js';

export interface CreateSessionRequest {
  userId: string;
  /** Blank or missing → a random UUID. */
  id?: string;
  /** Overrides the service's default time to live; may be negative (already expired). */
  timeToLiveMs?: number;
  metadata?: Record<string, unknown>;
  /**
   * Create the session even though a session with this `id` was deleted and its tombstone still blocks the
   * id — allowed only for the deleted session's owner (same userId). Default false.
   */
  allowRecreate?: boolean;
}

/** Validates a create request ("userId must not be null or empty"); returns a checked copy. */
export function validateCreateSessionRequest(request: CreateSessionRequest): CreateSessionRequest {
  if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
  if (typeof request !== 'object') throw invalid('request', 'an object', request);
  const checked: CreateSessionRequest = { userId: requireStorableText(request.userId, 'userId') };
  if (request.id !== undefined && request.id !== null) {
    if (typeof request.id !== 'string') throw invalid('id', 'a string', request.id);
    if (request.id.trim() !== '') checked.id = requireStorableString(request.id, 'id');
  }
  if (request.timeToLiveMs !== undefined && request.timeToLiveMs !== null) {
    checked.timeToLiveMs = requireFiniteNumber(request.timeToLiveMs, 'timeToLiveMs');
  }
  if (request.metadata !== undefined && request.metadata !== null)
    checked.metadata = requireJsonObject(request.metadata, 'metadata', true);
  if (request.allowRecreate !== undefined && request.allowRecreate !== null) {
    if (typeof request.allowRecreate !== 'boolean') throw invalid('allowRecreate', 'a boolean', request.allowRecreate);
    checked.allowRecreate = request.allowRecreate;
  }
  return checked;
}
