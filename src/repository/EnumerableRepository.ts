import { hasMethods } from './hasMethods.js';

export interface ListSessionIdsOptions {
  /** From the previous page; absent or null for the first page. */
  cursor?: string | null;
  /** Page size hint; default 500. */
  limit?: number;
}

export interface SessionIdPage {
  ids: string[];
  /** Pass to the next call; null when every id has been returned. */
  cursor: string | null;
}

/** A repository that can list every session it holds. Admin tools (verify, export, copy) enumerate a store with it. */
export interface EnumerableRepository {
  /**
   * Every session id, one page at a time (pass the returned `cursor` back; `null` means done). A page may
   * repeat an id of an earlier one on backends without an ordered index (Redis SCAN).
   */
  listSessionIds(options?: ListSessionIdsOptions): Promise<SessionIdPage>;
}

/** Whether `repository` is an EnumerableRepository: it has every one of its methods. */
export function isEnumerableRepository<R>(repository: R): repository is R & EnumerableRepository {
  return hasMethods(repository, ['listSessionIds']);
}
