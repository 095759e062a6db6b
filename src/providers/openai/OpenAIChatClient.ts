import type OpenAI from 'openai';
import { InvalidArgumentError, requireText } from '../../errors.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { requireOptional } from '../../optionalDependency.js';
import type { ChatClient, ChatRequest, ChatUsage, ChatUsageListener } from '../../summarization/ChatClient.js';
import { SummarizationError } from '../../summarization/SummarizationError.js';

export interface OpenAIChatClientOptions {
  /** Model name sent with every request, e.g. 'gpt-4o-mini', 'llama3.1:8b'. */
  model: string;
  /** A configured SDK client (e.g. `AzureOpenAI`); then baseURL and apiKey are ignored. */
  client?: OpenAI;
  /** Default: OPENAI_BASE_URL, else the OpenAI API. */
  baseURL?: string;
  /** Default: OPENAI_API_KEY; may be omitted for a local endpoint given by baseURL. */
  apiKey?: string;
  temperature?: number;
  /** Output cap when the request does not set `maxTokens`. */
  maxOutputTokens?: number;
  /**
   * Which request field carries the output cap: 'max_tokens' (default) is understood by every
   * OpenAI-compatible server; OpenAI's reasoning models want 'max_completion_tokens'.
   */
  maxTokensParameter?: 'max_tokens' | 'max_completion_tokens';
  /** Per-attempt timeout in ms (the SDK's `timeout`); default 60 000. */
  timeoutMs?: number;
  /** Retries on 408/409/429/5xx, connection errors and timeouts, with the SDK's backoff and retry-after; default 2. */
  maxRetries?: number;
  /** Called after each successful call with the tokens the endpoint reported. */
  onUsage?: ChatUsageListener;
  logger?: Logger;
}

/** What one call returned, with its usage (null when the endpoint reported none). */
export interface ChatCompletionOutcome {
  text: string | null;
  usage: ChatUsage | null;
  model: string;
  finishReason: string | null;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 2;
/** Sent when a local endpoint needs no key: the SDK refuses to start without one. */
const NO_KEY = 'no-key';

/**
 * A ChatClient for any OpenAI-compatible chat-completions endpoint (OpenAI, Azure, vLLM, Ollama, llama.cpp
 * server, Llama Stack). Retries and backoff are the SDK's own; every failure that survives them surfaces
 * as a SummarizationError with the SDK error as `cause`. Usage is reported through `onUsage`, `lastUsage`
 * and the running `totalUsage`.
 */
export class OpenAIChatClient implements ChatClient {
  readonly model: string;
  readonly client: OpenAI;
  readonly temperature: number | undefined;
  readonly maxOutputTokens: number | undefined;
  readonly maxTokensParameter: 'max_tokens' | 'max_completion_tokens';
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** Usage of the last successful call. */
  lastUsage: ChatUsage | null = null;
  /** Usage summed over every successful call of this client, with the number of calls. */
  readonly totalUsage: ChatUsage & { calls: number } = { promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 };
  private readonly onUsage: ChatUsageListener | undefined;
  private readonly logger: Logger;
  /**
   * Per-request SDK options. The timeout is always sent, so that a client the caller built (whose own
   * default may be ten minutes) still gives up after `timeoutMs`; its retry setting is kept unless
   * `maxRetries` is given.
   */
  private readonly requestOptions: { timeout?: number; maxRetries?: number };

