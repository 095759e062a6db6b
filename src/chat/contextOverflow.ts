import { ContextOverflowError, type ContextOverflow } from './ContextOverflowError.js';

export type { ContextOverflow };

/**
 * Recognising a provider's "the prompt does not fit" refusal. Each provider's SDK raises it in its own error
 * shape; a per-provider extraction reduces that to a ProviderRefusal (status, code, type, message) and this one
 * classifier decides, for every integration alike, whether it is a context overflow and what the provider said
 * about the prompt's length.
 */

/** A provider's refusal of a request, as one classifier reads it, whatever the SDK that raised it. */
export interface ProviderRefusal {
  /** The HTTP status, when known. */
  status?: number;
  /** The machine-readable code (OpenAI's `error.code`, e.g. `context_length_exceeded`). */
  code?: string;
  /** The error type (OpenAI's `error.type`, Anthropic's `error.type`, e.g. `request_too_large`). */
  type?: string;
  /** The provider's own message. */
  message: string;
}

/** Reduces an SDK's error to a ProviderRefusal, or null when the error is not one it knows. */
export type RefusalExtractor = (error: unknown) => ProviderRefusal | null;

/** Messages by which providers and OpenAI-compatible servers (vLLM, LiteLLM, OpenRouter...) say the prompt is too long. */
const OVERFLOW_MESSAGES: readonly RegExp[] = [
  /prompt is too long/i,
  /input length and `?max_tokens`? exceed context limit/i,
  /maximum context length/i,
  /exceeds? the (?:model's )?context window/i,
  /context[_ ]length[_ ]exceeded/i,
  /input tokens exceed the configured limit/i,
  /request exceeds the maximum allowed number of bytes/i,
];

const int = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text.replace(/[,_]/g, ''));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/** The token counts a refusal message states, in each provider's documented wording. */
function statedTokens(message: string): Pick<ContextOverflow, 'promptTokens' | 'limitTokens' | 'replyTokens'> {
  // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
  let m = /prompt is too long:\s*([\d,]+)\s*tokens\s*>\s*([\d,]+)\s*maximum/i.exec(message);
  if (m !== null) return { promptTokens: int(m[1]), limitTokens: int(m[2]) };
  // Anthropic: "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"
  m = /exceed context limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*([\d,]+)/i.exec(message);
  if (m !== null) return { promptTokens: int(m[1]), replyTokens: int(m[2]), limitTokens: int(m[3]) };
  const limit = int(/maximum context length is\s*([\d,]+)\s*tokens/i.exec(message)?.[1]);
  // OpenAI: "However, your messages resulted in 130310 tokens" (tools included when it lists them)
  const resulted = int(/resulted in\s*([\d,]+)\s*tokens/i.exec(message)?.[1]);
  if (resulted !== undefined) return { promptTokens: resulted, ...(limit !== undefined ? { limitTokens: limit } : {}) };
  // OpenAI and vLLM: "you requested 8554 tokens (7554 in the messages, 1000 in the completion)"
  const prompt = int(/([\d,]+)\s*in (?:the messages|your prompt)/i.exec(message)?.[1]);
  const reply = int(/([\d,]+)\s*(?:in|for) the completion/i.exec(message)?.[1]);
  return {
    ...(prompt !== undefined ? { promptTokens: prompt } : {}),
    ...(limit !== undefined ? { limitTokens: limit } : {}),
    ...(reply !== undefined ? { replyTokens: reply } : {}),
  };
}

/**
 * The one classifier: whether a refusal says the request is too long for the model — OpenAI's
 * `context_length_exceeded`, Anthropic's `prompt is too long` / `request_too_large`, the same wording from an
 * OpenAI-compatible server, or a plain HTTP 413 — and what it states about the prompt's length. A rate limit
 * (429, "Request too large ... tokens per min") is never an overflow: waiting helps it, shrinking does not.
 */
export function classifyRefusal(refusal: ProviderRefusal | null | undefined): ContextOverflow | null {
  if (refusal === null || refusal === undefined) return null;
  const { status, code, type } = refusal;
  const message = typeof refusal.message === 'string' ? refusal.message : '';
  if (status === 429 || code === 'rate_limit_exceeded' || type === 'rate_limit_error' || type === 'tokens') return null;
  const byCode = code === 'context_length_exceeded';
  const bySize = type === 'request_too_large' || status === 413;
  const byMessage = OVERFLOW_MESSAGES.some((re) => re.test(message));
  if (!byCode && !bySize && !byMessage) return null;
  // A 5xx or an auth error that happens to quote such words is not the prompt's fault.
  if (!byCode && !bySize && status !== undefined && (status < 400 || status >= 500 || status === 401 || status === 403)) {
    return null;
  }
  const tokens = statedTokens(message);
  return {
    message,
    ...(status !== undefined ? { status } : {}),
    kind: bySize && tokens.promptTokens === undefined && !byCode ? 'bytes' : 'tokens',
    ...tokens,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * A refusal from a provider's JSON error body, in either documented shape: OpenAI's (and every
 * OpenAI-compatible server's) `{ error: { message, type, code } }`, or Anthropic's
 * `{ type: 'error', error: { type, message } }`. `body` may be the parsed object or its JSON text.
 */
export function refusalFromBody(status: number | undefined, body: unknown): ProviderRefusal | null {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body) as unknown;
    } catch {
      return text(body) === undefined ? null : { ...(status !== undefined ? { status } : {}), message: body };
    }
  }
  if (!isObject(parsed)) return null;
  const inner = isObject(parsed.error) ? parsed.error : parsed;
  const message = text(inner.message) ?? (typeof parsed.error === 'string' ? parsed.error : undefined);
  if (message === undefined) return null;
  const code = text(inner.code);
  const type = text(inner.type);
  return {
    ...(status !== undefined ? { status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(type !== undefined ? { type } : {}),
    message,
  };
}

/**
 * The refusal of an error of unknown origin: its HTTP status (`status` or `statusCode`), code, type and
 * message, as any SDK that follows the usual conventions sets them.
 */
export function genericRefusal(error: unknown): ProviderRefusal | null {
  if (!isObject(error)) return null;
  const rawStatus = typeof error.status === 'number' ? error.status : error.statusCode;
  const status = typeof rawStatus === 'number' ? rawStatus : undefined;
  const message = text(error.message);
  if (message === undefined && status === undefined) return null;
  const code = text(error.code);
  const type = text(error.type);
  return {
    ...(status !== undefined ? { status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(type !== undefined ? { type } : {}),
    message: message ?? '',
  };
}

/** The errors wrapped by `error`: its `cause` and, for a retry wrapper (the AI SDK's RetryError), the last attempt's. */
function wrapped(error: unknown): unknown[] {
  if (!isObject(error)) return [];
  const out: unknown[] = [];
  if ('lastError' in error) out.push(error.lastError);
  if ('cause' in error) out.push(error.cause);
  return out;
}

/**
 * Whether `error` (or an error it wraps: its `cause`, a retry wrapper's last attempt) is a context-overflow
 * refusal: each error is read with `extract` (the provider's own extraction), then generically.
 */
export function detectContextOverflow(error: unknown, extract?: RefusalExtractor): ContextOverflow | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 8) {
    const current = queue.shift();
    if (!isObject(current) || seen.has(current)) continue;
    seen.add(current);
    // Our own verdict (recovery already tried) is never taken for a fresh refusal.
    if (current instanceof ContextOverflowError) return null;
    const overflow = classifyRefusal(extract?.(current) ?? null) ?? classifyRefusal(genericRefusal(current));
    if (overflow !== null) return overflow;
    queue.push(...wrapped(current));
  }
  return null;
}
