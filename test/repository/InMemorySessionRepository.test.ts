import { InMemorySessionRepository } from 'session-compaction';
import { repositoryContract } from './contract.js';
import { tortureSuite } from './torture.js';
import { atomicMetadataSuite } from './metadataContract.js';

repositoryContract('InMemorySessionRepository', async () => new InMemorySessionRepository());

// One process, one store: the two "instances" are the same repository.
tortureSuite('one in-memory repository', () => {
  const repo = new InMemorySessionRepository();
  return [repo, repo];
});

atomicMetadataSuite('one in-memory repository', () => {
  const repo = new InMemorySessionRepository();
  return [repo, repo];
});
