/**
 * The neutral recorded-session format every benchmark source is mapped to (see docs/benchmarking.md).
 * It mirrors OpenAI chat messages closely enough that any chat log can be converted to it by hand.
 */
export type RecordedRole = 'user' | 'assistant' | 'tool' | 'system';

export const RECORDED_ROLES: readonly RecordedRole[] = Object.freeze(['user', 'assistant', 'tool', 'system']);

export interface RecordedToolCall {
  id: string;
  name: string;
  /** JSON text, as OpenAI sends it. */
  arguments: string;
}

export interface RecordedEvent {
  role: RecordedRole;
  content: string;
  toolCalls?: RecordedToolCall[];
  /** On tool events: the id of the call this result answers. */
  toolCallId?: string;
  name?: string;
  /** ISO-8601. */
  timestamp?: string;
}

/** A question whose answer the conversation holds, and where. */
export interface RecordedProbe {
  question: string;
  answer: string;
  /** 0-based indexes into the session's events. */
  evidenceEventIndexes: number[];
  category?: string;
  distractor?: string;
}

export interface RecordedSession {
  sessionId: string;
  events: RecordedEvent[];
  probes?: RecordedProbe[];
  meta?: Record<string, unknown>;
}

/** A named set of sessions from one source (LoCoMo, τ-bench, a user's own file...). */
export interface RecordedDataset {
  name: string;
  /** Where it came from and under which licence: shown in the reports. */
  source?: string;
  sessions: RecordedSession[];
}
