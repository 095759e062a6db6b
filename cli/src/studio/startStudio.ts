import { createSummarizer } from 'session-compaction-bench';
import {
  CompactionProfileRegistry,
  DefaultSessionService,
  defaultTokenCountEstimator,
  IllegalStateError,
  InvalidArgumentError,
  RepositoryRetriever,
  ResolvedConfiguration,
  loadConfigurationFile,
  type Logger,
  type RecallSettings,
  type SessionRepository,
} from 'session-compaction';
import { explainSchemaError, requireSchema } from '../admin/storeSchema.js';
import { describeLocation, openRepository } from '../openRepository.js';
import { StudioServer } from './StudioServer.js';
import type { StudioContext } from './StudioContext.js';

/** The window pressure is measured against when neither --context-window nor a configuration gives one. */
export const DEFAULT_STUDIO_CONTEXT_WINDOW = 8000;

export interface StudioOptions {
  /** The store (`sqlite:…`, `postgres://…`, `redis://…`); else the configuration file's repository. */
  url?: string;
  /** A configuration file (YAML or JSON): its repository, window, recall settings, profiles and summariser. */
  config?: string;
  prefix?: string;
  /** 0 or absent: a free port. */
  port?: number;
  allowWrites?: boolean;
  contextWindowTokens?: number;
  /** The access token (tests); default random. */
  token?: string;
  logger: Logger;
}

export interface RunningStudio {
  /** The URL with the access token, to open in a browser. */
  url: string;
  origin: string;
  token: string;
  server: StudioServer;
  /** What the views read (the store, the service, the window). */
  context: StudioContext;
  repository: SessionRepository;
  where: string;
  /** Stops the server and closes the store. */
  close(): Promise<void>;
}

/** The URL of the repository a configuration file names (its URL read from the environment as DI does). */
function configuredUrl(configuration: ResolvedConfiguration, source: string): { url: string; prefix?: string } {
  const r = configuration.repository();
  if (r === undefined) throw new InvalidArgumentError(`${source} configures no repository: give --url`);
  const prefix = r.prefix !== undefined ? { prefix: r.prefix } : {};
  switch (r.kind) {
    case 'sqlite':
      if (r.path === undefined) throw new InvalidArgumentError(`${source}: the sqlite repository names no path`);
      return { url: `sqlite:${r.path}`, ...prefix };
    case 'memory':
      return { url: 'memory:' };
    default:
      if (r.url === undefined) throw new InvalidArgumentError(`${source}: the ${r.kind} repository has no URL (set its urlEnv)`);
      return { url: r.url, ...prefix };
  }
}

/** Opens the one store, checks its schema (never migrates it) and serves the studio on 127.0.0.1. */
export async function startStudio(options: StudioOptions): Promise<RunningStudio> {
  const configuration =
    options.config === undefined
      ? undefined
      : new ResolvedConfiguration(loadConfigurationFile(options.config), { source: options.config });
  const target =
    options.url !== undefined
      ? { url: options.url }
      : configuration !== undefined
        ? configuredUrl(configuration, options.config!)
        : undefined;
  if (target === undefined) throw new InvalidArgumentError('give --url or --config');
  const window = options.contextWindowTokens ?? configuration?.contextWindowTokens ?? DEFAULT_STUDIO_CONTEXT_WINDOW;
  if (!Number.isInteger(window) || window <= 0) throw new InvalidArgumentError('--context-window must be a positive integer');
  const prefix = options.prefix ?? ('prefix' in target ? target.prefix : undefined);
  const { repository, location } = await openRepository(target.url, {
    logger: options.logger,
    ...(prefix !== undefined ? { prefix } : {}),
  });
  const where = describeLocation(location);
  try {
    const status = await requireSchema(repository, location, where).catch((error: unknown) => {
      throw explainSchemaError(error, null, location);
    });
    if (status !== null && status.pending.length > 0) {
      throw new IllegalStateError(
        `${where} is behind this release (pending schema versions ${status.pending.map((p) => p.version).join(', ')}): run session-compaction migrate`,
      );
    }
    const estimator = defaultTokenCountEstimator();
    const service = new DefaultSessionService(repository, { logger: options.logger, tokenCountEstimator: estimator });
    const recall: RecallSettings = { ...(configuration?.recall ?? {}) };
    const ctx: StudioContext = {
      repository,
      service,
      estimator,
      contextWindowTokens: window,
      retriever: new RepositoryRetriever({ repository }),
      recall,
      profiles: configuration?.profiles ?? CompactionProfileRegistry.withBuiltIns(),
      chatClient: configuration?.createChatClient(options.logger) ?? createSummarizer({}, estimator, options.logger).client,
      allowWrites: options.allowWrites === true,
      where,
      logger: options.logger,
    };
    const server = new StudioServer(ctx, {
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.token !== undefined ? { token: options.token } : {}),
    });
    const url = await server.start();
    return {
      url,
      origin: server.origin,
      token: server.token,
      server,
      context: ctx,
      repository,
      where,
      close: async () => {
        await server.close();
        await repository.close?.();
      },
    };
  } catch (error) {
    await repository.close?.();
    throw error;
  }
}
