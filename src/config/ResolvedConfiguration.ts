import { CompactionProfileRegistry } from '../compaction/profiles/CompactionProfileRegistry.js';
import type { CompactionSetup, ProfileContext } from '../compaction/profiles/CompactionProfile.js';
import { contextWindowOf } from '../compaction/modelContextWindows.js';
import type { Logger } from '../logging.js';
import type { RetentionPolicy } from '../service/lifecycle/reports.js';
import type { ChatClient } from '../summarization/ChatClient.js';
import { OpenAIChatClient } from '../providers/openai/OpenAIChatClient.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import {
  ConfigurationError,
  type ConfigurationIssue,
  type RecallConfiguration,
  type RepositoryConfiguration,
  type SessionCompactionConfiguration,
} from './SessionCompactionConfiguration.js';
import { validateConfiguration } from './loadConfiguration.js';

/** The window profiles are sized for when the configuration names none. */
export const DEFAULT_CONFIGURED_CONTEXT_WINDOW_TOKENS = 8000;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Stands in for the summariser while profiles are checked: it is never called. */
const CHECKING_CLIENT: ChatClient = { call: async () => null };

/** The connection settings of the configured repository, with the URL read from the environment. */
export interface ConfiguredRepository {
  kind: RepositoryConfiguration['kind'];
  path?: string;
  /** PostgreSQL connection string or Redis URL. */
  url?: string;
  prefix?: string;
  initializeSchema?: boolean;
}

/**
 * A validated configuration turned into what the library needs: the profile registry (built-ins plus the
 * file's profiles, each checked by building it once), the default profile, the window size, the retention
 * policy, the recall settings, the repository and the summariser (its key read from the environment).
 */
export class ResolvedConfiguration {
  readonly configuration: Readonly<SessionCompactionConfiguration>;
  readonly profiles: CompactionProfileRegistry;
  readonly defaultProfile: string;
  readonly contextWindowTokens: number;
  readonly retentionPolicy: RetentionPolicy | undefined;
  /** Recall settings for SessionMemory when recall is enabled, else undefined. */
  readonly recall: Omit<RecallConfiguration, 'enabled'> | undefined;
  readonly defaultTimeToLiveMs: number | undefined;
  private readonly env: NodeJS.ProcessEnv;

  /**
   * @param configuration a validated configuration (`loadConfigurationFile`, `parseConfiguration`), or a raw
   *   object, which is validated here
   * @param options `registry` to add the file's profiles to (default a new one with the built-ins; profiles you registered stay available to
   *   the file's `use:`), `env` for the environment variables (default process.env)
   */
  constructor(
    configuration: SessionCompactionConfiguration,
    options: { registry?: CompactionProfileRegistry; env?: NodeJS.ProcessEnv; source?: string } = {},
  ) {
    const source = options.source ?? '(inline)';
    this.configuration = Object.freeze(validateConfiguration(configuration, source));
    this.env = options.env ?? process.env;
    const config = this.configuration;
    const issues: ConfigurationIssue[] = [];
    this.contextWindowTokens = this.windowTokens(config, issues);
    this.profiles = options.registry ?? CompactionProfileRegistry.withBuiltIns();
    // A summariser may also come from the application (DI), so a summarising profile is checked with a stand-in.
    const checking: ProfileContext = { contextWindowTokens: this.contextWindowTokens, chatClient: CHECKING_CLIENT };
    for (const [name, profile] of Object.entries(config.profiles ?? {})) {
      try {
        this.profiles.define(name, profile, { replace: true });
        this.profiles.create(name, checking);
      } catch (error) {
        issues.push({ path: `profiles.${name}`, message: (error as Error).message });
      }
    }
    const names = Object.keys(config.profiles ?? {});
    this.defaultProfile = config.defaultProfile ?? (names.includes('default') ? 'default' : 'sliding-window');
    if (!this.profiles.has(this.defaultProfile)) {
      issues.push({
        path: 'defaultProfile',
        message: `unknown profile '${this.defaultProfile}' (known: ${this.profiles.names().join(', ')})`,
      });
    }
    if (issues.length > 0) throw new ConfigurationError(source, issues);
    const r = config.retention;
    this.retentionPolicy =
      r === undefined
        ? undefined
        : {
            ...(r.archivedEventsOlderThanDays !== undefined
              ? { archivedEventsOlderThanMs: r.archivedEventsOlderThanDays * DAY_MS }
              : {}),
            ...(r.maxArchivedEventsPerSession !== undefined
              ? { maxArchivedEventsPerSession: r.maxArchivedEventsPerSession }
              : {}),
            ...(r.sessionsIdleLongerThanDays !== undefined
              ? { sessionsIdleLongerThanMs: r.sessionsIdleLongerThanDays * DAY_MS }
              : {}),
          };
    const { enabled, ...recall } = config.recall ?? { enabled: false };
    this.recall = enabled === false || config.recall === undefined ? undefined : recall;
    const ttlDays = config.sessions?.timeToLiveDays;
    this.defaultTimeToLiveMs = ttlDays === undefined ? undefined : Math.round(ttlDays * DAY_MS);
  }

