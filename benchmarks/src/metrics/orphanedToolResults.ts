import type { Message } from 'session-compaction';
import { orphanedToolResponses } from 'session-compaction/spi';

/** Tool results in a context whose call is not earlier in that same context: a provider rejects these. */
export function orphanedToolResults(messages: readonly Message[]): number {
  return orphanedToolResponses(messages).length;
}
