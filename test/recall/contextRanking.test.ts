import { expect } from 'chai';
import { Messages, SessionEvent } from 'session-compaction';
import { rankInContext, type LogView } from '../../src/recall/contextRanking.js';
import { queryPeriod } from '../../src/recall/queryPeriod.js';
import { namedInQuery } from '../../src/recall/queryParticipants.js';
import type { RetrievedEvent } from '../../src/recall/Retriever.js';

/** A log of `dates.length` events, event i at dates[i] (ISO), each with its position as its text. */
function logOf(...dates: string[]): { view: LogView; events: SessionEvent[] } {
  const events = dates.map((date, i) =>
    SessionEvent.create({ sessionId: 's', message: Messages.user(`message ${i}`), timestamp: new Date(date) }),
  );
  return {
    view: { log: new Map(events.map((e, i) => [i, e])), position: new Map(events.map((e, i) => [e.id, i])) },
    events,
  };
}

const scored = (events: SessionEvent[], scores: Record<number, number>): RetrievedEvent[] =>
  Object.entries(scores).map(([at, score]) => ({ event: events[Number(at)]!, score }));

const positions = (ranked: SessionEvent[], events: SessionEvent[]) => ranked.map((e) => events.indexOf(e));
const all = () => true;
const DAY = '2023-05-08T10:00:00Z';

describe('rankInContext', function () {
  it('ranks a message between two matching ones above one next to a single, stronger match', function () {
    const { view, events } = logOf(DAY, DAY, DAY, DAY, DAY, DAY, DAY, DAY);
    // 2 sits between hits 1 and 3 (0.4 × 2); 5 and 7 sit next to hit 6 alone (0.4 × 1.5).
    const ranked = rankInContext(scored(events, { 1: 1, 3: 1, 6: 1.5 }), view, all, { withNeighbours: true, period: null });
    const order = positions(ranked, events);
    expect(order.indexOf(2)).to.be.lessThan(order.indexOf(5));
    expect(order.indexOf(2)).to.be.lessThan(order.indexOf(7));
  });

  it('ranks only the hits when neighbours are not quoted, and never an ineligible event', function () {
    const { view, events } = logOf(DAY, DAY, DAY, DAY, DAY);
    const ranked = rankInContext(scored(events, { 1: 1, 3: 2 }), view, (e) => e !== events[1], {
      withNeighbours: false,
      period: null,
    });
    expect(positions(ranked, events)).to.deep.equal([3]);
  });

  it('prefers, of two near-equal matches, the one on the day of a stronger match', function () {
    const { view, events } = logOf(DAY, DAY, DAY, DAY, DAY, '2023-06-01T10:00:00Z');
    // 0 and 5 match about equally (5 a little better), with no matching neighbour; 3, a stronger match, shares 0's day.
    const ranked = rankInContext(scored(events, { 0: 1, 3: 2, 5: 1.05 }), view, all, { withNeighbours: false, period: null });
    expect(positions(ranked, events)).to.deep.equal([3, 0, 5]);
  });

  it('ranks an event of the day the request names above a stronger match of another day', function () {
    const { view, events } = logOf('2023-05-08T10:00:00Z', '2023-06-01T10:00:00Z');
    const ranked = rankInContext(scored(events, { 0: 1, 1: 1.5 }), view, all, {
      withNeighbours: false,
      period: queryPeriod('What did I paint on 8 May?'),
    });
    expect(positions(ranked, events)).to.deep.equal([0, 1]);
  });

  it("ranks a message telling of the named day by 'yesterday' above a stronger match of another day", function () {
    const events = [
      SessionEvent.create({
        sessionId: 's',
        message: Messages.user('I went to the support group yesterday.'),
        timestamp: new Date('2023-05-09T10:00:00Z'),
      }),
      SessionEvent.create({
        sessionId: 's',
        message: Messages.user('The support group was great.'),
        timestamp: new Date('2023-06-01T10:00:00Z'),
      }),
    ];
    const view: LogView = { log: new Map(events.map((e, i) => [i, e])), position: new Map(events.map((e, i) => [e.id, i])) };
    const rank = (query: string) =>
      positions(
        rankInContext(scored(events, { 0: 1, 1: 1.5 }), view, all, { withNeighbours: false, period: queryPeriod(query) }),
        events,
      );
    expect(rank('What happened on 8 May?')).to.deep.equal([0, 1]);
    // Its own day still counts; a day it neither is nor tells of does not.
    expect(rank('What happened on 9 May?')).to.deep.equal([0, 1]);
    expect(rank('What happened on 10 May?')).to.deep.equal([1, 0]);
  });

  it('raises an event of the named day even when the retriever scores below zero', function () {
    const { view, events } = logOf('2023-05-08T10:00:00Z', '2023-06-01T10:00:00Z');
    const ranked = rankInContext(scored(events, { 0: -0.5, 1: -0.4 }), view, all, {
      withNeighbours: false,
      period: queryPeriod('on 8 May'),
    });
    expect(positions(ranked, events)).to.deep.equal([0, 1]);
  });

  it("ranks the turn of the participant the request names above another's stronger match, and no one else's when none is named", function () {
    const events = [
      SessionEvent.create({ sessionId: 's', message: Messages.user('I ran a charity race.', { name: 'Caroline' }) }),
      SessionEvent.create({ sessionId: 's', message: Messages.assistant('Caroline, I ran one too!', { name: 'Melanie' }) }),
    ];
    const view: LogView = { log: new Map(events.map((e, i) => [i, e])), position: new Map(events.map((e, i) => [e.id, i])) };
    const hits = scored(events, { 0: 1, 1: 1.2 });
    const rank = (query: string) =>
      positions(
        rankInContext(hits, view, all, { withNeighbours: false, period: null, namesParticipant: namedInQuery(query) }),
        events,
      );
    expect(rank('What race did Caroline run?')).to.deep.equal([0, 1]);
    expect(rank('What race did melanie run?')).to.deep.equal([1, 0]);
    expect(rank('Who ran a race?')).to.deep.equal([1, 0]);
  });
});

describe('namedInQuery', function () {
  it('holds for a name whose first word the request says, whatever its case', function () {
    const named = namedInQuery("What did caroline and Ann-Marie Lee's brother say?");
    expect(named('Caroline')).to.equal(true);
    expect(named('Caroline Smith')).to.equal(true);
    expect(named('Ann-Marie Lee')).to.equal(true);
    expect(named('Lee')).to.equal(true);
    expect(named('Smith Caroline')).to.equal(false);
    expect(named('Carol')).to.equal(false);
  });
});
