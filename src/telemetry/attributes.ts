/**
 * Attribute and metric names. OpenTelemetry semantic conventions where one exists (`gen_ai.*`, `db.*`,
 * `error.type`); the library's own under `session_compaction.*`. docs/operations.md has the table.
 */
export const ATTR = Object.freeze({
  // GenAI semantic conventions
  CONVERSATION_ID: 'gen_ai.conversation.id',
  OPERATION_NAME: 'gen_ai.operation.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  TOKEN_TYPE: 'gen_ai.token.type',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  // General and database semantic conventions
  ERROR_TYPE: 'error.type',
  DB_SYSTEM_NAME: 'db.system.name',
  DB_OPERATION_NAME: 'db.operation.name',
  // session-compaction
  STRATEGY: 'session_compaction.strategy',
  TRIGGER_FIRED: 'session_compaction.trigger.fired',
  OUTCOME: 'session_compaction.outcome',
  CAS_OUTCOME: 'session_compaction.cas.outcome',
  SKIP_REASON: 'session_compaction.skip_reason',
  EVENTS_BEFORE: 'session_compaction.events.before',
  EVENTS_AFTER: 'session_compaction.events.after',
  TOKENS_BEFORE: 'session_compaction.tokens.before',
  TOKENS_AFTER: 'session_compaction.tokens.after',
  TOKENS_SAVED: 'session_compaction.tokens.saved',
  ARCHIVED_COUNT: 'session_compaction.archived.count',
  INPUT_TOKENS_ESTIMATED: 'session_compaction.summary.input_tokens_estimated',
  OUTPUT_TOKENS_ESTIMATED: 'session_compaction.summary.output_tokens_estimated',
  SUMMARY_OUTCOME: 'session_compaction.summary.outcome',
  FAILURE_KIND: 'session_compaction.summary.failure.kind',
  FAILURE_MODE: 'session_compaction.summary.failure.mode',
  RETRIEVER: 'session_compaction.retriever',
  RETRIEVAL_SCOPE: 'session_compaction.retrieval.scope',
  RETRIEVAL_LIMIT: 'session_compaction.retrieval.limit',
  RETRIEVAL_HITS: 'session_compaction.retrieval.hits',
  RETRIEVAL_QUERY: 'session_compaction.retrieval.query',
  BACKEND: 'session_compaction.repository.backend',
  CONTEXT_STATUS: 'session_compaction.context.status',
  CONTEXT_PRESSURE: 'session_compaction.context.pressure',
  CONTEXT_WINDOW_TOKENS: 'session_compaction.context.window_tokens',
  PROMPT_TOKENS_ESTIMATED: 'session_compaction.prompt.tokens_estimated',
  PERSISTED_COUNT: 'session_compaction.persisted.count',
  STREAMING: 'session_compaction.streaming',
  USAGE_CACHED_INPUT_TOKENS: 'session_compaction.usage.cached_input_tokens',
  USAGE_CACHE_WRITE_TOKENS: 'session_compaction.usage.cache_write_tokens',
  USAGE_SUMMARIZER_INPUT_TOKENS: 'session_compaction.usage.summarizer_input_tokens',
  USAGE_SUMMARIZER_OUTPUT_TOKENS: 'session_compaction.usage.summarizer_output_tokens',
  USAGE_ESTIMATED_COST: 'session_compaction.usage.estimated_cost',
  USAGE_ESTIMATED_COMPACTION_COST: 'session_compaction.usage.estimated_compaction_cost',
  COST_CURRENCY: 'session_compaction.cost.currency',
  /** What a share of the estimated cost paid for: `turn` (the chat model call) or `compaction` (summariser calls). */
  COST_SOURCE: 'session_compaction.cost.source',
});

export const METRIC = Object.freeze({
  COMPACTIONS: 'session_compaction.compactions',
  TOKENS_SAVED: 'session_compaction.tokens.saved',
  CAS_CONFLICTS: 'session_compaction.cas.conflicts',
  SUMMARIZER_FAILURES: 'session_compaction.summarizer.failures',
  CONTEXT_PRESSURE: 'session_compaction.context.pressure',
  RETRIEVAL_DURATION: 'session_compaction.retrieval.duration',
  GEN_AI_OPERATION_DURATION: 'gen_ai.client.operation.duration',
  GEN_AI_TOKEN_USAGE: 'gen_ai.client.token.usage',
  DB_OPERATION_DURATION: 'db.client.operation.duration',
  TURN_TOKENS: 'session_compaction.turn.tokens',
  ESTIMATED_COST: 'session_compaction.cost.estimated',
});

export const SPAN = Object.freeze({
  COMPACT: 'session_compaction.compact',
  TURN: 'session_compaction.turn',
  RETRIEVE: 'session_compaction.retrieve',
});
