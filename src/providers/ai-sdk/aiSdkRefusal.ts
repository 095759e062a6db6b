import { genericRefusal, refusalFromBody, type ProviderRefusal } from '../../chat/contextOverflow.js';

/**
 * The refusal in an AI SDK `APICallError` (`statusCode`, `data` — the provider's error body as its
 * provider package parsed it — and `responseBody`, the raw text), whichever provider the model is: the body
 * is read in OpenAI's and in Anthropic's documented shape. A `RetryError` is unwrapped by the classifier
 * (its `lastError`). Null for another error.
 */
export function aiSdkRefusal(error: unknown): ProviderRefusal | null {
  if (error === null || typeof error !== 'object') return null;
  const e = error as { name?: unknown; statusCode?: unknown; data?: unknown; responseBody?: unknown; message?: unknown };
  if (e.name !== 'AI_APICallError' && !('responseBody' in e) && !('statusCode' in e)) return null;
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const fromBody = refusalFromBody(status, e.data) ?? refusalFromBody(status, e.responseBody);
  if (fromBody !== null) return fromBody;
  return genericRefusal({ statusCode: status, message: e.message });
}
