import 'reflect-metadata';
import { Container, type ResolutionContext } from 'inversify';
import OpenAI from 'openai';
import {
  ContextWindowTrigger,
  createSessionCompactionModule,
  loadConfigurationFile,
  ResolvedConfiguration,
  OpenAIChatClient,
  RecallTools,
  RecursiveSummarizationCompactionStrategy,
  TYPES,
  type ChatClient,
  type DefaultSessionService,
  type Logger,
  type SessionRepository,
  type TokenCountEstimator,
} from 'session-compaction';
import { OpenAISessionMemory } from 'session-compaction/openai';
import type { ChatServerConfig } from './config.js';

/** The app's own injection tokens, next to the library's TYPES. */
export const APP_TYPES = {
  Config: Symbol.for('chat-server.Config'),
  OpenAI: Symbol.for('chat-server.OpenAI'),
  SessionMemory: Symbol.for('chat-server.SessionMemory'),
  RecallTools: Symbol.for('chat-server.RecallTools'),
} as const;

/**
 * Wires the library into an inversify container: the library module binds repository, SessionService, estimator
 * and logger; the app adds the OpenAI client, the summariser, SessionMemory and the recall tools. Handlers only
 * ever ask the container. Falls back from SQLite to memory when the native driver cannot load.
 */
export function createChatContainer(
  config: ChatServerConfig,
  overrides: { logger?: Logger; tokenCountEstimator?: TokenCountEstimator } = {},
): Container {
  const client = new OpenAI({ baseURL: config.openaiBaseURL, apiKey: config.openaiApiKey ?? 'no-key' });
  // A configuration file (CONFIG_FILE) is read and checked here, so a bad key stops the server at startup.
  const file = config.configFile !== undefined ? new ResolvedConfiguration(loadConfigurationFile(config.configFile)) : undefined;
  const fromFile = file?.configuration;
  const build = (repository: ChatServerConfig['repository'] | undefined) => {
    const container = new Container();
    container.load(
      createSessionCompactionModule({
        ...(file !== undefined ? { configuration: file } : {}),
        ...(repository !== undefined ? { repository } : {}),
        sqlite: { path: config.sqlitePath },
        ...(config.pgUrl ? { postgres: { connectionString: config.pgUrl } } : {}),
        ...(config.redisUrl ? { redis: { url: config.redisUrl } } : {}),
        ...(fromFile?.logLevel === undefined ? { logLevel: config.logLevel } : {}),
        ...(overrides.logger ? { logger: overrides.logger } : {}),
        ...(overrides.tokenCountEstimator ? { tokenCountEstimator: overrides.tokenCountEstimator } : {}),
        // The file's summariser, when it has one; else the chat endpoint with SUMMARY_MODEL.
        ...(fromFile?.summarizer === undefined
          ? {
              chatClient: new OpenAIChatClient({
                client,
                model: config.summaryModel ?? config.model,
                ...(overrides.logger ? { logger: overrides.logger } : {}),
              }),
            }
          : {}),
      }),
    );
    container.get<SessionRepository>(TYPES.SessionRepository); // fail fast on a driver or connection problem
    return container;
  };
  // A repository in the file wins over REPOSITORY.
  const repository = fromFile?.repository !== undefined ? undefined : config.repository;
  let container: Container;
  try {
    container = build(repository);
  } catch (error) {
    if ((repository ?? fromFile?.repository?.kind) !== 'sqlite') throw error;
    container = build('memory');
    container.get<Logger>(TYPES.Logger).warn('SQLite unavailable, using the in-memory repository', { error: String(error) });
  }

  warmTokenEstimator(container);
  container.bind<ChatServerConfig>(APP_TYPES.Config).toConstantValue(config);
  container.bind<OpenAI>(APP_TYPES.OpenAI).toConstantValue(client);
  container
    .bind<OpenAISessionMemory>(APP_TYPES.SessionMemory)
    .toDynamicValue(
      (ctx) =>
        new OpenAISessionMemory({
          sessionService: ctx.get<DefaultSessionService>(TYPES.SessionService),
          client: ctx.get<OpenAI>(APP_TYPES.OpenAI),
          model: config.model,
          contextWindowTokens: file?.contextWindowTokens ?? config.contextWindowTokens,
          ...(config.modelTimeoutMs !== undefined ? { timeoutMs: config.modelTimeoutMs } : {}),
          ...compactionOf(ctx),
          // Calibration writes session metadata through the repository the service uses.
          metadataStore: ctx.get<SessionRepository>(TYPES.SessionRepository),
          logger: ctx.get<Logger>(TYPES.Logger),
        }),
    )
    .inSingletonScope();
  /** The file's default profile, or the server's own recursive summarisation at THRESHOLD_RATIO. */
  function compactionOf(ctx: ResolutionContext) {
    const chatClient = ctx.get<ChatClient>(TYPES.ChatClient);
    const logger = ctx.get<Logger>(TYPES.Logger);
    if (file !== undefined) {
      const { compactionTrigger, compactionStrategy, compactBeforeCall } = file.compaction(undefined, { chatClient, logger });
      return { compactionTrigger, compactionStrategy, ...(compactBeforeCall !== undefined ? { compactBeforeCall } : {}) };
    }
    return {
      compactionTrigger: new ContextWindowTrigger({
        contextWindowTokens: config.contextWindowTokens,
        thresholdRatio: config.thresholdRatio,
      }),
      compactionStrategy: new RecursiveSummarizationCompactionStrategy({
        chatClient,
        maxEventsToKeep: config.keepEvents,
        failureMode: config.summaryFailureMode ?? 'stub',
        overlapSize: Math.min(2, config.keepEvents - 1),
        logger,
      }),
    };
  }
  container
    .bind<RecallTools>(APP_TYPES.RecallTools)
    .toDynamicValue((ctx) => new RecallTools({ sessionService: ctx.get<DefaultSessionService>(TYPES.SessionService) }))
    .inSingletonScope();
  return container;
}

/**
 * Loads the estimator's rank table now (a few hundred ms, once per process) rather than during the first
 * user's request, which would otherwise pay for it.
 */
function warmTokenEstimator(container: Container): void {
  const started = performance.now();
  container.get<TokenCountEstimator>(TYPES.TokenCountEstimator).estimate('warm up the token estimator');
  container.get<Logger>(TYPES.Logger).info('token estimator ready', { ms: Math.round(performance.now() - started) });
}
