import { InvalidArgumentError } from '../errors.js';
import type { CompactionRequest } from './CompactionRequest.js';
import type { SessionEvent } from '../session/SessionEvent.js';
import type { CompactionResult, StrategySkipReason } from './CompactionResult.js';

/** What one stage of a staged strategy (a pipeline, a pressure band) did to the window. */
export interface CompactionStageReport {
  index: number;
  /** The stage's name (a band's name), else the strategy's class name, or `stage <n>` for a function. */
  name: string;
  tokensBefore: number;
  tokensAfter: number;
  eventsBefore: number;
  eventsAfter: number;
  /** Events the stage archived (original or intermediate). */
  archived: number;
  skipReason?: StrategySkipReason;
}

/** What a strategy would do, worked out without side effects (for summarisers: without the model call). */
export interface StrategyPreview {
  /** For a summarising strategy previewed without the model, the summary pair holds a placeholder text. */
  result: CompactionResult;
  /** The events a summariser would be asked to summarise (its prompt's conversation section). */
  summarizedEvents?: readonly SessionEvent[];
  modelCalled: boolean;
  /** For a staged strategy: the stages that ran, with tokens before and after each. */
  stages?: readonly CompactionStageReport[];
}

/** Decides how to compact: a pure proposal, committed (or not) by the service. */
export interface CompactionStrategy {
  compact(request: CompactionRequest): Promise<CompactionResult>;
  /** Optional dry run; strategies that call a model implement it to skip the call. */
  preview?(request: CompactionRequest): Promise<StrategyPreview>;
}

export type CompactionStrategyFunction = (request: CompactionRequest) => Promise<CompactionResult>;
export type CompactionStrategyLike = CompactionStrategy | CompactionStrategyFunction;

export function toCompactionStrategy(strategy: CompactionStrategyLike): CompactionStrategy {
  if (typeof strategy === 'function') return { compact: strategy };
  if (strategy !== null && typeof strategy === 'object' && typeof strategy.compact === 'function') return strategy;
  throw new InvalidArgumentError('strategy must not be null');
}
