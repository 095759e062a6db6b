import { InvalidArgumentError } from '../errors.js';
import type { ProfileTriggerSettings } from '../compaction/profiles/CompactionProfile.js';

/** Where sessions are stored. Credentials never come from the file: give `urlEnv`, the name of a variable. */
export interface RepositoryConfiguration {
  kind: 'memory' | 'sqlite' | 'postgres' | 'redis';
  /** SQLite file; default './sessions.db'. */
  path?: string;
  /** A PostgreSQL or Redis URL without credentials (e.g. a local trust-auth server). */
  url?: string;
  /** The environment variable holding the URL (default PG_URL / REDIS_URL when neither is given). */
  urlEnv?: string;
  /** Table / key prefix. */
  prefix?: string;
  initializeSchema?: boolean;
}

/** The summarising model at an OpenAI-compatible endpoint; the key is read from `apiKeyEnv` (default OPENAI_API_KEY). */
export interface SummarizerConfiguration {
  model: string;
  baseURL?: string;
  apiKeyEnv?: string;
  timeoutMs?: number;
  maxRetries?: number;
  temperature?: number;
}

/** A named profile: a built-in (or earlier) profile with trigger settings and strategy options fixed. */
export interface ProfileConfiguration {
  use: string;
  description?: string;
  trigger?: ProfileTriggerSettings;
  options?: Record<string, unknown>;
}

/** SessionMemory's recall settings (the retriever itself is the application's choice). */
export interface RecallConfiguration {
  enabled?: boolean;
  maxTokens?: number;
  share?: number;
  neighbors?: number;
  limit?: number;
  placement?: 'before-last-user' | 'after-system';
}

/** `service.applyRetention` policy, in days. */
export interface RetentionConfiguration {
  archivedEventsOlderThanDays?: number;
  maxArchivedEventsPerSession?: number;
  sessionsIdleLongerThanDays?: number;
}

/** A configuration file (YAML or JSON), as validated; see docs/profiles.md for the reference. */
export interface SessionCompactionConfiguration {
  repository?: RepositoryConfiguration;
  summarizer?: SummarizerConfiguration;
  /** The window profiles are sized for; or `model` to look it up; default 8000. */
  contextWindowTokens?: number;
  model?: string;
  /** Default: 'default' when such a profile is defined, else 'sliding-window'. */
  defaultProfile?: string;
  profiles?: Record<string, ProfileConfiguration>;
  recall?: RecallConfiguration;
  retention?: RetentionConfiguration;
  sessions?: { timeToLiveDays?: number };
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
}

/** One problem in a configuration: the dotted path of the bad key and what is wrong with it. */
export interface ConfigurationIssue {
  path: string;
  message: string;
}

/** A configuration that cannot be used; `issues` lists every problem found, each with its key's path. */
export class ConfigurationError extends InvalidArgumentError {
  readonly issues: readonly ConfigurationIssue[];

  constructor(source: string, issues: readonly ConfigurationIssue[], options?: { cause?: unknown }) {
    const lines = issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`));
    super(`Invalid configuration ${source}:\n  ${lines.join('\n  ')}`, options);
    this.name = 'ConfigurationError';
    this.issues = Object.freeze(issues.map((i) => Object.freeze({ ...i })));
  }
}
