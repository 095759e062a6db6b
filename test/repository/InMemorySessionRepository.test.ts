import { InMemorySessionRepository } from '../../src/index.js';
import { repositoryContract } from './contract.js';

repositoryContract('InMemorySessionRepository', async () => new InMemorySessionRepository());
