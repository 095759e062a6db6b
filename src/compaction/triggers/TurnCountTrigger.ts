import { requirePositiveInt } from '../../errors.js';
import type { CompactionRequest } from '../CompactionRequest.js';
import type { CompactionTrigger } from '../CompactionTrigger.js';

/** Fires when the window holds more than `maxTurns` turns (strictly more). */
export class TurnCountTrigger implements CompactionTrigger {
  readonly maxTurns: number;

  constructor(maxTurns: number) {
    this.maxTurns = requirePositiveInt(maxTurns, 'maxTurns');
  }

  getMaxTurns(): number {
    return this.maxTurns;
  }

  shouldCompact(request: CompactionRequest): boolean {
    return request.currentTurnCount > this.maxTurns;
  }
}
