import 'reflect-metadata';
import { ContainerModule } from 'inversify';
import type { Logger } from '../logging.js';
import { createDefaultLogger } from '../logging.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import type { CompactionHooks } from '../service/CompactionHooks.js';
import type { CompactionLock, CompactionLockSettings } from '../service/lock/CompactionLock.js';
import { DefaultSessionService, type DefaultSessionServiceOptions } from '../service/DefaultSessionService.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { createRepository, type RepositoryKind, type RepositorySettings } from './repositoryFactories.js';
import { TYPES } from './types.js';

export interface SessionCompactionModuleOptions extends RepositorySettings {
  /** A backend name or your own instance; default 'sqlite' (file `./sessions.db`, see `sqlite.path`). */
  repository?: RepositoryKind | SessionRepository;
  defaultTimeToLiveMs?: number;
  tokenCountEstimator?: TokenCountEstimator;
  chatClient?: ChatClient;
  /** Default: a winston logger at `logLevel` (default 'warn') writing to stderr. */
  logger?: Logger;
  logLevel?: string;
  /** Compaction hooks of the bound service (`beforeCompaction` / `afterCompaction`). */
  hooks?: CompactionHooks | readonly CompactionHooks[];
  /**
   * A cross-process compaction lock for the bound service (or `{ lock, leaseMs?, waitMs? }`), e.g. a
   * PostgresCompactionLock on the repository's database; see docs/compaction-lock.md.
   */
  compactionLock?: CompactionLock | CompactionLockSettings;
}

/**
 * Binds the library's services in singleton scope. Every binding can be replaced afterwards with
 * `container.rebindSync(TYPES.X)`; the service resolves its repository and logger through the container.
 */
export function createSessionCompactionModule(options: SessionCompactionModuleOptions = {}): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<Logger>(TYPES.Logger)
      .toDynamicValue(
        () => options.logger ?? createDefaultLogger(options.logLevel !== undefined ? { level: options.logLevel } : {}),
      )
      .inSingletonScope();
    bind<SessionRepository>(TYPES.SessionRepository)
      .toDynamicValue((ctx) => {
        const repo = options.repository ?? 'sqlite';
        if (typeof repo !== 'string') return repo;
        return createRepository(repo, { ...options, logger: ctx.get<Logger>(TYPES.Logger) });
      })
      .inSingletonScope();
    bind<DefaultSessionServiceOptions>(TYPES.SessionServiceOptions)
      .toDynamicValue((ctx) => ({
        ...(options.defaultTimeToLiveMs !== undefined ? { defaultTimeToLiveMs: options.defaultTimeToLiveMs } : {}),
        ...(options.hooks !== undefined ? { hooks: options.hooks } : {}),
        ...(options.compactionLock !== undefined ? { compactionLock: options.compactionLock } : {}),
        logger: ctx.get<Logger>(TYPES.Logger),
        tokenCountEstimator: ctx.get<TokenCountEstimator>(TYPES.TokenCountEstimator),
      }))
      .inSingletonScope();
    bind<DefaultSessionService>(TYPES.SessionService)
      .toDynamicValue(
        (ctx) =>
          new DefaultSessionService(
            ctx.get<SessionRepository>(TYPES.SessionRepository),
            ctx.get<DefaultSessionServiceOptions>(TYPES.SessionServiceOptions),
          ),
      )
      .inSingletonScope();
    bind<TokenCountEstimator>(TYPES.TokenCountEstimator).toConstantValue(
      options.tokenCountEstimator ?? defaultTokenCountEstimator(),
    );
    if (options.chatClient !== undefined) bind<ChatClient>(TYPES.ChatClient).toConstantValue(options.chatClient);
  });
}