  private windowTokens(config: SessionCompactionConfiguration, issues: ConfigurationIssue[]): number {
    if (config.contextWindowTokens !== undefined) return config.contextWindowTokens;
    if (config.model === undefined) return DEFAULT_CONFIGURED_CONTEXT_WINDOW_TOKENS;
    try {
      return contextWindowOf(config.model);
    } catch (error) {
      issues.push({ path: 'model', message: (error as Error).message });
      return DEFAULT_CONFIGURED_CONTEXT_WINDOW_TOKENS;
    }
  }

  /** The configured repository, its URL taken from `urlEnv` (or PG_URL / REDIS_URL); undefined when none is configured. */
  repository(): ConfiguredRepository | undefined {
    const r = this.configuration.repository;
    if (r === undefined) return undefined;
    const fallbackEnv = r.kind === 'postgres' ? 'PG_URL' : r.kind === 'redis' ? 'REDIS_URL' : undefined;
    const envName = r.urlEnv ?? fallbackEnv;
    const url = r.url ?? (envName !== undefined ? this.env[envName] : undefined);
    if (r.urlEnv !== undefined && (url === undefined || url === '')) {
      throw new ConfigurationError('(environment)', [
        { path: 'repository.urlEnv', message: `the environment variable ${r.urlEnv} is not set` },
      ]);
    }
    return {
      kind: r.kind,
      ...(r.path !== undefined ? { path: r.path } : {}),
      ...(url !== undefined && url !== '' ? { url } : {}),
      ...(r.prefix !== undefined ? { prefix: r.prefix } : {}),
      ...(r.initializeSchema !== undefined ? { initializeSchema: r.initializeSchema } : {}),
    };
  }

  /** The configured summariser (an OpenAIChatClient, key from `apiKeyEnv`), or undefined. */
  createChatClient(logger?: Logger): ChatClient | undefined {
    const s = this.configuration.summarizer;
    if (s === undefined) return undefined;
    const apiKey = this.env[s.apiKeyEnv ?? 'OPENAI_API_KEY'];
    return new OpenAIChatClient({
      model: s.model,
      ...(s.baseURL !== undefined ? { baseURL: s.baseURL } : {}),
      ...(apiKey !== undefined && apiKey !== '' ? { apiKey } : {}),
      ...(s.timeoutMs !== undefined ? { timeoutMs: s.timeoutMs } : {}),
      ...(s.maxRetries !== undefined ? { maxRetries: s.maxRetries } : {}),
      ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
      ...(logger !== undefined ? { logger } : {}),
    });
  }

  /** The trigger and strategy of profile `name` (default: the configured default profile). */
  compaction(
    name: string = this.defaultProfile,
    services: { chatClient?: ChatClient; tokenCountEstimator?: TokenCountEstimator; logger?: Logger } = {},
  ): CompactionSetup {
    return this.profiles.create(name, { contextWindowTokens: this.contextWindowTokens, ...services });
  }
}
