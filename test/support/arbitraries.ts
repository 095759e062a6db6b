/**
 * fast-check generators for event sequences, shared by the property tests (and reusable by any helper):
 * root and branch user/assistant events, tool call/result pairs, system events and synthetic summary pairs.
 * Generators produce plain specs first, so shrinking works on data, then `toEvents` builds SessionEvents.
 */
import fc from 'fast-check';
import { Messages, SessionEvent, type Message } from 'session-compaction';

export type EventSpec =
  | { kind: 'user'; text: string; branch: string | null }
  | { kind: 'assistant'; text: string | null; branch: string | null }
  | { kind: 'system'; text: string }
  | { kind: 'toolPair'; name: string; args: string; result: string; branch: string | null }
  | { kind: 'syntheticPair'; summary: string };

/** Property runs are reproducible: a fixed seed unless FC_SEED is set (fast-check prints the failing seed). */
export const PROPERTY_SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : 20240601;
export const propertyParams = (numRuns = 200): fc.Parameters<unknown> => ({ numRuns, seed: PROPERTY_SEED });

/** Mostly root events; branches include a dot-path child and a sibling, as in multi-agent sessions. */
export const branchArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom('orch', 'orch.researcher', 'orch.writer') },
);

export const textArb: fc.Arbitrary<string> = fc.string({ minLength: 0, maxLength: 24 });

export const eventSpecArb: fc.Arbitrary<EventSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('user' as const), text: textArb, branch: branchArb }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('assistant' as const),
      text: fc.option(textArb, { nil: null, freq: 8 }),
      branch: branchArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), text: textArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('toolPair' as const),
      name: fc.constantFrom('get_weather', 'search', 'calc'),
      args: fc.json({ maxDepth: 1 }),
      result: textArb,
      branch: branchArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('syntheticPair' as const), summary: textArb }) },
);

export const eventSpecsArb = (maxLength = 40): fc.Arbitrary<EventSpec[]> => fc.array(eventSpecArb, { maxLength, size: 'max' });

const SYNTHETIC = { synthetic: true, compactionSource: 'property-test' } as const;

/**
 * Builds the events of `specs` for `sessionId`. Ids are `${idPrefix}${n}` with n counting from `firstIndex`,
 * so several batches for one session never collide. A tool pair is a call and its result sharing a call id;
 * a synthetic pair is a shadow prompt and a summary, as summarisation writes them.
 */
export function toEvents(specs: readonly EventSpec[], sessionId: string, idPrefix = 'ev-', firstIndex = 0): SessionEvent[] {
  const out: SessionEvent[] = [];
  const add = (message: Message, init: { branch?: string | null; metadata?: Record<string, unknown> } = {}) => {
    out.push(SessionEvent.create({ sessionId, id: `${idPrefix}${firstIndex + out.length}`, message, ...init }));
  };
  for (const spec of specs) {
    switch (spec.kind) {
      case 'user':
        add(Messages.user(spec.text), { branch: spec.branch });
        break;
      case 'assistant':
        add(Messages.assistant(spec.text), { branch: spec.branch });
        break;
      case 'system':
        add(Messages.system(spec.text));
        break;
      case 'toolPair': {
        const callId = `call-${firstIndex + out.length}`;
        add(Messages.assistant(null, { toolCalls: [Messages.toolCall(callId, spec.name, spec.args)] }), { branch: spec.branch });
        add(Messages.tool([Messages.toolResponse(callId, spec.name, spec.result)]), { branch: spec.branch });
        break;
      }
      case 'syntheticPair':
        add(Messages.user('Summarize the conversation we had so far.'), { metadata: SYNTHETIC });
        add(Messages.assistant(spec.summary), { metadata: SYNTHETIC });
        break;
    }
  }
  return out;
}

/** A random event sequence of one session (default 'prop-session'), in log order. */
export const eventSequenceArb = (options: { sessionId?: string; maxLength?: number } = {}): fc.Arbitrary<SessionEvent[]> =>
  eventSpecsArb(options.maxLength).map((specs) => toEvents(specs, options.sessionId ?? 'prop-session'));

/** Strategy settings for the mechanical strategies, with limits small enough to make them compact often. */
export type MechanicalStrategySpec =
  { kind: 'sliding'; maxEvents: number } | { kind: 'turnWindow'; maxTurns: number } | { kind: 'tokenCount'; maxTokens: number };

export const mechanicalStrategySpecArb: fc.Arbitrary<MechanicalStrategySpec> = fc.oneof(
  fc.record({ kind: fc.constant('sliding' as const), maxEvents: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('turnWindow' as const), maxTurns: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('tokenCount' as const), maxTokens: fc.integer({ min: 1, max: 400 }) }),
);
