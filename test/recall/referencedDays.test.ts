import { expect } from 'chai';
import { referencedDays } from '../../src/recall/referencedDays.js';

const AT = new Date('2023-05-08T22:30:00Z');
const iso = (days: Date[]) => days.map((d) => d.toISOString().slice(0, 10)).sort();

describe('referencedDays', function () {
  it("gives the day before the message's own day for 'yesterday' and the day after for 'tomorrow'", function () {
    expect(iso(referencedDays('Yesterday I painted a lake.', AT))).to.deep.equal(['2023-05-07']);
    expect(iso(referencedDays('The race is tomorrow!', AT))).to.deep.equal(['2023-05-09']);
  });

  it('counts back the days of "N days ago", in digits or words', function () {
    expect(iso(referencedDays('I signed up 3 days ago', AT))).to.deep.equal(['2023-05-05']);
    expect(iso(referencedDays('two days ago we met', AT))).to.deep.equal(['2023-05-06']);
    expect(iso(referencedDays('a couple of days ago', AT))).to.deep.equal(['2023-05-06']);
  });

  it('gives every day of last week (the nine days before) and of last month', function () {
    expect(iso(referencedDays('We went camping last weekend.', AT))).to.deep.equal([
      '2023-04-29',
      '2023-04-30',
      '2023-05-01',
      '2023-05-02',
      '2023-05-03',
      '2023-05-04',
      '2023-05-05',
      '2023-05-06',
      '2023-05-07',
    ]);
    const april = iso(referencedDays('Last month I started a new job.', AT));
    expect(april).to.have.length(30);
    expect([april[0], april[29]]).to.deep.equal(['2023-04-01', '2023-04-30']);
  });

  it('gives nothing for vague or absent relative dates, or a message without a valid time', function () {
    expect(referencedDays('I went there recently, the other day.', AT)).to.deep.equal([]);
    expect(referencedDays('The yesterdays of old', AT)).to.deep.equal([]);
    expect(referencedDays('yesterday', new Date(Number.NaN))).to.deep.equal([]);
  });
});
