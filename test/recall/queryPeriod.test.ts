import { expect } from 'chai';
import { queryPeriod } from '../../src/recall/queryPeriod.js';

describe('queryPeriod', function () {
  const on = (iso: string) => new Date(`${iso}T12:00:00Z`);

  it('a month, day and year name that one day only', function () {
    const period = queryPeriod('What did Jon get accepted for on May 23, 2023?')!;
    expect([on('2023-05-23'), on('2024-05-23'), on('2023-05-24')].map((d) => period.includes(d))).to.deep.equal([
      true,
      false,
      false,
    ]);
  });

  it('a day and month without a year name that day in every year', function () {
    const period = queryPeriod('what did I say on 8 May?')!;
    expect([on('2023-05-08'), on('2025-05-08'), on('2023-05-09')].map((d) => period.includes(d))).to.deep.equal([
      true,
      true,
      false,
    ]);
  });

  it('reads "the 8th of May" and abbreviations ("Dec 4")', function () {
    expect(queryPeriod('the 8th of May')!.includes(on('2023-05-08'))).to.equal(true);
    expect(queryPeriod('what happened Dec 4?')!.includes(on('2022-12-04'))).to.equal(true);
  });

  it('a month alone names the whole month, a year alone the whole year', function () {
    const june = queryPeriod('When did Melanie go camping in June?')!;
    expect([on('2023-06-01'), on('2023-06-30'), on('2023-07-01')].map((d) => june.includes(d))).to.deep.equal([
      true,
      true,
      false,
    ]);
    const year = queryPeriod('How many times did we go to the beach in 2023?')!;
    expect([on('2023-01-01'), on('2024-01-01')].map((d) => year.includes(d))).to.deep.equal([true, false]);
  });

  it('reads ISO dates', function () {
    const period = queryPeriod('what changed on 2023-05-08?')!;
    expect([on('2023-05-08'), on('2023-05-09')].map((d) => period.includes(d))).to.deep.equal([true, false]);
  });

  it('does not take everyday words for months, nor a request without a date for one with', function () {
    expect(queryPeriod('What may I bring when we march on the capital?')).to.equal(null);
    expect(queryPeriod('what book did you read?')).to.equal(null);
  });

  it('takes "May" for the month when it is capitalised', function () {
    expect(queryPeriod('What did we plan for May?')!.includes(on('2023-05-17'))).to.equal(true);
  });

  it("reads relative dates from the request's own time, and none without it", function () {
    const now = new Date('2023-05-08T13:56:00Z');
    const yesterday = queryPeriod('What did I tell you yesterday?', now)!;
    expect([on('2023-05-07'), on('2023-05-08'), on('2023-05-06')].map((d) => yesterday.includes(d))).to.deep.equal([
      true,
      false,
      false,
    ]);
    const lastWeek = queryPeriod('where did we go last week?', now)!;
    expect(
      [on('2023-04-29'), on('2023-05-07'), on('2023-04-28'), on('2023-05-08')].map((d) => lastWeek.includes(d)),
    ).to.deep.equal([true, true, false, false]);
    expect(queryPeriod('What did I tell you yesterday?')).to.equal(null);
    expect(queryPeriod('what book did you read?', now)).to.equal(null);
  });
});
