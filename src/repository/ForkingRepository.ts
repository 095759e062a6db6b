import type { SessionLike } from '../session/Session.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { EventLogState } from './EventLogStateRepository.js';
import { hasMethods } from './hasMethods.js';

export interface ForkRequest {
  /** The session the events were copied from. */
  sourceId: string;
  /**
   * The source's state the events were read at. The fork is refused ('changed') when the source's version
   * (or, unless null, its purge generation) moved since: the copy would no longer be a prefix of its log.
   */
  expected: EventLogState;
  /** The new session (its owner is the source's). */
  fork: SessionLike;
  /** The copies, in log order, each with `sessionId` = the fork's id and its archived flag. */
  events: readonly SessionEvent[];
  /**
   * Unique to this call: a store whose client re-sends a command after a lost reply (Redis) recognises its
   * own applied fork by it instead of reporting the id as taken.
   */
  token: string;
}

/**
 * 'forked': the session and all its events were written; 'changed': the source moved since it was read
 * (nothing written, read it again); 'source-missing': the source is gone — erased or deleted — (nothing
 * written); 'exists': a session already has the fork's id (nothing written).
 */
export type ForkOutcome = 'forked' | 'changed' | 'source-missing' | 'exists';

/**
 * A repository that writes a fork in one atomic step: it checks that the source still exists at the state
 * its events were read at, that the owner's sessions are not being erased (UserErasureRepository) and that
 * the id is neither taken nor tombstoned, then inserts the session with every copied event — all or nothing,
 * so a crash never leaves an empty or partial fork, and an erasure that removed the source cannot be undone
 * by a fork that read it before. A tombstoned id throws sessionDeletedError; an erasure in progress
 * throws userErasureInProgressError. Without it `forkSession` saves the session, then appends (not atomic).
 */
export interface ForkingRepository {
  forkSession(request: ForkRequest): Promise<ForkOutcome>;
}

/** Whether `repository` is a ForkingRepository: it has every one of its methods. */
export function isForkingRepository<R>(repository: R): repository is R & ForkingRepository {
  return hasMethods(repository, ['forkSession']);
}
