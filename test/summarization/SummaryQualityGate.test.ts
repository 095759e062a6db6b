import { expect } from 'chai';
import { InvalidArgumentError, Messages, SummaryQualityGate } from 'session-compaction';
import { salientIdentifiers } from 'session-compaction/spi';
import { A, CharEstimator, U, expectThrows } from '../support/fixtures.js';
import { call, result } from '../support/beyondEvents.js';

const archived = [
  U('My user id is mia_li_3668 and I want to change reservation NO6JO3 to flight HAT170 on 2024-05-17.'),
  call('c1', 'get_reservation_details', '{"reservation_id":"NO6JO3"}'),
  result('c1', '{"reservation_id":"NO6JO3","flights":[{"flight_number":"HAT170","price":1250}],"payment":"credit_card_4421"}'),
  A('Reservation NO6JO3 holds flight HAT170 for $1250, paid with credit_card_4421.'),
];
const goodSummary =
  'User mia_li_3668 asked to move reservation NO6JO3 to flight HAT170 on 2024-05-17; it currently costs 1250 and was paid with credit_card_4421 (get_reservation_details).';

describe('SummaryQualityGate', function () {
  it('passes a summary that keeps the identifiers of the archived events', function () {
    const verdict = new SummaryQualityGate().check(goodSummary, archived);
    expect(verdict).to.deep.include({ ok: true, reasons: [] });
    expect(verdict.identifierShare).to.be.at.least(0.5);
  });

  it('fails a blank summary', function () {
    for (const blank of ['', '   \n', null, undefined]) {
      expect(new SummaryQualityGate().check(blank, archived)).to.deep.include({ ok: false, reasons: ['the summary is blank'] });
    }
  });

  it('fails refusals and error texts', function () {
    const gate = new SummaryQualityGate({ minIdentifierShare: 0 });
    for (const text of [
      "I'm sorry, but I can't help with that.",
      'I cannot summarize this conversation.',
      'As an AI language model, I have no access to this.',
      'Error: upstream timed out',
      '{"error": {"message": "rate limited"}}',
      'Rate limit reached for gpt-4o',
    ]) {
      const verdict = gate.check(text, archived);
      expect(verdict.ok, text).to.equal(false);
      expect(verdict.reasons[0], text).to.contain('refusal or an error');
    }
    expect(gate.check('The user was sorry about the delay; the agent apologised.', archived).ok).to.equal(true);
  });

  it('accepts custom refusal patterns (strings match case-insensitively, RegExps as given), or none', function () {
    const gate = new SummaryQualityGate({ minIdentifierShare: 0, refusalPatterns: ['NO SUMMARY', /^skip/] });
    expect(gate.check('no summary available', archived).ok).to.equal(false);
    expect(gate.check('skip', archived).ok).to.equal(false);
    expect(gate.check("I'm sorry, no.", archived).ok).to.equal(true);
    expect(new SummaryQualityGate({ minIdentifierShare: 0, refusalPatterns: [] }).check('Error: x', archived).ok).to.equal(true);
  });

  it('fails a summary over its length budget', function () {
    const gate = new SummaryQualityGate({ maxTokens: 50, tokenCountEstimator: new CharEstimator() });
    const verdict = gate.check(goodSummary, archived);
    expect(verdict.ok).to.equal(false);
    expect(verdict.reasons).to.deep.equal([`the summary is ${goodSummary.length} tokens, over its budget of 50`]);
  });

  it('fails a summary that drops the identifiers, naming the missing ones', function () {
    const verdict = new SummaryQualityGate().check('The user wanted to change a flight and the agent looked it up.', archived);
    expect(verdict.ok).to.equal(false);
    expect(verdict.missingIdentifiers).to.include.members(['NO6JO3', 'HAT170', 'mia_li_3668']);
    expect(verdict.reasons[0]).to.match(/keeps 0 of \d+ identifiers \(0% < 50%\); missing: NO6JO3/);
  });

  it('makes the required share configurable', function () {
    const half = 'Reservation NO6JO3, flight HAT170.';
    expect(new SummaryQualityGate({ minIdentifierShare: 0.9 }).check(half, archived).ok).to.equal(false);
    expect(new SummaryQualityGate({ minIdentifierShare: 0.1 }).check(half, archived).ok).to.equal(true);
  });

  it('passes any non-blank, non-refusal summary of events without identifiers', function () {
    const chat = [U('hello there'), A('hi, how can I help?')];
    expect(new SummaryQualityGate().check('Greetings were exchanged.', chat)).to.deep.include({ ok: true, identifierShare: 1 });
  });

  it('collects every failure reason at once', function () {
    const gate = new SummaryQualityGate({ maxTokens: 3, tokenCountEstimator: new CharEstimator() });
    expect(gate.check('Error: nothing here', archived).reasons).to.have.length(3);
  });

  it('ranks identifiers by frequency: paths, ids, numbers and code names', function () {
    const ids = salientIdentifiers(
      ['edit src/app/main.py then src/app/main.py again', 'call parse_config and getUser 42 times, 42!'],
      10,
    );
    expect(ids[0]).to.equal('src/app/main.py');
    expect(ids).to.include.members(['parse_config', 'getUser', '42']);
    expect(salientIdentifiers([Messages.user('a b c').text], 5)).to.deep.equal([]);
  });

  it('validates its options', function () {
    expectThrows(
      () => new SummaryQualityGate({ minIdentifierShare: 2 }),
      InvalidArgumentError,
      'minIdentifierShare must be between 0 and 1',
    );
    expectThrows(() => new SummaryQualityGate({ maxTokens: 0 }), InvalidArgumentError, 'maxTokens must be greater than 0');
    expectThrows(() => new SummaryQualityGate({ refusalPatterns: [''] }), InvalidArgumentError, 'refusalPatterns');
  });
});
