import { expect } from 'chai';
import fc from 'fast-check';
import {
  EventFilter,
  IllegalStateError,
  InvalidArgumentError,
  Session,
  SessionEvent,
  type EventFilterOptions,
} from 'session-compaction';
import { harness, type Harness } from '../chat/support/harness.js';

/** JSON as an HTTP body brings it, and whatever else plain JavaScript can pass. */
const anyInput = fc.oneof(
  fc.jsonValue(),
  fc.anything(),
  fc.record({ role: fc.constantFrom('user', 'assistant', 'tool', 'system'), content: fc.jsonValue() }),
);

/** The documented refusals: a bad argument, or (create with a taken id) a state conflict. */
function documented(error: unknown): boolean {
  return error === undefined || error instanceof InvalidArgumentError || error instanceof IllegalStateError;
}

async function outcome(work: () => unknown): Promise<unknown> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('fuzz: random input to every public entry', function () {
  this.timeout(120_000);
  let h: Harness;
  before(async () => {
    h = await harness();
    await h.service.create({ id: 'fz', userId: 'u' });
  });
  after(() => h.close());

  const entries: Array<[string, (x: unknown) => unknown]> = [
    ['Session.create', (x) => Session.create(x as Parameters<typeof Session.create>[0])],
    ['SessionEvent.create', (x) => SessionEvent.create(x as Parameters<typeof SessionEvent.create>[0])],
    ['EventFilter.of', (x) => EventFilter.of(x as EventFilterOptions)],
    ['SessionService.create', (x) => h.service.create(x as never)],
    ['SessionService.appendMessage', (x) => h.service.appendMessage('fz', x as never)],
    ['SessionService.appendEvent', (x) => h.service.appendEvent(x as never)],
    ['SessionService.getEvents', (x) => h.service.getEvents('fz', x as never)],
    ['SessionService.findById', (x) => h.service.findById(x as never)],
    ['SessionService.deleteExpiredSessions', (x) => h.service.deleteExpiredSessions(x as never)],
    ['SessionMemory.call messages', (x) => h.memory.call({ sessionId: 'fz', messages: x as never })],
    ['SessionMemory.call message', (x) => h.memory.call({ sessionId: 'fz', messages: [x as never] })],
    ['SessionMemory.call request', (x) => h.memory.call(x as never)],
  ];

  for (const [name, entry] of entries) {
    it(`${name}: a documented error or success, never a TypeError; the session stays readable`, async function () {
      await fc.assert(
        fc.asyncProperty(anyInput, async (input) => {
          const error = await outcome(() => entry(input));
          expect(documented(error), `${name}(${fc.stringify(input)}): ${String(error)}`).to.equal(true);
          await h.service.getEvents('fz', EventFilter.of({ keyword: 'a' }));
          await h.service.getEvents('fz', EventFilter.of({ pattern: /./, lastN: 2 }));
        }),
        { numRuns: 150 },
      );
    });
  }
});
