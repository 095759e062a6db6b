import type { SummaryFailureMode } from 'session-compaction';

/** Everything the example server reads from its environment, with defaults that run against a local endpoint. */
export interface ChatServerConfig {
  /** OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama) or https://api.openai.com/v1. */
  openaiBaseURL?: string;
  openaiApiKey?: string;
  model: string;
  /** Model used for summaries; default the chat model. */
  summaryModel?: string;
  repository: 'sqlite' | 'memory' | 'postgres' | 'redis';
  sqlitePath: string;
  pgUrl?: string;
  redisUrl?: string;
  /** Largest prompt sent to the model, in tokens (leave room for the reply within the real window). */
  contextWindowTokens: number;
  /** Share of the window at which a conversation is summarised after a reply; default 0.7. */
  thresholdRatio: number;
  /** Recent events kept verbatim by each summary; default 6. */
  keepEvents: number;
  /**
   * What a compaction does when the summariser fails: 'stub' (default) archives behind a mechanical summary,
   * so an outage of the summary model degrades the summary instead of leaving the conversation stuck at the
   * window; 'skip' keeps the window as it is; 'throw' fails the compaction.
   */
  summaryFailureMode?: SummaryFailureMode;
  systemPrompt?: string;
  /** Offer conversation_search / cross_session_search to the model; default true. */
  recallTools: boolean;
  /** Tool rounds answered by the server per query before the reply is returned as is; default 3. */
  maxToolRounds: number;
  logLevel: string;
  /** Largest request body accepted, in bytes; a larger one is answered 413. Default 256 KiB. */
  maxBodyBytes?: number;
  /** The longest one model call may take, in ms; default 60 000. */
  modelTimeoutMs?: number;
  /**
   * A session-compaction configuration file (YAML or JSON): its repository, summariser, window and default
   * compaction profile replace REPOSITORY / SUMMARY_MODEL / CONTEXT_WINDOW_TOKENS / THRESHOLD_RATIO / KEEP_EVENTS.
   */
  configFile?: string;
}

const int = (value: string | undefined, fallback: number) => {
  const n = value === undefined || value === '' ? fallback : Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`expected a positive integer, got '${value}'`);
  return n;
};

const FAILURE_MODES: readonly SummaryFailureMode[] = ['stub', 'skip', 'throw'];

function failureMode(value: string | undefined): SummaryFailureMode {
  if (value === undefined || value === '') return 'stub';
  if (!(FAILURE_MODES as readonly string[]).includes(value)) throw new Error(`SUMMARY_FAILURE_MODE must be stub, skip or throw`);
  return value as SummaryFailureMode;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ChatServerConfig {
  const repository = (env.REPOSITORY ?? 'sqlite') as ChatServerConfig['repository'];
  if (!['sqlite', 'memory', 'postgres', 'redis'].includes(repository)) {
    throw new Error(`REPOSITORY must be sqlite, memory, postgres or redis (got '${repository}')`);
  }
  return {
    ...(env.OPENAI_BASE_URL ? { openaiBaseURL: env.OPENAI_BASE_URL } : {}),
    ...(env.OPENAI_API_KEY ? { openaiApiKey: env.OPENAI_API_KEY } : {}),
    model: env.MODEL ?? 'gpt-4o-mini',
    ...(env.SUMMARY_MODEL ? { summaryModel: env.SUMMARY_MODEL } : {}),
    repository,
    sqlitePath: env.SQLITE_PATH ?? './chat-sessions.db',
    ...(env.PG_URL ? { pgUrl: env.PG_URL } : {}),
    ...(env.REDIS_URL ? { redisUrl: env.REDIS_URL } : {}),
    contextWindowTokens: int(env.CONTEXT_WINDOW_TOKENS, 16_000),
    thresholdRatio: env.THRESHOLD_RATIO ? Number(env.THRESHOLD_RATIO) : 0.7,
    keepEvents: int(env.KEEP_EVENTS, 6),
    summaryFailureMode: failureMode(env.SUMMARY_FAILURE_MODE),
    ...(env.SYSTEM_PROMPT ? { systemPrompt: env.SYSTEM_PROMPT } : {}),
    recallTools: env.RECALL_TOOLS !== 'false',
    maxToolRounds: int(env.MAX_TOOL_ROUNDS, 3),
    logLevel: env.LOG_LEVEL ?? 'info',
    maxBodyBytes: int(env.MAX_BODY_BYTES, 256 * 1024),
    modelTimeoutMs: int(env.MODEL_TIMEOUT_MS, 60_000),
    ...(env.CONFIG_FILE ? { configFile: env.CONFIG_FILE } : {}),
  };
}
