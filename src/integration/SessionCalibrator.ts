import type { Logger } from '../logging.js';
import type { SessionMetadataUpdate, SessionRepository } from '../repository/SessionRepository.js';
import type { Session } from '../session/Session.js';
import { METADATA_TOKEN_CALIBRATION, updateCalibration, type TokenCalibration } from '../tokens/calibration.js';

/**
 * Where session metadata is read and written: any repository (or an adapter with these methods). With the
 * optional `updateSessionMetadata` (every built-in repository has it) the write is atomic; without it, it is a
 * findById then a save, where a concurrent update may be lost.
 */
export type SessionMetadataStore = Pick<SessionRepository, 'findById' | 'save' | 'updateSessionMetadata'>;

/** `update` applied to the stored session's metadata, atomically when the store can; null when the session is missing. */
export async function updateStoredMetadata(
  store: SessionMetadataStore,
  sessionId: string,
  update: SessionMetadataUpdate,
): Promise<Session | null> {
  if (typeof store.updateSessionMetadata === 'function') return store.updateSessionMetadata(sessionId, update);
  const session = await store.findById(sessionId);
  return session === null ? null : store.save(session.with({ metadata: update(session.metadata) }));
}

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
