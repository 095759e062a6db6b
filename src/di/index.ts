export { TYPES } from './types.js';
export { createSessionCompactionModule, type SessionCompactionModuleOptions } from './createSessionCompactionModule.js';
export { type RepositoryKind, type RepositorySettings } from './repositoryFactories.js';
