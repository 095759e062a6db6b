import { expect } from 'chai';
import fc from 'fast-check';
import { InvalidArgumentError, Messages, Session, SessionEvent, type Message } from 'session-compaction';
import { eventFingerprint, sessionFingerprint } from '../../../cli/src/admin/canonical.js';
import { exportSession, importSession } from '../../../cli/src/admin/exportFormat.js';

const text = fc.string({ maxLength: 12 });
const toolCall = fc
  .record({ id: fc.string({ minLength: 1, maxLength: 6 }), name: fc.string({ minLength: 1, maxLength: 6 }), args: text })
  .map((c) => Messages.toolCall(c.id, c.name, c.args));
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  text.map((t) => Messages.user(t)),
  text.map((t) => Messages.system(t)),
  fc
    .record({
      text: fc.option(text, { nil: null }),
      calls: fc.array(toolCall, { maxLength: 2 }),
      reasoning: fc.option(text, { nil: undefined }),
    })
    .map((a) =>
      Messages.assistant(a.text, { toolCalls: a.calls, ...(a.reasoning !== undefined ? { reasoning: a.reasoning } : {}) }),
    ),
  fc
    .array(
      fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), name: fc.string({ minLength: 1, maxLength: 6 }), data: text }),
      { maxLength: 3 },
    )
    .map((rs) => Messages.tool(rs.map((r) => Messages.toolResponse(r.id, r.name, r.data)))),
);
const metadataArb = fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.oneof(fc.integer(), text, fc.boolean()), {
  maxKeys: 3,
});

describe('cli: export line format', function () {
  it('property: export then import gives back every session field and every event exactly', function () {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            message: messageArb,
            archived: fc.boolean(),
            branch: fc.option(fc.constantFrom('b1', 'b1.x'), { nil: null }),
            metadata: metadataArb,
            ts: fc.integer({ min: 0, max: 4e12 }),
          }),
          { maxLength: 12 },
        ),
        metadataArb,
        fc.option(fc.integer({ min: 0, max: 4e12 }), { nil: null }),
        (specs, sessionMeta, expires) => {
          const session = Session.create({
            id: 'sess-1',
            userId: 'owner',
            createdAt: new Date(1000),
            expiresAt: expires === null ? null : new Date(expires),
            metadata: sessionMeta,
          });
          const events = specs.map((s, i) =>
            SessionEvent.create({
              sessionId: session.id,
              id: `id-${i}`,
              message: s.message,
              archived: s.archived,
              branch: s.branch,
              metadata: s.metadata,
              timestamp: new Date(s.ts),
            }),
          );
          const line = JSON.parse(
            JSON.stringify(exportSession({ session, version: events.length + 3, events, stable: true })),
          ) as unknown;
          const back = importSession(line, { userId: 'default', now: new Date() });
          expect(sessionFingerprint(back.session)).to.equal(sessionFingerprint(session));
          expect(back.events.map(eventFingerprint)).to.deep.equal(events.map(eventFingerprint));
          expect(back.version).to.equal(events.length + 3);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a plain neutral recorded session imports with ids derived from its position, so a second import is a no-op', function () {
    const plain = {
      sessionId: 'rec-1',
      events: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] },
        { role: 'tool', content: 'r', toolCallId: 'c', name: 'f' },
      ],
    };
    const now = new Date('2025-01-01T00:00:00Z');
    const first = importSession(plain, { userId: 'importer', now });
    const second = importSession(plain, { userId: 'importer', now });
    expect(first.events.map((e) => e.id)).to.deep.equal(['rec-1-0', 'rec-1-1', 'rec-1-2']);
    expect(first.session.userId).to.equal('importer');
    expect(first.events[1]!.text).to.equal(null);
    expect(first.version).to.equal(3);
    expect(second.events.map(eventFingerprint)).to.deep.equal(first.events.map(eventFingerprint));
  });

  it('rejects a line that is not a recorded session, naming the field', function () {
    expect(() =>
      importSession({ sessionId: 'x', events: [{ role: 'robot', content: '' }] }, { userId: 'u', now: new Date() }),
    ).to.throw(InvalidArgumentError, 'events[0].role');
    expect(() =>
      importSession({ sessionId: 'x', createdAt: 'yesterday', events: [] }, { userId: 'u', now: new Date() }),
    ).to.throw(InvalidArgumentError, 'x.createdAt must be an ISO-8601 date');
  });
});
