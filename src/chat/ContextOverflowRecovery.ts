import type { CompactionResult } from '../compaction/CompactionResult.js';
import type { CompactionTrigger } from '../compaction/CompactionTrigger.js';
import type { Logger } from '../logging.js';
import type { SessionService } from '../service/SessionService.js';
import { METADATA_TOKEN_CALIBRATION, calibrationRatio, raiseCalibration, type TokenCalibration } from '../tokens/calibration.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';
import type { ContextOverflow } from './contextOverflow.js';
import { EmergencyCompactionStrategy } from './EmergencyCompactionStrategy.js';
import type { SessionMetadataWriter } from './SessionMetadataWriter.js';

/** The share of the stated window a recovered prompt aims at: a margin for what our estimate still misses. */
export const OVERFLOW_TARGET_SHARE = 0.9;
/** Without a stated or configured window, the retried prompt is at most this share of the refused one. */
export const UNSTATED_WINDOW_SHRINK = 0.5;
/** Mechanical compactions are cheap: one that lost a CAS race to an append is simply run again, this often. */
const MAX_COMMIT_ATTEMPTS = 3;

const ALWAYS: CompactionTrigger = { shouldCompact: () => true };

export interface OverflowRecoveryRequest {
  sessionId: string;
  overflow: ContextOverflow;
  /** Our estimate of the prompt the provider refused. */
  estimatedPromptTokens: number;
  /** Our estimate of the part of that prompt that is not the stored window (system prompt, request-only messages). */
  outsideWindowTokens: number;
  /** Ids of the turn's current input: never archived. */
  keep?: ReadonlySet<string>;
}

export interface OverflowRecoveryOutcome {
  /** The emergency compaction as committed; nothing archived when there was nothing left to archive. */
  result: CompactionResult;
  /** Provider tokens per estimated token the target was computed with (the refusal's own measure when it gave one). */
  ratio: number;
  /** The window's budget, in estimated tokens, the emergency step cut to. */
  windowBudget: number;
  /**
   * The prompt size (provider tokens) the rest of the turn must stay under: the window the refusal stated
   * less its reply reserve, or — when it stated none — just under the size of the refused prompt.
   */
  limitTokens: number;
}

export interface ContextOverflowRecoveryOptions {
  service: Pick<SessionService, 'compact' | 'findById'>;
  estimator: TokenCountEstimator;
  logger: Logger;
  /** Where the raised calibration is written; null: nowhere (the target still uses the measured ratio). */
  metadata: SessionMetadataWriter | null;
  /** The configured window, used when the refusal does not state one. */
  contextWindowTokens?: number;
}

/**
 * What every integration does with a context-overflow refusal, once: calibrate the token estimate from what
 * the provider said about the refused prompt, then compact mechanically (EmergencyCompactionStrategy, no
 * model call) to a budget the retried prompt fits with a margin. The retry itself — exactly one — is the
 * integration's, since only it can send the prompt again.
 */
export class ContextOverflowRecovery {
  constructor(private readonly options: ContextOverflowRecoveryOptions) {}

  async recover(request: OverflowRecoveryRequest): Promise<OverflowRecoveryOutcome> {
    const { sessionId, overflow, estimatedPromptTokens } = request;
    const { service, logger, metadata } = this.options;
    const measured =
      overflow.promptTokens !== undefined && estimatedPromptTokens > 0
        ? overflow.promptTokens / estimatedPromptTokens
        : undefined;
    let session = await service.findById(sessionId);
    if (measured !== undefined && metadata !== null) {
      const written = await metadata.update(sessionId, (m) => ({
        ...m,
        [METADATA_TOKEN_CALIBRATION]: raiseCalibration(
          m[METADATA_TOKEN_CALIBRATION] as TokenCalibration | undefined,
          overflow.promptTokens!,
          estimatedPromptTokens,
        ),
      }));
      if (written !== null) session = written;
    }
    // This retry uses the refusal's own measure even beyond what calibration stores (it clamps at 2).
    const ratio = Math.max(calibrationRatio(session), measured ?? 0);
    const windowBudget = this.windowBudget(request, ratio);
    logger.warn('the provider refused the prompt as too long; compacting mechanically before one retry', {
      sessionId,
      providerMessage: overflow.message,
      promptTokens: overflow.promptTokens,
      limitTokens: overflow.limitTokens,
      estimatedPromptTokens,
      ratio,
      windowBudget,
    });
    const strategy = new EmergencyCompactionStrategy(windowBudget, this.options.estimator, request.keep);
    let result = await service.compact(sessionId, ALWAYS, strategy);
    // Archiving proposed but nothing committed: an append won the version race (or a lease was held).
    for (
      let attempt = 1;
      attempt < MAX_COMMIT_ATTEMPTS && result.archivedEvents.length === 0 && strategy.proposed > 0;
      attempt++
    ) {
      result = await service.compact(sessionId, ALWAYS, strategy);
    }
    const stated = overflow.limitTokens === undefined ? undefined : overflow.limitTokens - (overflow.replyTokens ?? 0);
    const refused = overflow.promptTokens ?? estimatedPromptTokens * ratio;
    const limitTokens = Math.max(1, Math.floor(stated !== undefined && stated > 0 ? stated : refused * OVERFLOW_TARGET_SHARE));
    return { result, ratio, windowBudget, limitTokens };
  }

  /** The stored window's budget in estimated tokens: the window the provider allows, less the reply's reserve and what is not the window. */
  private windowBudget(request: OverflowRecoveryRequest, ratio: number): number {
    const { overflow, estimatedPromptTokens, outsideWindowTokens } = request;
    const limit = overflow.limitTokens ?? this.options.contextWindowTokens;
    const shrunk = Math.floor(estimatedPromptTokens * (limit === undefined ? UNSTATED_WINDOW_SHRINK : OVERFLOW_TARGET_SHARE));
    const fits =
      limit === undefined
        ? shrunk
        : Math.floor(((limit - (overflow.replyTokens ?? 0)) * OVERFLOW_TARGET_SHARE) / Math.max(ratio, Number.EPSILON));
    // Always smaller than what was refused, even when our measure says the refused prompt should have fitted.
    const target = Math.min(fits, shrunk);
    return Math.max(1, target - outsideWindowTokens);
  }
}
