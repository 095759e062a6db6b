import { refusalFromBody, type ProviderRefusal } from '../../chat/contextOverflow.js';

/**
 * The refusal in an `openai` SDK error (`APIError`: `status`, and `error` — the body's `error` object with
 * `message`, `type`, `code`), or null for another error. Read structurally, so that a copy of the SDK other
 * than ours (the Agents SDK's, LangChain's) is read too.
 */
export function openAIRefusal(error: unknown): ProviderRefusal | null {
  if (error === null || typeof error !== 'object') return null;
  const e = error as { status?: unknown; error?: unknown; code?: unknown; type?: unknown };
  if (e.error === null || typeof e.error !== 'object' || !('message' in e.error)) return null;
  const status = typeof e.status === 'number' ? e.status : undefined;
  const refusal = refusalFromBody(status, { error: e.error });
  if (refusal === null) return null;
  return {
    ...refusal,
    ...(refusal.code === undefined && typeof e.code === 'string' ? { code: e.code } : {}),
    ...(refusal.type === undefined && typeof e.type === 'string' ? { type: e.type } : {}),
  };
}
