import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteSessionRepository } from 'session-compaction';
import { repositoryContract } from '../../repository/contract.js';

repositoryContract('SqliteSessionRepository (:memory:)', async () => new SqliteSessionRepository({ path: ':memory:' }));

const dir = mkdtempSync(join(tmpdir(), 'sqlite-contract-'));
let n = 0;
after(() => rmSync(dir, { recursive: true, force: true }));

repositoryContract(
  'SqliteSessionRepository (file, WAL, prefixed tables)',
  async () => new SqliteSessionRepository({ path: join(dir, `contract-${n++}.db`), prefix: 'contract' }),
);
