import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemorySessionRepository, type SessionRepository } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
import type { BenchRepositoryKind } from '../BenchConfig.js';

/**
 * A fresh repository for one replay. SQLite uses a temporary database file (removed on close) with
 * `synchronous: 'NORMAL'`: the benchmark measures the library's queries, not the disk's fsync latency.
 */
export function createBenchRepository(kind: BenchRepositoryKind): SessionRepository {
  if (kind === 'memory') return new InMemorySessionRepository();
  const dir = mkdtempSync(join(tmpdir(), 'session-compaction-bench-'));
  const repository = new SqliteSessionRepository({ path: join(dir, 'bench.db'), synchronous: 'NORMAL' });
  const close = repository.close.bind(repository);
  repository.close = async () => {
    try {
      await close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return repository;
}