  constructor(options: OpenAIChatClientOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    this.model = requireText(options.model, 'model');
    this.timeoutMs = nonNegativeInt(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs', 1);
    this.maxRetries = nonNegativeInt(options.maxRetries ?? DEFAULT_MAX_RETRIES, 'maxRetries', 0);
    if (options.maxOutputTokens !== undefined) nonNegativeInt(options.maxOutputTokens, 'maxOutputTokens', 1);
    this.maxOutputTokens = options.maxOutputTokens;
    this.temperature = options.temperature;
    this.maxTokensParameter = options.maxTokensParameter ?? 'max_tokens';
    this.onUsage = options.onUsage;
    this.logger = options.logger ?? defaultLogger();
    this.client = options.client ?? this.createClient(options);
    this.requestOptions =
      options.client === undefined
        ? { timeout: this.timeoutMs, maxRetries: this.maxRetries }
        : {
            timeout: this.timeoutMs,
            ...(options.maxRetries !== undefined ? { maxRetries: this.maxRetries } : {}),
          };
  }

  private createClient(options: OpenAIChatClientOptions): OpenAI {
    const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
    let apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    if (apiKey === undefined || apiKey === '') {
      if (baseURL === undefined || baseURL === '')
        throw new InvalidArgumentError('apiKey must be set (or OPENAI_API_KEY) unless baseURL names a local endpoint');
      apiKey = NO_KEY;
    }
    const log = this.logger;
    // The SDK logs through the library's logger so that the library never writes to the console itself.
    const sdkLogger = {
      error: (message: string, ...rest: unknown[]) => log.error(message, { details: rest }),
      warn: (message: string, ...rest: unknown[]) => log.warn(message, { details: rest }),
      info: (message: string, ...rest: unknown[]) => log.debug(message, { details: rest }),
      debug: (message: string, ...rest: unknown[]) => log.debug(message, { details: rest }),
    };
    const { OpenAI: Client } = requireOptional<typeof import('openai')>('openai', 'OpenAIChatClient');
    return new Client({
      apiKey,
      ...(baseURL ? { baseURL } : {}),
      timeout: this.timeoutMs,
      maxRetries: this.maxRetries,
      logger: sdkLogger,
    });
  }

  async call(request: ChatRequest): Promise<string | null> {
    return (await this.complete(request)).text;
  }

  /** Like `call`, with the usage, model and finish reason of the answer. */
  async complete(request: ChatRequest): Promise<ChatCompletionOutcome> {
    if (request === null || request === undefined) throw new InvalidArgumentError('request must not be null');
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
    if (request.system !== undefined && request.system.trim() !== '') messages.push({ role: 'system', content: request.system });
    messages.push({ role: 'user', content: request.user });
    const maxTokens = request.maxTokens ?? this.maxOutputTokens;
    const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages,
      ...(this.temperature !== undefined ? { temperature: this.temperature } : {}),
      ...(maxTokens !== undefined ? { [this.maxTokensParameter]: maxTokens } : {}),
    };
    let completion: OpenAI.Chat.ChatCompletion;
    try {
      completion = await this.client.chat.completions.create(body, {
        ...this.requestOptions,
        ...(request.signal ? { signal: request.signal } : {}),
      });
    } catch (error) {
      throw toSummarizationError(error, this.model);
    }
    const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
    if (choice === undefined || choice.message === undefined) {
      throw new SummarizationError(`chat completion from model ${this.model} has no choices`, {
        kind: 'malformed-response',
        cause: completion,
      });
    }
    if (choice.finish_reason === 'length') {
      this.logger.warn('summary was cut at the output token limit', { model: this.model, maxTokens });
    }
    const usage = completion.usage ? toUsage(completion.usage) : null;
    if (usage !== null) this.recordUsage(usage, completion.model ?? this.model);
    return {
      text: choice.message.content ?? null,
      usage,
      model: completion.model ?? this.model,
      finishReason: choice.finish_reason ?? null,
    };
  }

  private recordUsage(usage: ChatUsage, model: string): void {
    this.lastUsage = usage;
    this.totalUsage.promptTokens += usage.promptTokens;
    this.totalUsage.completionTokens += usage.completionTokens;
    this.totalUsage.totalTokens += usage.totalTokens;
    this.totalUsage.calls += 1;
    try {
      this.onUsage?.(usage, { model });
    } catch (error) {
      // A metering callback must not turn a good summary into a failed one.
      this.logger.warn('onUsage callback threw; ignored', { error: String(error) });
    }
  }
}

function nonNegativeInt(value: number, name: string, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new InvalidArgumentError(min === 0 ? `${name} must be >= 0` : `${name} must be greater than 0`);
  }
  return value;
}

function toUsage(usage: OpenAI.CompletionUsage): ChatUsage {
  const promptTokens = usage.prompt_tokens ?? 0;
  const completionTokens = usage.completion_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: usage.total_tokens ?? promptTokens + completionTokens,
    ...(typeof cached === 'number' ? { cachedPromptTokens: cached } : {}),
  };
}

function toSummarizationError(error: unknown, model: string): SummarizationError {
  if (error instanceof SummarizationError) return error;
  if (isSdkError(error, 'APIUserAbortError')) {
    return new SummarizationError(`summarization request to ${model} was aborted`, { kind: 'aborted', cause: error });
  }
  if (isSdkError(error, 'APIConnectionTimeoutError')) {
    return new SummarizationError(`summarization request to ${model} timed out`, { kind: 'timeout', cause: error });
  }
  if (isSdkError(error, 'APIConnectionError')) {
    return new SummarizationError(`summarization request to ${model} could not connect: ${error.message}`, {
      kind: 'connection',
      cause: error,
    });
  }
  if (isSdkError(error, 'APIError') && error.status !== undefined) {
    return new SummarizationError(`summarization request to ${model} failed with HTTP ${error.status}: ${error.message}`, {
      kind: 'http',
      status: error.status,
      cause: error,
    });
  }
  if (error instanceof SyntaxError) {
    return new SummarizationError(`summarization response from ${model} is not valid JSON`, {
      kind: 'malformed-response',
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SummarizationError(`summarization request to ${model} failed: ${message}`, { kind: 'connection', cause: error });
}

/**
 * Matches the SDK's error classes by name along the prototype chain rather than with `instanceof`: the
 * application's client may come from the SDK's ESM build while this package loads its CommonJS build, and the
 * two builds have distinct classes.
 */
function isSdkError(error: unknown, className: string): error is Error & { status?: number } {
  for (let proto = error instanceof Error ? Object.getPrototypeOf(error) : null; proto; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { constructor?: { name?: string } }).constructor?.name === className) return true;
  }
  return false;
}
