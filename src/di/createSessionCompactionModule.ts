import 'reflect-metadata';
import { ContainerModule } from 'inversify';
import type { Logger } from '../logging.js';
import { createDefaultLogger } from '../logging.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import type { CompactionHooks } from '../service/CompactionHooks.js';
import type { CompactionLock, CompactionLockSettings } from '../lock/CompactionLock.js';
import { DefaultSessionService, type DefaultSessionServiceOptions } from '../service/DefaultSessionService.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import { createRepository, type RepositoryKind, type RepositorySettings } from './repositoryFactories.js';
import { ModuleResources } from './ModuleResources.js';
import { TYPES } from './types.js';
import { InvalidArgumentError } from '../errors.js';
import { CompactionProfileRegistry } from '../compaction/profiles/CompactionProfileRegistry.js';
import { loadConfigurationFile } from '../config/loadConfiguration.js';
import { ResolvedConfiguration, type ConfiguredRepository } from '../config/ResolvedConfiguration.js';
import type { SessionCompactionConfiguration } from '../config/SessionCompactionConfiguration.js';

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
  /**
   * A configuration file (YAML or JSON, see docs/profiles.md), read and validated now: its repository,
   * summariser, profiles, session TTL and log level apply wherever the options above leave them unset.
   */
  configFile?: string;
  /** The same, already loaded (`loadConfigurationFile`, `parseConfiguration`, or a `ResolvedConfiguration`). */
  configuration?: SessionCompactionConfiguration | ResolvedConfiguration;
  /** Where the configuration's `use:` names are looked up; default the built-in profiles. */
  profiles?: CompactionProfileRegistry;
}

function resolveConfiguration(options: SessionCompactionModuleOptions): ResolvedConfiguration | undefined {
  if (options.configFile !== undefined && options.configuration !== undefined) {
    throw new InvalidArgumentError('give configFile or configuration, not both');
  }
  const registry = options.profiles !== undefined ? { registry: options.profiles } : {};
  if (options.configFile !== undefined) {
    return new ResolvedConfiguration(loadConfigurationFile(options.configFile), { ...registry, source: options.configFile });
  }
  if (options.configuration instanceof ResolvedConfiguration) return options.configuration;
  return options.configuration === undefined ? undefined : new ResolvedConfiguration(options.configuration, registry);
}

/** The configured repository as this module's backend settings; explicit settings win. */
function withConfiguredRepository(
  options: SessionCompactionModuleOptions,
  configured: ConfiguredRepository | undefined,
): SessionCompactionModuleOptions {
  if (options.repository !== undefined || configured === undefined) return options;
  const common = {
    ...(configured.prefix !== undefined ? { prefix: configured.prefix } : {}),
    ...(configured.initializeSchema !== undefined ? { initializeSchema: configured.initializeSchema } : {}),
  };
  const url = configured.url;
  return {
    ...options,
    repository: configured.kind,
    sqlite: { ...common, ...(configured.path !== undefined ? { path: configured.path } : {}), ...options.sqlite },
    postgres: { ...common, ...(url !== undefined ? { connectionString: url } : {}), ...options.postgres },
    redis: { ...common, ...(url !== undefined ? { url } : {}), ...options.redis },
  };
}

/**
 * Binds the library's services in singleton scope. Every binding can be replaced afterwards with
 * `container.rebindSync(TYPES.X)`; the service resolves its repository and logger through the container.
 */
export function createSessionCompactionModule(moduleOptions: SessionCompactionModuleOptions = {}): ContainerModule {
  // Read and checked now, so a bad file fails at startup with the path of the bad key, not at first use.
  const config = resolveConfiguration(moduleOptions ?? {});
  const options = withConfiguredRepository(moduleOptions ?? {}, config?.repository());
  const logLevel = options.logLevel ?? config?.configuration.logLevel;
  const defaultTimeToLiveMs = options.defaultTimeToLiveMs ?? config?.defaultTimeToLiveMs;
  return new ContainerModule(({ bind }) => {
    const resources = new ModuleResources();
    bind<ModuleResources>(TYPES.ModuleResources).toConstantValue(resources);
    bind<Logger>(TYPES.Logger)
      .toDynamicValue(() => options.logger ?? createDefaultLogger(logLevel !== undefined ? { level: logLevel } : {}))
      .inSingletonScope();
    bind<SessionRepository>(TYPES.SessionRepository)
      .toDynamicValue((ctx) => {
        const repo = options.repository ?? 'sqlite';
        if (typeof repo !== 'string') return repo;
        const created = createRepository(repo, { ...options, logger: ctx.get<Logger>(TYPES.Logger) });
        resources.track(() => created.close?.());
        return created;
      })
      .inSingletonScope();
    bind<DefaultSessionServiceOptions>(TYPES.SessionServiceOptions)
      .toDynamicValue((ctx) => ({
        ...(defaultTimeToLiveMs !== undefined ? { defaultTimeToLiveMs } : {}),
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
    else if (config?.configuration.summarizer !== undefined) {
      bind<ChatClient>(TYPES.ChatClient)
        .toDynamicValue((ctx) => config.createChatClient(ctx.get<Logger>(TYPES.Logger))!)
        .inSingletonScope();
    }
    bind<CompactionProfileRegistry>(TYPES.CompactionProfiles).toConstantValue(
      config?.profiles ?? options.profiles ?? CompactionProfileRegistry.withBuiltIns(),
    );
    if (config !== undefined) bind<ResolvedConfiguration>(TYPES.Configuration).toConstantValue(config);
  });
}

/** Anything that can answer for a binding: an inversify 7 or 8 Container. */
export interface BindingSource {
  isBound(serviceIdentifier: symbol): boolean;
  get<T>(serviceIdentifier: symbol): T;
}

/**
 * Closes what `createSessionCompactionModule` opened in this container — the repository it built (database
 * file, connection pool, Redis client) — so that a script or a server's shutdown ends cleanly. Safe to call any
 * number of times and on a container whose service was never resolved; a repository instance you passed to
 * the module is yours to close.
 */
export async function closeSessionCompaction(container: BindingSource): Promise<void> {
  if (!container.isBound(TYPES.ModuleResources)) return;
  await container.get<ModuleResources>(TYPES.ModuleResources).close();
}
