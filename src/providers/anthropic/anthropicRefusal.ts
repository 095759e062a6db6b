import { refusalFromBody, type ProviderRefusal } from '../../chat/contextOverflow.js';

/**
 * The refusal in an `@anthropic-ai/sdk` error (`APIError`: `status`, and `error` — the whole body,
 * `{ type: 'error', error: { type, message } }`), or null for another error.
 */
export function anthropicRefusal(error: unknown): ProviderRefusal | null {
  if (error === null || typeof error !== 'object') return null;
  const e = error as { status?: unknown; error?: unknown };
  if (e.error === null || typeof e.error !== 'object') return null;
  const body = e.error as { type?: unknown; error?: unknown };
  if (body.type !== 'error' || body.error === null || typeof body.error !== 'object') return null;
  return refusalFromBody(typeof e.status === 'number' ? e.status : undefined, body);
}
