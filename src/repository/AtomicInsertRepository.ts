import type { SessionLike } from '../session/Session.js';
import { hasMethods } from './hasMethods.js';

/**
 * A repository that inserts a session only when its id is free, in one atomic step. `SessionService.create`
 * uses it to refuse a caller-chosen id that exists (instead of taking that session over), and `forkSession`
 * to claim the fork's id; without it they check, then save (not atomic).
 */
export interface AtomicInsertRepository {
  /** Inserts the session unless a session has its id, atomically; true when inserted. */
  saveIfAbsent(session: SessionLike): Promise<boolean>;
}

/** Whether `repository` is an AtomicInsertRepository: it has every one of its methods. */
export function isAtomicInsertRepository<R>(repository: R): repository is R & AtomicInsertRepository {
  return hasMethods(repository, ['saveIfAbsent']);
}
