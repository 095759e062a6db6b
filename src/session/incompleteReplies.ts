import type { SessionEvent } from './SessionEvent.js';

/** Metadata of a reply that did not finish: `incomplete: true` and why (`finishReason`). */
export const METADATA_INCOMPLETE = 'incomplete';
export const METADATA_FINISH_REASON = 'finishReason';

/**
 * Why a stored reply is incomplete: 'aborted' (the caller's signal, a client that went away, a timeout),
 * 'error' (the stream failed), or the API's own finish reason ('length', 'content_filter').
 */
export function incompleteReplyMetadata(finishReason: string): Record<string, unknown> {
  return { [METADATA_INCOMPLETE]: true, [METADATA_FINISH_REASON]: finishReason };
}

export function isIncompleteReply(event: SessionEvent): boolean {
  return event.messageType === 'assistant' && event.metadata[METADATA_INCOMPLETE] === true;
}

/** What a later prompt shows after an incomplete reply's text, so the model knows it was cut off. */
export function interruptedNote(event: SessionEvent): string {
  const reason = event.metadata[METADATA_FINISH_REASON];
  return `[this reply was interrupted${typeof reason === 'string' ? ` (${reason})` : ''} and is incomplete]`;
}
