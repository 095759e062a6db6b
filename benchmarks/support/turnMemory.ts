import { SlidingWindowCompactionStrategy, type DefaultSessionService, type Logger } from 'session-compaction';
import { OpenAISessionMemory, type OpenAISessionMemoryOptions } from 'session-compaction/openai';
import { instantClient } from './instantClient.js';

/**
 * The SessionMemory the turn benchmarks drive: a model that answers at once (instantClient) and a sliding window
 * of `window` events compacted after every turn, with `recall` when given.
 */
export function turnMemory(
  service: DefaultSessionService,
  logger: Logger,
  window: number,
  recall?: OpenAISessionMemoryOptions['recall'],
): OpenAISessionMemory {
  return new OpenAISessionMemory({
    sessionService: service,
    client: instantClient(),
    model: 'bench',
    logger,
    compactionTrigger: () => true,
    compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: window }),
    ...(recall === undefined ? {} : { recall }),
  });
}
