import { Messages, SessionEvent, type Message, type TokenCountEstimator, CompactionRequest, Session } from 'session-compaction';
import type { SessionEventInit } from 'session-compaction/spi';

export const SESSION_ID = 'test-session';

let seq = 0;
/** A fresh event id per call, so fixtures never collide in the token memo. */
export function nextId(prefix = 'e'): string {
  seq += 1;
  return `${prefix}-${seq}-${Math.random().toString(36).slice(2, 8)}`;
}

export function event(message: Message, init: Partial<SessionEventInit> = {}): SessionEvent {
  return SessionEvent.create({ sessionId: SESSION_ID, id: nextId(), message, ...init });
}

export const U = (text: string, branch: string | null = null) => event(Messages.user(text), { branch });
export const A = (text: string | null, branch: string | null = null) => event(Messages.assistant(text), { branch });
export const SYS = (text: string) => event(Messages.system(text));
export const SU = (text = 'Summarize the conversation we had so far.') =>
  event(Messages.user(text), { metadata: { synthetic: true, compactionSource: 'recursive-summarization' } });
export const SA = (text: string) =>
  event(Messages.assistant(text), { metadata: { synthetic: true, compactionSource: 'recursive-summarization' } });
export const TC = (branch: string | null = null) =>
  event(Messages.assistant(null, { toolCalls: [Messages.toolCall('call-1', 'get_weather', '{"location":"Paris"}')] }), {
    branch,
  });
export const TR = (branch: string | null = null) =>
  event(Messages.tool([Messages.toolResponse('call-1', 'get_weather', '{"temp":"22C"}')]), { branch });
export const msgs = (n: number, prefix = 'msg-') => Array.from({ length: n }, (_, i) => U(`${prefix}${i + 1}`));

/** tokens = length of the formatted event: a character estimator, so that test arithmetic is exact. */
export class CharEstimator implements TokenCountEstimator {
  readonly seen: string[] = [];
  readonly countsReasoning: boolean;
  constructor(options: { countReasoning?: boolean } = {}) {
    this.countsReasoning = options.countReasoning === true;
  }
  estimate(text: string): number {
    this.seen.push(text);
    return text.length;
  }
}

export const texts = (events: readonly SessionEvent[]) =>
  events.map((e) => (e.message.type === 'tool' ? e.message.responses.map((r) => r.responseData).join() : e.text));

/** The session every fixture event belongs to, and a request over `events` for triggers and strategies. */
export const fixtureSession = () => Session.create({ id: SESSION_ID, userId: 'test-user' });
export const compactionRequest = (events: readonly SessionEvent[]) => CompactionRequest.of(fixtureSession(), events);

type ErrorClass = new (...args: never[]) => Error;

/** Asserts `fn` throws an instance of `type` whose message contains `message`; returns the error. */
export function expectThrows(fn: () => unknown, type: ErrorClass, message = ''): Error {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof type)) throw new Error(`expected ${type.name}, got ${String(error)}`, { cause: error });
    if (!error.message.includes(message))
      throw new Error(`expected message containing "${message}", got "${error.message}"`, { cause: error });
    return error;
  }
  throw new Error(`expected ${type.name} containing "${message}", nothing was thrown`);
}

/** Asserts `promise` rejects with an instance of `type` whose message contains `message`; returns the error. */
export async function expectRejects(promise: Promise<unknown>, type: ErrorClass, message = ''): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof type)) throw new Error(`expected ${type.name}, got ${String(error)}`, { cause: error });
    if (!error.message.includes(message))
      throw new Error(`expected message containing "${message}", got "${error.message}"`, { cause: error });
    return error;
  }
  throw new Error(`expected a rejection with ${type.name} containing "${message}", it resolved`);
}

/**
 * Line terminators other than \n and \r that models, tokenizers or consumers also break lines at: name,
 * character. U+001C–U+001E are in Python's str.splitlines set.
 */
export const UNICODE_LINE_BREAKS = [
  ['U+2028 LINE SEPARATOR', '\u2028'],
  ['U+2029 PARAGRAPH SEPARATOR', '\u2029'],
  ['U+0085 NEXT LINE', '\u0085'],
  ['U+000B VERTICAL TAB', '\u000B'],
  ['U+000C FORM FEED', '\u000C'],
  ['U+001C FILE SEPARATOR', '\u001C'],
  ['U+001D GROUP SEPARATOR', '\u001D'],
  ['U+001E RECORD SEPARATOR', '\u001E'],
] as const;

/** Splits as Python's str.splitlines does: at every character of UNICODE_LINE_BREAKS, \n, \r and \r\n. */
export function splitLinesEverywhere(text: string): string[] {
  // eslint-disable-next-line no-control-regex -- the separators are the point: they break lines for some readers
  return text.split(/\r\n|[\n\v\f\r\u001c\u001d\u001e\u0085\u2028\u2029]/);
}
