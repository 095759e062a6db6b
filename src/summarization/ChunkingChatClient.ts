import { InvalidArgumentError, requirePositiveInt } from '../errors.js';
import { defaultLogger, type Logger } from '../logging.js';
import { defaultTokenCountEstimator } from '../tokens/TiktokenTokenCountEstimator.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import type { ChatClient, ChatReply, ChatRequest, ChatUsage } from './ChatClient.js';
import { buildSummaryPrompt, parseSummaryPrompt } from './prompts.js';
import { SummarizationError } from './SummarizationError.js';

export interface ChunkingChatClientOptions {
  client: ChatClient;
  /** The summariser's context window in tokens (prompt + answer). */
  contextTokens: number;
  /** Tokens kept free for the answer; default `maxTokens` of the request, else 1,000. */
  reserveTokens?: number;
  tokenCountEstimator?: TokenCountEstimator;
  logger?: Logger;
}

/** Nesting of merges before giving up (each level divides the input by at least two). */
const MAX_DEPTH = 8;

/**
 * Summarises a range larger than the summariser's own context window in chunks: the transcript of a
 * summary prompt is split into parts that fit, each part is summarised (map), then the part summaries are
 * summarised together with any prior summary (merge) — recursively if they still do not fit. A request
 * that fits goes through unchanged, so wrapping costs nothing until the conversation is too long, which is
 * exactly when compaction must not fail. A single entry larger than a chunk is shortened with a marker.
 */
export class ChunkingChatClient implements ChatClient {
  readonly client: ChatClient;
  readonly contextTokens: number;
  private readonly reserveTokens: number | undefined;
  private readonly estimator: TokenCountEstimator;
  private readonly logger: Logger;

  constructor(options: ChunkingChatClientOptions) {
    if (options === null || options === undefined || options.client === undefined || typeof options.client?.call !== 'function') {
      throw new InvalidArgumentError('client must not be null');
    }
    this.client = options.client;
    this.contextTokens = requirePositiveInt(options.contextTokens, 'contextTokens');
    this.reserveTokens =
      options.reserveTokens === undefined ? undefined : requirePositiveInt(options.reserveTokens, 'reserveTokens');
    this.estimator = options.tokenCountEstimator ?? defaultTokenCountEstimator();
    this.logger = options.logger ?? defaultLogger();
  }

  get model(): string | undefined {
    return this.client.model;
  }

  async call(request: ChatRequest): Promise<string | null> {
    return (await this.complete(request)).text;
  }

  async complete(request: ChatRequest): Promise<ChatReply> {
    const usage: ChatUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const text = await this.summarise(request, 0, usage);
    return { text, usage: usage.totalTokens > 0 ? usage : null };
  }

  /** Tokens a prompt may use: the window minus the system prompt and the answer. */
  private budget(request: ChatRequest): number {
    const reserve = this.reserveTokens ?? request.maxTokens ?? 1000;
    return this.contextTokens - reserve - this.estimator.estimate(request.system ?? '');
  }

  private async ask(request: ChatRequest, usage: ChatUsage): Promise<string> {
    const reply: ChatReply =
      typeof this.client.complete === 'function'
        ? await this.client.complete(request)
        : { text: await this.client.call(request), usage: null };
    if (reply.usage !== null) {
      usage.promptTokens += reply.usage.promptTokens;
      usage.completionTokens += reply.usage.completionTokens;
      usage.totalTokens += reply.usage.totalTokens;
    }
    if (typeof reply.text !== 'string' || reply.text.trim() === '') {
      throw new SummarizationError('summarizer returned no text for a chunk', { kind: 'blank' });
    }
    return reply.text.trim();
  }

  private async summarise(request: ChatRequest, depth: number, usage: ChatUsage): Promise<string> {
    const budget = this.budget(request);
    if (budget <= 0)
      throw new InvalidArgumentError('contextTokens leaves no room for a prompt after the system prompt and the answer');
    if (this.estimator.estimate(request.user) <= budget) return this.ask(request, usage);
    if (depth >= MAX_DEPTH)
      throw new SummarizationError('the range does not fit the summariser even in chunks', { kind: 'quality' });
    const parts = parseSummaryPrompt(request.user);
    const entries = parts.structured ? parts.transcript : [request.user];
    // Room for one chunk's transcript: the prompt's fixed parts (headers, upcoming) stay in every call.
    const fixed = this.estimator.estimate(buildSummaryPrompt({ transcript: [], upcoming: parts.upcoming }));
    const chunkBudget = Math.max(1, budget - fixed);
    const chunks = this.split(entries, chunkBudget);
    this.logger.info('summarising in chunks', { chunks: chunks.length, depth });
    const partial: string[] = [];
    for (const [i, chunk] of chunks.entries()) {
      const user = buildSummaryPrompt({ transcript: chunk, upcoming: i === chunks.length - 1 ? parts.upcoming : [] });
      partial.push(await this.summarise({ ...request, user }, depth + 1, usage));
    }
    const merged = buildSummaryPrompt({
      priorSummaries: parts.priorSummaries,
      transcript: partial.map((s, i) => `Summary of part ${i + 1} of ${partial.length}: ${s}`),
      upcoming: parts.upcoming,
    });
    return this.summarise({ ...request, user: merged }, depth + 1, usage);
  }

  /** Consecutive entries grouped under `budget` tokens; an entry alone over it is cut with a marker. */
  private split(entries: readonly string[], budget: number): string[][] {
    const chunks: string[][] = [];
    let current: string[] = [];
    let used = 0;
    for (const raw of entries) {
      const entry = this.fit(raw, budget);
      const cost = this.estimator.estimate(entry) + 1;
      if (used + cost > budget && current.length > 0) {
        chunks.push(current);
        current = [];
        used = 0;
      }
      current.push(entry);
      used += cost;
    }
    if (current.length > 0) chunks.push(current);
    // Never a single chunk: the merge step must make progress.
    if (chunks.length === 1 && chunks[0]!.length > 1) {
      const half = Math.ceil(chunks[0]!.length / 2);
      return [chunks[0]!.slice(0, half), chunks[0]!.slice(half)];
    }
    return chunks;
  }

  private fit(entry: string, budget: number): string {
    if (this.estimator.estimate(entry) <= budget) return entry;
    let keep = Math.floor(entry.length / 2);
    while (keep > 16 && this.estimator.estimate(entry.slice(0, keep)) + 16 > budget) keep = Math.floor(keep / 2);
    return `${entry.slice(0, keep)} […${entry.length - keep} characters cut to fit the summariser]`;
  }
}
