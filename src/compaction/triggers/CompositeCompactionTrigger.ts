import { InvalidArgumentError } from '../../errors.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import { toCompactionTrigger, type CompactionTrigger, type CompactionTriggerLike } from '../CompactionTrigger.js';

/** OR / AND of triggers, evaluated in order and short-circuited; async members are awaited. */
export class CompositeCompactionTrigger implements CompactionTrigger {
  private constructor(
    readonly mode: 'any' | 'all',
    readonly triggers: readonly CompactionTrigger[],
  ) {}

  static anyOf(...triggers: CompactionTriggerLike[]): CompositeCompactionTrigger {
    return new CompositeCompactionTrigger('any', CompositeCompactionTrigger.normalise(triggers));
  }

  static allOf(...triggers: CompactionTriggerLike[]): CompositeCompactionTrigger {
    return new CompositeCompactionTrigger('all', CompositeCompactionTrigger.normalise(triggers));
  }

  async shouldCompact(request: CompactionRequest): Promise<boolean> {
    for (const t of this.triggers) {
      const fired = await t.shouldCompact(request);
      if (this.mode === 'any' && fired) return true;
      if (this.mode === 'all' && !fired) return false;
    }
    return this.mode === 'all';
  }

  private static normalise(triggers: CompactionTriggerLike[]): CompactionTrigger[] {
    if (triggers.length === 0) throw new InvalidArgumentError('triggers must not be empty');
    return triggers.map(toCompactionTrigger);
  }
}
