import { readFileSync } from 'node:fs';
import { Messages, type Message, type ToolCall, type ToolResponse } from 'session-compaction';

/** One event of the shipped sample (data/*.json), in the library-neutral format described in data/ATTRIBUTION.md. */
export interface RecordedEvent {
  type: 'user' | 'assistant' | 'system' | 'tool';
  text?: string | null;
  toolCalls?: ToolCall[];
  responses?: ToolResponse[];
}

export interface RecordedSession {
  id: string;
  meta?: Record<string, unknown>;
  events: RecordedEvent[];
}

export interface RecordedSample {
  source: string;
  license: string;
  attribution: string;
  sessions: RecordedSession[];
}

/** The τ-bench airline conversation shipped in data/ (resolved next to this file, so it works from any cwd). */
export const SAMPLE_URL = new URL('../data/tau-bench-airline-sample.json', import.meta.url);

export function loadRecordedSample(url: URL = SAMPLE_URL): RecordedSample {
  const sample = JSON.parse(readFileSync(url, 'utf8')) as RecordedSample;
  if (!Array.isArray(sample.sessions) || sample.sessions.length === 0) {
    throw new Error(`${url.pathname}: expected a non-empty "sessions" array`);
  }
  return sample;
}

export function toMessage(event: RecordedEvent): Message {
  switch (event.type) {
    case 'system':
      return Messages.system(event.text ?? '');
    case 'user':
      return Messages.user(event.text ?? '');
    case 'assistant':
      return Messages.assistant(event.text ?? null, event.toolCalls !== undefined ? { toolCalls: event.toolCalls } : {});
    case 'tool':
      return Messages.tool(event.responses ?? []);
  }
}
