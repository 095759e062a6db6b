import type { Logger } from '../../logging.js';
import type { SessionRepository } from '../../repository/SessionRepository.js';
import type { EmitServiceEvent } from '../SessionServiceEvents.js';

/** What erasure, redaction and retention need from the service. */
export interface DataLifecycleContext {
  repository: SessionRepository;
  emit: EmitServiceEvent;
  logger: Logger;
  now: () => Date;
}
