import { expect } from 'chai';
import { Messages, Session, SessionEvent, type Message } from 'session-compaction';
import type { SessionSnapshot } from '../../../cli/src/admin/sessionSnapshot.js';
import { verifySnapshot } from '../../../cli/src/admin/verifySession.js';

const session = Session.create({ id: 's', userId: 'u' });
let n = 0;
function ev(message: Message, init: { archived?: boolean; metadata?: Record<string, unknown>; id?: string } = {}): SessionEvent {
  return SessionEvent.create({
    sessionId: 's',
    id: init.id ?? `e${++n}`,
    message,
    archived: init.archived ?? false,
    metadata: init.metadata ?? {},
  });
}
const snap = (events: SessionEvent[], version = events.length): SessionSnapshot => ({ session, version, events, stable: true });
const summary = (covered: string[]) => [
  ev(Messages.user('Summarize the conversation we had so far.'), { metadata: { synthetic: true, coveredEventIds: covered } }),
  ev(Messages.assistant('summary'), { metadata: { synthetic: true, coveredEventIds: covered } }),
];
const kinds = (s: SessionSnapshot) => verifySnapshot(s).violations.map((v) => v.kind);

describe('cli: verifySnapshot', function () {
  it('a summarised session is consistent: originals covered once, version counts every append', function () {
    const a = ev(Messages.user('a'), { archived: true });
    const b = ev(Messages.assistant('b'), { archived: true });
    const c = ev(Messages.user('c'));
    const result = verifySnapshot(snap([a, b, ...summary([a.id, b.id]), c], 4));
    expect(result.ok).to.equal(true);
    expect(result.coverage).to.deep.equal({ originals: 3, verbatim: 1, summarized: 2, masked: 0, uncovered: 0 });
  });

  it('events dropped by a sliding window are reported, not flagged', function () {
    const result = verifySnapshot(snap([ev(Messages.user('old'), { archived: true }), ev(Messages.user('new'))]));
    expect(result.ok).to.equal(true);
    expect(result.coverage.uncovered).to.equal(1);
  });

  it('flags an event that is both in the window and in a summary', function () {
    const a = ev(Messages.user('a'));
    expect(kinds(snap([...summary([a.id]), a], 3))).to.deep.equal(['coverage-duplicated']);
  });

  it('flags a summary that covers an event the log does not hold', function () {
    expect(kinds(snap([...summary(['ghost']), ev(Messages.user('x'))], 1))).to.deep.equal(['coverage-dangling']);
  });

  it('flags a version lower than the number of appended events', function () {
    expect(kinds(snap([ev(Messages.user('a')), ev(Messages.user('b'))], 1))).to.deep.equal(['version-too-low']);
  });

  it('flags a tool result in the active window whose call was archived', function () {
    const call = ev(Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'f', '{}')] }), { archived: true });
    const result = ev(Messages.tool([Messages.toolResponse('c1', 'f', 'r')]));
    const v = verifySnapshot(snap([ev(Messages.user('q'), { archived: true }), call, ev(Messages.user('next')), result]));
    expect(v.violations.map((x) => [x.kind, x.eventIds])).to.deep.equal([['orphaned-tool-result', [result.id]]]);
  });

  it('flags a duplicated event id and a read that kept changing', function () {
    const a = ev(Messages.user('a'));
    expect(kinds({ ...snap([a, a]), stable: false })).to.deep.equal(['duplicate-event-id', 'unstable-read']);
  });
});
