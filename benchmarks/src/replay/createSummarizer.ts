import { type Logger, type ChatClient, ExtractiveSummarizer, type TokenCountEstimator } from 'session-compaction';
import { OpenAIChatClient } from 'session-compaction/openai';

export interface SummarizerSettings {
  /** A model name selects an OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY unless given). */
  model?: string;
  baseURL?: string;
  apiKey?: string;
  /** Summary budget of the offline extractive summariser; default 512 tokens. */
  extractiveMaxTokens?: number;
}

export interface Summarizer {
  client: ChatClient;
  /** For the report: which summariser produced the figures. */
  description: string;
}

/** Offline by default (ExtractiveSummarizer: deterministic, no network); an endpoint when a model is named. */
export function createSummarizer(settings: SummarizerSettings, estimator: TokenCountEstimator, logger: Logger): Summarizer {
  if (settings.model !== undefined && settings.model.trim() !== '') {
    const client = new OpenAIChatClient({
      model: settings.model,
      logger,
      ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    });
    const where = settings.baseURL ?? process.env.OPENAI_BASE_URL ?? 'the OpenAI API';
    return { client, description: `OpenAIChatClient, model ${settings.model} at ${where}` };
  }
  const maxTokens = settings.extractiveMaxTokens ?? 512;
  return {
    client: new ExtractiveSummarizer({ maxTokens, tokenCountEstimator: estimator }),
    description: `ExtractiveSummarizer (offline, deterministic; ${maxTokens}-token summaries)`,
  };
}
