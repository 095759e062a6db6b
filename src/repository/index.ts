export { type SessionRepository } from './SessionRepository.js';
export { InMemorySessionRepository } from './InMemorySessionRepository.js';
