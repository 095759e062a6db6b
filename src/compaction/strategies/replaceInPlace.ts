import { randomUUID } from 'node:crypto';
import type { Message } from '../../session/Message.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import { estimateEventsTokens } from '../../tokens/eventTokens.js';
import type { TokenCountEstimator } from '../../tokens/TokenCountEstimator.js';
import { CompactionResult } from '../CompactionResult.js';
import { METADATA_MASKED_FROM } from '../coverage.js';

/**
 * The id of the original event an event stands for: itself, or — for a masked copy, possibly a copy of a
 * copy — the original recorded in `maskedFrom`. Copies always point at the original so that the coverage
 * ledger can prove the original is represented.
 */
export function originalIdOf(event: SessionEvent): string {
  const from = event.metadata[METADATA_MASKED_FROM];
  return typeof from === 'string' ? from : event.id;
}

/**
 * A copy of `original` carrying `message`, at the same place in the log: same timestamp and branch, a new
 * id, `maskedFrom` = the original's id and `compactionSource` = the strategy that made it. Not synthetic:
 * it stands in the window where the original stood, so the cuts treat it as the event it replaces.
 */
export function maskedCopy(original: SessionEvent, message: Message, source: string): SessionEvent {
  return SessionEvent.create({
    sessionId: original.sessionId,
    id: randomUUID(),
    timestamp: original.timestamp,
    message,
    metadata: {
      ...original.metadata,
      [METADATA_MASKED_FROM]: originalIdOf(original),
      [SessionEvent.METADATA_COMPACTION_SOURCE]: source,
    },
    branch: original.branch,
  });
}

/**
 * Replaces the events at the given window positions by masked copies, in place; the replaced events are
 * archived. A `null` replacement removes the event from the window (archived, no copy).
 * `tokensEstimatedSaved` is the net saving (archived minus their copies).
 */
export function replaceInPlace(
  events: readonly SessionEvent[],
  replacements: ReadonlyMap<number, Message | null>,
  source: string,
  estimator: TokenCountEstimator,
): CompactionResult {
  if (replacements.size === 0) return CompactionResult.noop(events);
  const compacted: SessionEvent[] = [];
  const archived: SessionEvent[] = [];
  const copies: SessionEvent[] = [];
  events.forEach((event, i) => {
    const message = replacements.get(i);
    if (message === undefined) {
      compacted.push(event);
      return;
    }
    archived.push(event);
    if (message === null) return;
    const copy = maskedCopy(event, message, source);
    compacted.push(copy);
    copies.push(copy);
  });
  const saved = estimateEventsTokens(archived, estimator) - estimateEventsTokens(copies, estimator);
  return new CompactionResult(compacted, archived, saved);
}

/**
 * Positions of the tool messages the model has already answered: a later assistant message exists on the
 * same branch (with `requireText`, one with non-blank text — the stricter reading).
 */
export function consumedToolMessages(events: readonly SessionEvent[], requireText = false): Set<number> {
  const consumed = new Set<number>();
  // Walking backwards, a branch is "answered" once an assistant message on it has been seen.
  const answered = new Set<string | null>();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const m = e.message;
    if (m.type === 'assistant' && !e.isSynthetic() && (!requireText || (m.text !== null && m.text.trim() !== ''))) {
      answered.add(e.branch);
    } else if (m.type === 'tool' && answered.has(e.branch)) {
      consumed.add(i);
    }
  }
  return consumed;
}
