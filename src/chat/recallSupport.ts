import { InvalidArgumentError } from '../errors.js';
import type { SessionService } from '../service/SessionService.js';

/**
 * Who is calling a recall tool, from trusted server-side state (the authenticated user, the session the
 * request is about, the agent's branch) — never from the model's arguments.
 */
export interface RecallToolContext {
  sessionId: string;
  userId: string;
  /** The calling agent's branch; unset = the root conversation, which sees root events only. */
  branch?: string | null;
}

export const NO_RESULTS = 'No results found.';

/**
 * Metadata key (value `true`) of the transient event that carries SessionMemory's recall block into a
 * provider's prompt: the block is rebuilt every turn, so a provider can tell the stable history before it.
 */
export const METADATA_RECALL_BLOCK = 'recall';

/** The recall block's size when no context window bounds the prompt. */
export const DEFAULT_UNBOUNDED_RECALL_TOKENS = 2_000;
export const DEFAULT_RECALL_PAGE_SIZE = 10;

export function requirePageSize(pageSize: number | undefined): number {
  if (pageSize === undefined) return DEFAULT_RECALL_PAGE_SIZE;
  if (typeof pageSize !== 'number' || !Number.isInteger(pageSize) || pageSize <= 0) {
    throw new InvalidArgumentError('pageSize must be positive');
  }
  return pageSize;
}

export function requireContext(context: RecallToolContext): { sessionId: string; userId: string; branch: string | null } {
  if (context === null || context === undefined) throw new InvalidArgumentError('context must not be null');
  const { sessionId, userId, branch } = context;
  if (typeof sessionId !== 'string' || sessionId.trim() === '')
    throw new InvalidArgumentError('context.sessionId must not be null or empty');
  if (typeof userId !== 'string' || userId.trim() === '')
    throw new InvalidArgumentError('context.userId must not be null or empty');
  return { sessionId, userId, branch: typeof branch === 'string' && branch !== '' ? branch : null };
}

/** Tool arguments arrive as JSON text from the model, or already parsed from a framework. */
export function parseArguments(args: unknown): Record<string, unknown> {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = args.trim() === '' ? {} : JSON.parse(args);
    } catch {
      throw new InvalidArgumentError('tool arguments must be a JSON object');
    }
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError('tool arguments must be a JSON object');
  return value as Record<string, unknown>;
}

export function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Missing → 0; negative → 0 (as the Java tools); a numeric string is accepted from lenient models. */
export function pageArgument(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return 0;
  return Math.max(0, Math.floor(n));
}

export function pageSlice<T>(items: readonly T[], page: number, pageSize: number): T[] {
  const from = page * pageSize;
  return from >= items.length ? [] : items.slice(from, from + pageSize);
}

/** JSON-schema parameters both recall tools declare, as in the Java design. */
export const INNER_THOUGHT_PARAMETER = { type: 'string', description: 'Deep inner monologue private to you only.' } as const;
export const PAGE_PARAMETER = {
  type: 'integer',
  minimum: 0,
  description: 'Optional 0-based page of results (10 per page by default).',
} as const;

/** The options both recall tools take, validated: the service and the page size (default 10). */
export function recallToolSettings(options: { sessionService: SessionService; pageSize?: number } | null | undefined): {
  service: SessionService;
  pageSize: number;
} {
  if (options?.sessionService === null || options?.sessionService === undefined) {
    throw new InvalidArgumentError('sessionService must not be null');
  }
  return { service: options.sessionService, pageSize: requirePageSize(options.pageSize) };
}
