import type { PersistableMessage } from './ChatProvider.js';

/**
 * A streamed reply that stopped before its end: the caller aborted (or the request timed out), or the
 * stream failed. Carries what was received, so SessionMemory can store it marked incomplete; SessionMemory
 * then rethrows `cause`, the error the provider's SDK raised.
 */
export class InterruptedReplyError extends Error {
  constructor(
    readonly finishReason: 'aborted' | 'error',
    /** The text received so far, as a message to append (metadata marks it incomplete); null when nothing came. */
    readonly partial: PersistableMessage | null,
    cause: unknown,
  ) {
    super(`the reply stream was ${finishReason === 'aborted' ? 'aborted' : 'interrupted by an error'}`, { cause });
    this.name = 'InterruptedReplyError';
  }
}
