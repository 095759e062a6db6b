import type { Logger } from '../logging.js';
import type { Session } from '../session/Session.js';
import { updateStoredMetadata } from '../repository/updateStoredMetadata.js';
import type { SessionMetadataStore, SessionMetadataUpdater } from './SessionCalibrator.js';

export type MetadataUpdate = (metadata: Readonly<Record<string, unknown>>) => Record<string, unknown>;

/**
 * Writes a chat turn's advisory metadata (calibration, usage totals) in one read-modify-write: through a
 * caller's store or the service's own `updateMetadata`, atomic in both cases when the repository has
 * `updateSessionMetadata` (every built-in one does: concurrent turns of one session then all count). Best
 * effort: a failure is logged and never fails the chat request, since these values are not conversation data.
 */
export class SessionMetadataWriter {
  private constructor(
    private readonly write: (sessionId: string, update: MetadataUpdate) => Promise<Session | null>,
    private readonly logger: Logger,
  ) {}

  /** undefined when there is nowhere to write (no store, and a service without `updateMetadata`). */
  static of(
    store: SessionMetadataStore | undefined,
    service: Partial<SessionMetadataUpdater>,
    logger: Logger,
  ): SessionMetadataWriter | undefined {
    if (store !== undefined) {
      return new SessionMetadataWriter((sessionId, update) => updateStoredMetadata(store, sessionId, update), logger);
    }
    const updater = service.updateMetadata;
    if (typeof updater !== 'function') return undefined;
    return new SessionMetadataWriter(
      async (sessionId, update) => (await updater.call(service, sessionId, update)) as Session,
      logger,
    );
  }

  /** The session as written, or null when it is gone or the write failed (logged at warn). */
  async update(sessionId: string, update: MetadataUpdate): Promise<Session | null> {
    try {
      return await this.write(sessionId, update);
    } catch (error) {
      this.logger.warn('could not save the session metadata (token calibration, usage)', { sessionId, error: String(error) });
      return null;
    }
  }
}
