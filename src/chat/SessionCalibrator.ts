import type { Logger } from '../logging.js';
import { updateStoredMetadata, type SessionMetadataStore } from '../repository/updateStoredMetadata.js';

export type { SessionMetadataStore };
import { METADATA_TOKEN_CALIBRATION, updateCalibration, type TokenCalibration } from '../tokens/calibration.js';

/** A service that can update metadata itself (DefaultSessionService does). */
export interface SessionMetadataUpdater {
  updateMetadata(
    sessionId: string,
    update: (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<unknown>;
}

/**
 * `metadata` with one calibration sample folded in (provider-reported prompt tokens against our estimate),
 * or null when the sample is unusable (missing or not positive).
 */
export function withCalibrationSample(
  metadata: Readonly<Record<string, unknown>>,
  providerPromptTokens: number | undefined,
  estimatedPromptTokens: number,
): Record<string, unknown> | null {
  if (providerPromptTokens === undefined || !(providerPromptTokens > 0) || !(estimatedPromptTokens > 0)) return null;
  const previous = metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration | undefined;
  return {
    ...metadata,
    [METADATA_TOKEN_CALIBRATION]: updateCalibration(previous, providerPromptTokens, estimatedPromptTokens),
  };
}

/**
 * Folds each model call's reported prompt tokens against our estimate of the same prompt into the session's
 * `tokenCalibration` metadata, which TokenCountTrigger applies. Best effort: a failed write is logged and
 * never fails the chat request (the ratio only sharpens the trigger, it is not conversation data).
 */
export class SessionCalibrator {
  constructor(
    private readonly store: SessionMetadataStore,
    private readonly logger: Logger,
  ) {}

  async record(
    sessionId: string,
    providerPromptTokens: number | undefined,
    estimatedPromptTokens: number,
  ): Promise<TokenCalibration | null> {
    if (withCalibrationSample({}, providerPromptTokens, estimatedPromptTokens) === null) return null;
    try {
      // Atomic when the store has updateSessionMetadata; otherwise a concurrent request may overwrite one
      // sample, which a running mean tolerates.
      const session = await updateStoredMetadata(this.store, sessionId, (metadata) =>
        withCalibrationSample(metadata, providerPromptTokens, estimatedPromptTokens)!,
      );
      if (session === null) return null;
      return session.metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration;
    } catch (error) {
      this.logger.warn('could not save the token calibration', { sessionId, error: String(error) });
      return null;
    }
  }
}
