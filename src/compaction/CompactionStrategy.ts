import { InvalidArgumentError } from '../errors.js';
import type { CompactionRequest } from './CompactionRequest.js';
import type { CompactionResult } from './CompactionResult.js';

/** Decides how to compact: a pure proposal, committed (or not) by the service. */
export interface CompactionStrategy {
  compact(request: CompactionRequest): Promise<CompactionResult>;
}

export type CompactionStrategyFunction = (request: CompactionRequest) => Promise<CompactionResult>;
export type CompactionStrategyLike = CompactionStrategy | CompactionStrategyFunction;

export function toCompactionStrategy(strategy: CompactionStrategyLike): CompactionStrategy {
  if (typeof strategy === 'function') return { compact: strategy };
  if (strategy !== null && typeof strategy === 'object' && typeof strategy.compact === 'function') return strategy;
  throw new InvalidArgumentError('strategy must not be null');
}
