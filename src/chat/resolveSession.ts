import { IllegalStateError } from '../errors.js';
import { accessDenied } from '../service/sessionAccess.js';
import type { SessionService } from '../service/SessionService.js';
import type { Session } from '../session/Session.js';

/**
 * The session a chat integration writes to: created on first use (owned by `userId`, or `defaultUserId`
 * when the caller gave none); a session owned by someone else than `userId` is an access violation. Another
 * process may create the session between our read and our create: then the winner's is read. A deleted id
 * is refused (its tombstone) unless `allowRecreate` and the caller is the deleted session's owner.
 */
export async function resolveSession(
  service: Pick<SessionService, 'findById' | 'create'>,
  sessionId: string,
  userId: string | undefined,
  defaultUserId: string,
  options: { allowRecreate?: boolean } = {},
): Promise<Session> {
  let session = await service.findById(sessionId);
  if (session === null) {
    try {
      session = await service.create({
        id: sessionId,
        userId: userId ?? defaultUserId,
        ...(options.allowRecreate === true ? { allowRecreate: true } : {}),
      });
    } catch (error) {
      session = error instanceof IllegalStateError ? await service.findById(sessionId) : null;
      if (session === null) throw error;
    }
  }
  if (userId !== undefined && session.userId !== userId) throw accessDenied(sessionId, userId);
  return session;
}
