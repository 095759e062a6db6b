import 'reflect-metadata';
import { Container } from 'inversify';
import OpenAI from 'openai';
import {
  ContextWindowTrigger,
  createSessionCompactionModule,
  OpenAIChatClient,
  RecallTools,
  RecursiveSummarizationCompactionStrategy,
  SessionMemory,
  TYPES,
  type ChatClient,
  type DefaultSessionService,
  type Logger,
  type SessionRepository,
  type TokenCountEstimator,
} from '../../src/index.js';
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
  const build = (repository: ChatServerConfig['repository']) => {
    const container = new Container();
    container.load(
      createSessionCompactionModule({
        repository,
        sqlite: { path: config.sqlitePath },
        ...(config.pgUrl ? { postgres: { connectionString: config.pgUrl } } : {}),
        logLevel: config.logLevel,
        ...(overrides.logger ? { logger: overrides.logger } : {}),
        ...(overrides.tokenCountEstimator ? { tokenCountEstimator: overrides.tokenCountEstimator } : {}),
        chatClient: new OpenAIChatClient({
          client,
          model: config.summaryModel ?? config.model,
          ...(overrides.logger ? { logger: overrides.logger } : {}),
        }),
      }),
    );
    container.get<SessionRepository>(TYPES.SessionRepository); // fail fast on a driver or connection problem
    return container;
  };
  let container: Container;
  try {
    container = build(config.repository);
  } catch (error) {
    if (config.repository !== 'sqlite') throw error;
    container = build('memory');
    container.get<Logger>(TYPES.Logger).warn('SQLite unavailable, using the in-memory repository', { error: String(error) });
  }

  warmTokenEstimator(container);
  container.bind<ChatServerConfig>(APP_TYPES.Config).toConstantValue(config);
  container.bind<OpenAI>(APP_TYPES.OpenAI).toConstantValue(client);
  container
    .bind<SessionMemory>(APP_TYPES.SessionMemory)
    .toDynamicValue(
      (ctx) =>
        new SessionMemory({
          sessionService: ctx.get<DefaultSessionService>(TYPES.SessionService),
          client: ctx.get<OpenAI>(APP_TYPES.OpenAI),
          model: config.model,
          contextWindowTokens: config.contextWindowTokens,
          ...(config.modelTimeoutMs !== undefined ? { timeoutMs: config.modelTimeoutMs } : {}),
          compactionTrigger: new ContextWindowTrigger({
            contextWindowTokens: config.contextWindowTokens,
            thresholdRatio: config.thresholdRatio,
          }),
          compactionStrategy: new RecursiveSummarizationCompactionStrategy({
            chatClient: ctx.get<ChatClient>(TYPES.ChatClient),
            maxEventsToKeep: config.keepEvents,
            failureMode: config.summaryFailureMode ?? 'stub',
            overlapSize: Math.min(2, config.keepEvents - 1),
            logger: ctx.get<Logger>(TYPES.Logger),
          }),
          // Calibration writes session metadata through the repository the service uses.
          metadataStore: ctx.get<SessionRepository>(TYPES.SessionRepository),
          logger: ctx.get<Logger>(TYPES.Logger),
        }),
    )
    .inSingletonScope();
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
