import type OpenAI from 'openai';
import { IllegalStateError, InvalidArgumentError, requireText } from '../../errors.js';
import type { EmbedFunction } from '../../recall/EmbeddingRetriever.js';
import { cutEmbeddingInput } from '../embeddingInput.js';
import { importOptional } from '../../optionalDependency.js';

export interface OpenAIEmbeddingsOptions {
  /** e.g. 'text-embedding-3-small', or the name a compatible server (vLLM, Ollama, LiteLLM) serves. */
  model: string;
  /** A configured SDK client (e.g. `AzureOpenAI`); without it one is created on first use from apiKey/baseURL. */
  client?: OpenAI;
  /** Default: OPENAI_API_KEY. */
  apiKey?: string;
  /** Default: OPENAI_BASE_URL, else the OpenAI API. */
  baseURL?: string;
  /** Shorter vectors, for models that support it (text-embedding-3-*). */
  dimensions?: number;
  /**
   * Each text is cut to this many characters before it is sent, so one huge tool output cannot exceed the
   * model's input limit (8,191 tokens for OpenAI's models) and fail the whole batch; default 8,000.
   */
  maxInputChars?: number;
}

const DEFAULT_MAX_INPUT_CHARS = 8_000;
/** Sent when a local endpoint needs no key: the SDK refuses to start without one. */
const NO_KEY = 'no-key';

/**
 * An `embed` function over the `openai` SDK's embeddings endpoint, for `EmbeddingRetriever`. The SDK is
 * loaded on the first call (never by importing this library), and its retries and backoff apply.
 */
export function openAIEmbeddings(options: OpenAIEmbeddingsOptions): EmbedFunction {
  if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
  const model = requireText(options.model, 'model');
  const maxInputChars = options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS;
  if (!Number.isInteger(maxInputChars) || maxInputChars <= 0)
    throw new InvalidArgumentError('maxInputChars must be a positive integer');
  if (options.dimensions !== undefined && (!Number.isInteger(options.dimensions) || options.dimensions <= 0)) {
    throw new InvalidArgumentError('dimensions must be a positive integer');
  }
  let client: Promise<OpenAI> | undefined = options.client === undefined ? undefined : Promise.resolve(options.client);
  return async (texts: string[]): Promise<number[][]> => {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      throw new InvalidArgumentError('texts must be an array of strings');
    }
    if (texts.length === 0) return [];
    client ??= createClient(options).catch((error: unknown) => {
      client = undefined;
      throw error;
    });
    const response = await (
      await client
    ).embeddings.create({
      model,
      // The API rejects an empty input string; a single space embeds as "nothing".
      input: texts.map((t) => (t === '' ? ' ' : cutEmbeddingInput(t, maxInputChars))),
      encoding_format: 'float',
      ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {}),
    });
    const vectors: number[][] = new Array<number[]>(texts.length);
    for (const item of response.data) vectors[item.index] = item.embedding;
    for (let i = 0; i < texts.length; i++) {
      if (!Array.isArray(vectors[i])) throw new IllegalStateError(`the embeddings response has no vector for input ${i}`);
    }
    return vectors;
  };
}

async function createClient(options: OpenAIEmbeddingsOptions): Promise<OpenAI> {
  const { default: OpenAIClass } = await importOptional<typeof import('openai')>('openai', 'openAIEmbeddings');
  const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
  let apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
  if (apiKey === undefined || apiKey === '') {
    if (baseURL === undefined || baseURL === '') {
      throw new InvalidArgumentError('apiKey must be set (or OPENAI_API_KEY) unless baseURL names a local endpoint');
    }
    apiKey = NO_KEY;
  }
  return new OpenAIClass({ apiKey, ...(baseURL ? { baseURL } : {}) });
}
