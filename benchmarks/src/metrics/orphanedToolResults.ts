import type { Message } from 'session-compaction';
import { planToolPairing, toolExchangeOf } from 'session-compaction/spi';

/**
 * Tool results in a context whose call is not earlier in that same context: a provider rejects these (the
 * library's pairing rule calls them orphans).
 */
export function orphanedToolResults(messages: readonly Message[]): number {
  return planToolPairing(messages.map(toolExchangeOf))
    .results.flat()
    .filter((disposition) => disposition === 'orphan').length;
}
