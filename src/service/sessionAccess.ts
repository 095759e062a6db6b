import { IllegalStateError } from '../errors.js';

/** The one ownership-violation message, shared by SessionMemory, the recall tools and the example server. */
export function accessDeniedMessage(sessionId: string, userId: string): string {
  return `Session '${sessionId}' does not belong to user '${userId}'. Access denied.`;
}

export function accessDenied(sessionId: string, userId: string): IllegalStateError {
  return new IllegalStateError(accessDeniedMessage(sessionId, userId));
}
