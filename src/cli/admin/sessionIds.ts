import { IllegalStateError } from '../../errors.js';
import { isEnumerableRepository } from '../../repository/EnumerableRepository.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';

/**
 * Every session id of a repository, page by page through its `listSessionIds`, each id once (Redis SCAN may
 * repeat one across pages).
 */
export async function* allSessionIds(repository: SessionRepository, pageSize = 500): AsyncGenerator<string> {
  if (!isEnumerableRepository(repository)) {
    throw new IllegalStateError('this repository cannot list its sessions (it has no listSessionIds)');
  }
  const seen = new Set<string>();
  let cursor: string | null = null;
  do {
    const page = await repository.listSessionIds({ cursor, limit: pageSize });
    for (const id of page.ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      yield id;
    }
    cursor = page.cursor;
  } while (cursor !== null);
}

export async function collectSessionIds(repository: SessionRepository): Promise<string[]> {
  const ids: string[] = [];
  for await (const id of allSessionIds(repository)) ids.push(id);
  return ids;
}
