import { InvalidArgumentError } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';

/**
 * Compression levels: how hard a chunk is compressed, chosen by its size. A larger chunk gets a
 * higher level — shorter, terser summary — so a summary's cost does not grow with the chunk it replaces.
 */
export interface CompressionLevel {
  /** Largest chunk, in source tokens, summarised at this level; a larger chunk gets the next level (the last takes the rest). */
  upToTokens: number;
  /** Recorded on the checkpoint (`checkpointLevel`); 1 = most detailed. */
  level: number;
  /** Added to the summary task for this level; blank adds nothing. */
  instructions?: string;
  /** Share of `maxChunkSummaryTokens` the summary may take, in (0, 1]; default 1. */
  lengthShare?: number;
}

/** ≤ 2k tokens → level 1 detailed, ≤ 8k → level 2, larger → level 3 terse. */
export const DEFAULT_COMPRESSION_LEVELS: readonly Readonly<CompressionLevel>[] = Object.freeze([
  Object.freeze({
    upToTokens: 2000,
    level: 1,
    lengthShare: 1,
    instructions:
      'Compression level 1 (detailed): keep the details — intermediate steps, the reasons behind decisions, exact values.',
  }),
  Object.freeze({
    upToTokens: 8000,
    level: 2,
    lengthShare: 0.6,
    instructions: 'Compression level 2 (moderate): keep decisions, outcomes, facts and open tasks; leave out intermediate steps.',
  }),
  Object.freeze({
    upToTokens: Number.POSITIVE_INFINITY,
    level: 3,
    lengthShare: 0.3,
    instructions:
      'Compression level 3 (terse): only what is needed to continue — the goal, key decisions and facts, the current state and open tasks.',
  }),
]);

/** Metadata keys of a checkpoint (an additive summary pair) besides the summary keys. */
export const CHECKPOINT_METADATA = Object.freeze({
  /** The compression level; a merged checkpoint is one level above the highest it merged. */
  level: 'checkpointLevel',
  /** Age: the compaction that wrote it (1 = the session's first), the newest merged one for a merge. */
  ordinal: 'compactionOrdinal',
  /** How many checkpoints a merged one replaced. */
  merged: 'mergedCheckpoints',
});

export function requireCompressionLevels(value: unknown): readonly Readonly<CompressionLevel>[] {
  if (value === undefined) return DEFAULT_COMPRESSION_LEVELS;
  if (!Array.isArray(value) || value.length === 0) throw new InvalidArgumentError('compressionLevels must not be empty');
  return Object.freeze(
    value.map((raw: unknown, i) => {
      const name = `compressionLevels[${i}]`;
      if (raw === null || typeof raw !== 'object') throw new InvalidArgumentError(`${name} must be an object`);
      const l = raw as Partial<CompressionLevel>;
      if (typeof l.upToTokens !== 'number' || !(l.upToTokens > 0)) {
        throw new InvalidArgumentError(
          `${name}.upToTokens must be a number greater than 0 (got ${JSON.stringify(l.upToTokens)})`,
        );
      }
      const previous = (value[i - 1] as CompressionLevel | undefined)?.upToTokens;
      if (previous !== undefined && !(l.upToTokens > previous)) {
        throw new InvalidArgumentError(
          `${name}.upToTokens must be greater than compressionLevels[${i - 1}].upToTokens (${previous})`,
        );
      }
      if (typeof l.level !== 'number' || !Number.isInteger(l.level) || l.level < 1) {
        throw new InvalidArgumentError(`${name}.level must be an integer >= 1`);
      }
      if (l.instructions !== undefined && typeof l.instructions !== 'string') {
        throw new InvalidArgumentError(`${name}.instructions must be a string`);
      }
      const share = l.lengthShare ?? 1;
      if (typeof share !== 'number' || !(share > 0 && share <= 1)) {
        throw new InvalidArgumentError(`${name}.lengthShare must be a number in (0, 1]`);
      }
      return Object.freeze({ upToTokens: l.upToTokens, level: l.level, instructions: l.instructions ?? '', lengthShare: share });
    }),
  );
}

/** The level for a chunk of `sourceTokens`: the first whose `upToTokens` holds it, else the last. */
export function compressionLevelFor(
  levels: readonly Readonly<CompressionLevel>[],
  sourceTokens: number,
): Readonly<CompressionLevel> {
  return levels.find((l) => sourceTokens <= l.upToTokens) ?? levels[levels.length - 1]!;
}

/** A checkpoint in the window: its synthetic events (shadow prompt and summary), oldest first. */
export interface Checkpoint {
  events: SessionEvent[];
  level: number;
  ordinal: number;
}

const numberAt = (e: SessionEvent | undefined, key: string): number | undefined => {
  const v = e?.metadata[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};

/**
 * The checkpoints among the leading synthetic events, in log order (oldest first): each ends at a non-user
 * event. Summaries written before levels existed count as level 1, aged by their position.
 */
export function checkpointsOf(synthetic: readonly SessionEvent[]): Checkpoint[] {
  const out: Checkpoint[] = [];
  let current: SessionEvent[] = [];
  for (const e of synthetic) {
    current.push(e);
    if (e.messageType === 'user') continue;
    out.push({
      events: current,
      level: numberAt(e, CHECKPOINT_METADATA.level) ?? 1,
      ordinal: numberAt(e, CHECKPOINT_METADATA.ordinal) ?? out.length + 1,
    });
    current = [];
  }
  if (current.length > 0) {
    const last = out[out.length - 1];
    if (last !== undefined) last.events.push(...current);
    else out.push({ events: current, level: 1, ordinal: 1 });
  }
  return out;
}

/** The ordinal of the next compaction: one past the newest checkpoint's. */
export function nextOrdinal(checkpoints: readonly Checkpoint[]): number {
  return checkpoints.reduce((max, c) => Math.max(max, c.ordinal), 0) + 1;
}

/**
 * How many of the oldest checkpoints to merge, and the output cap of the merged summary. A merge is expected
 * to halve what it merges (never above `mergeCap`): the fewest oldest checkpoints (at least 2) whose merge
 * brings the total under `maxTokens` are merged, all of them when no fewer will do. The cap is the room the
 * newer checkpoints leave, at most `mergeCap`.
 */
export function oldestToMerge(
  checkpoints: readonly Checkpoint[],
  cost: (events: readonly SessionEvent[]) => number,
  limits: { shadowTokens: number; mergeCap: number; maxTokens: number },
): { count: number; maxTokens: number } {
  const { shadowTokens, mergeCap, maxTokens } = limits;
  const costs = checkpoints.map((c) => cost(c.events));
  const total = costs.reduce((a, b) => a + b, 0);
  let merged = 0;
  let count = checkpoints.length;
  for (let k = 1; k <= checkpoints.length; k++) {
    merged += costs[k - 1]!;
    const expected = shadowTokens + Math.min(mergeCap, Math.ceil(Math.max(0, merged - k * shadowTokens) / 2));
    if (k >= 2 && total - merged + expected <= maxTokens) {
      count = k;
      break;
    }
  }
  const rest = costs.slice(count).reduce((a, b) => a + b, 0);
  return { count, maxTokens: Math.max(1, Math.min(mergeCap, maxTokens - rest - shadowTokens)) };
}
