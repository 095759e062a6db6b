import type { Logger } from '../logging.js';
import type { SessionRepository } from '../repository/SessionRepository.js';
import { Session } from '../session/Session.js';
import { METADATA_TOKEN_CALIBRATION, updateCalibration, type TokenCalibration } from '../tokens/calibration.js';

/** Where session metadata is read and written: any repository (or an adapter with these two methods). */
export type SessionMetadataStore = Pick<SessionRepository, 'findById' | 'save'>;

/** A service that can update metadata itself (DefaultSessionService does). */
export interface SessionMetadataUpdater {
  updateMetadata(
    sessionId: string,
    update: (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<unknown>;
}

/** Adapts a service with `updateMetadata` to the store the calibrator writes through. */
export function metadataStoreOf(
  service: Partial<SessionMetadataUpdater> & Pick<SessionRepository, 'findById'>,
): SessionMetadataStore | undefined {
  const updater = service.updateMetadata;
  if (typeof updater !== 'function') return undefined;
  return {
    findById: (id) => service.findById(id),
    save: async (session) => {
      await updater.call(service, session.id, () => ({ ...session.metadata }));
      return Session.from(session);
    },
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
    if (providerPromptTokens === undefined || !(providerPromptTokens > 0) || !(estimatedPromptTokens > 0)) return null;
    try {
      const session = await this.store.findById(sessionId);
      if (session === null) return null;
      const previous = session.metadata[METADATA_TOKEN_CALIBRATION] as TokenCalibration | undefined;
      const next = updateCalibration(previous, providerPromptTokens, estimatedPromptTokens);
      // Read-modify-write without a version: a concurrent request may overwrite one sample, which a running mean tolerates.
      await this.store.save(session.with({ metadata: { ...session.metadata, [METADATA_TOKEN_CALIBRATION]: next } }));
      return next;
    } catch (error) {
      this.logger.warn('could not save the token calibration', { sessionId, error: String(error) });
      return null;
    }
  }
}
