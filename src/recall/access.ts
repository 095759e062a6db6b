import { isBranchVisible } from '../filter/EventFilter.js';
import type { Session } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import { accessDenied } from '../service/sessionAccess.js';
import type { SessionService } from '../service/SessionService.js';

/**
 * Who may read what, shared by every retriever and the recall tools so the rules exist once: the user id
 * comes from server-side state, a session of another user is an access violation, and a branch sees only
 * root events, its own and its ancestors'.
 */

/** The caller's own session or null when it does not exist yet; another user's session is an access violation. */
export async function ownSession(
  service: SessionService,
  sessionId: string,
  userId: string,
  read: Promise<Session | null> = service.findById(sessionId),
): Promise<Session | null> {
  const session = await read;
  if (session !== null && session.userId !== userId) throw accessDenied(sessionId, userId);
  return session;
}

/**
 * Branch scoping: a branch sees root events, its own and its ancestors' (never siblings'
 * or children's); the root conversation sees root events only.
 */
export function visibleTo(branch: string | null): (event: SessionEvent) => boolean {
  return branch === null ? (e) => e.branch === null : (e) => isBranchVisible(branch, e.branch);
}

export const hasText = (e: SessionEvent): boolean => e.text !== null && e.text.trim() !== '';
