export { type ChatClient, type ChatReply, type ChatRequest, type ChatUsage, type ChatUsageListener } from './ChatClient.js';
export { SummarizationError, type SummarizationErrorKind } from './SummarizationError.js';
export { OpenAIChatClient, type OpenAIChatClientOptions, type ChatCompletionOutcome } from './OpenAIChatClient.js';
export { ExtractiveSummarizer, type ExtractiveSummarizerOptions } from './ExtractiveSummarizer.js';
export { mechanicalSummary } from './mechanicalSummary.js';
export {
  DEFAULT_SUMMARY_SHADOW_PROMPT,
  DEFAULT_SUMMARY_SYSTEM_PROMPT,
  DEFAULT_CONSOLIDATION_SYSTEM_PROMPT,
  DEFAULT_SUMMARY_UPDATE_PROMPT,
  TRANSCRIPT_RULES,
  PRIOR_SUMMARY_HEADER,
  CONVERSATION_HEADER,
  UPCOMING_CONTEXT_HEADER,
  SUMMARY_INSTRUCTION,
  summarySystemPrompt,
  buildSummaryPrompt,
  parseSummaryPrompt,
  quoteEntry,
  type SummaryPromptParts,
  type ParsedSummaryPrompt,
} from './prompts.js';
export {
  SummaryQualityGate,
  salientIdentifiers,
  type SummaryQualityGateOptions,
  type SummaryQualityVerdict,
} from './SummaryQualityGate.js';
export { FallbackChatClient, type FallbackChatClientOptions } from './FallbackChatClient.js';
export { ChunkingChatClient, type ChunkingChatClientOptions } from './ChunkingChatClient.js';
