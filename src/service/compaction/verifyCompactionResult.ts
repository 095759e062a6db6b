import type { CompactionResult } from '../../compaction/CompactionResult.js';
import { IllegalStateError } from '../../errors.js';
import type { SessionEvent } from '../../session/SessionEvent.js';

/**
 * Refuses a strategy result that would lose or invent data, before anything is written. Strategies are a
 * public extension point, so the service cannot trust them to partition the window:
 * - every real (non-synthetic) event of the window is either kept or archived, exactly once;
 * - only events of the window are archived (an archive entry is never invented).
 * Synthetic events of the window (earlier summaries) may be dropped: a new summary replaces them. New events
 * in the kept window are allowed — summaries, masked copies, and the items an agent framework's history
 * transaction puts in place of the ones it archives.
 */
export function verifyCompactionResult(strategy: string, window: readonly SessionEvent[], result: CompactionResult): void {
  const refuse = (problem: string): never => {
    throw new IllegalStateError(`Strategy ${strategy} returned an invalid compaction result: ${problem}; nothing was written`);
  };
  const inWindow = new Map(window.map((e) => [e.id, e]));
  const placed = new Set<string>();
  for (const e of result.archivedEvents) {
    if (!inWindow.has(e.id)) refuse(`archived event ${e.id} is not in the window`);
    if (placed.has(e.id)) refuse(`event ${e.id} is archived twice`);
    placed.add(e.id);
  }
  for (const e of result.compactedEvents) {
    if (placed.has(e.id)) refuse(`event ${e.id} is both kept and archived, or kept twice`);
    placed.add(e.id);
  }
  const lost = window.filter((e) => !e.isSynthetic() && !placed.has(e.id));
  if (lost.length > 0) {
    const shown = lost.slice(0, 5).map((e) => e.id);
    refuse(
      `${lost.length} event(s) of the window neither kept nor archived (${shown.join(', ')}${lost.length > 5 ? ', …' : ''})`,
    );
  }
}
