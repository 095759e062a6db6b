export {
  DEFAULT_MISSING_FUNCTION_OUTPUT,
  OPENAI_AGENTS_FORMAT,
  fromAgentItem,
  itemsOf,
  pairAgentItems,
  toAgentItems,
} from './AgentItems.js';
export { CompactingSession, type CompactingSessionOptions } from './CompactingSession.js';
export { type AgentOverflowRecovery } from './AgentTurnGuard.js';
export { METADATA_NATIVE, type NativeRecord } from '../../chat/nativeMessages.js';
