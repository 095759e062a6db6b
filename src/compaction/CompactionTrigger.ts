import { InvalidArgumentError } from '../errors.js';
import type { CompactionRequest } from './CompactionRequest.js';

/** Decides when to compact. May be async (e.g. a trigger that asks a store). */
export interface CompactionTrigger {
  shouldCompact(request: CompactionRequest): boolean | Promise<boolean>;
}

export type CompactionTriggerFunction = (request: CompactionRequest) => boolean | Promise<boolean>;
export type CompactionTriggerLike = CompactionTrigger | CompactionTriggerFunction;

export function toCompactionTrigger(trigger: CompactionTriggerLike): CompactionTrigger {
  if (typeof trigger === 'function') return { shouldCompact: trigger };
  if (trigger !== null && typeof trigger === 'object' && typeof trigger.shouldCompact === 'function') return trigger;
  throw new InvalidArgumentError('trigger must not be null');
}
