import { expect } from 'chai';
import { Messages } from 'session-compaction';
import { coveredIds, verifyCoverage } from 'session-compaction/spi';
import { markMalformed } from '../../src/session/malformedEvents.js';
import { A, U, event } from '../support/fixtures.js';

/** A summary pair covering `ids`: the metadata is on both halves, only the assistant half is the summary. */
function summaryOf(ids: readonly string[], extra: Record<string, unknown> = {}) {
  const metadata = { synthetic: true, compactionSource: 'test', coveredEventIds: ids, ...extra };
  return [event(Messages.user('Summarize'), { metadata }), event(Messages.assistant('summary'), { metadata })];
}

describe('the coverage ledger (verifyCoverage)', function () {
  it('an untouched log is all verbatim and ok', function () {
    const log = [U('q'), A('a')];
    const report = verifyCoverage(log);
    expect(report).to.deep.include({ ok: true, originals: 2, verbatim: log.map((e) => e.id), uncovered: [], duplicated: [] });
  });

  it('an archived event covered by one live summary is summarised, not uncovered; the prompt half counts nothing', function () {
    const q = U('q');
    const a = A('a');
    const log = [q.asArchived(), a.asArchived(), ...summaryOf([q.id, a.id]), U('next')];
    const report = verifyCoverage(log);
    expect(report.ok).to.equal(true);
    expect(report.summarized).to.deep.equal([q.id, a.id]);
    expect(report.verbatim).to.deep.equal([log[4]!.id]);
    expect(report.originals).to.equal(3);
  });

  it('an archived event nothing stands for is uncovered, and the report is not ok', function () {
    const q = U('q');
    const report = verifyCoverage([q.asArchived(), U('next')]);
    expect(report.uncovered).to.deep.equal([q.id]);
    expect(report.ok).to.equal(false);
  });

  it('an event both verbatim and in a summary is duplicated, and the report is not ok', function () {
    const q = U('q');
    const report = verifyCoverage([q, ...summaryOf([q.id])]);
    expect(report.duplicated).to.deep.equal([q.id]);
    expect(report.uncovered).to.deep.equal([]);
    expect(report.ok).to.equal(false);
  });

  it('an archived summary stands for nothing any more', function () {
    const q = U('q');
    const report = verifyCoverage([q.asArchived(), ...summaryOf([q.id]).map((e) => e.asArchived())]);
    expect(report.uncovered).to.deep.equal([q.id]);
    expect(report.summarized).to.deep.equal([]);
  });

  it('a masked copy stands for its archived original; the copy is not an original itself', function () {
    const original = U('long output');
    const copy = event(Messages.user('excerpt'), { metadata: { maskedFrom: original.id } });
    const report = verifyCoverage([original.asArchived(), copy]);
    expect(report).to.deep.include({ ok: true, originals: 1, masked: [original.id], verbatim: [] });
  });

  it('reports redacted originals and tainted summaries without failing the ledger', function () {
    const q = event(Messages.user('[redacted]'), { metadata: { redaction: { at: '2026-01-01T00:00:00.000Z', reason: 'gdpr' } } });
    const pair = summaryOf([q.id], { taintedBy: [q.id, 7] });
    const report = verifyCoverage([q.asArchived(), ...pair]);
    expect(report.redacted).to.deep.equal([q.id]);
    expect(report.tainted).to.deep.equal([pair[1]!.id]);
    expect(report.ok).to.equal(true);
    expect(verifyCoverage([event(Messages.user('x'), { metadata: { redaction: 'gdpr' } })]).redacted).to.deep.equal([]);
    expect(verifyCoverage([event(Messages.user('x'), { metadata: { redaction: null } })]).redacted).to.deep.equal([]);
  });

  it('lists as redacted or tainted only what is: a summary tainted by no string id is not tainted', function () {
    expect(verifyCoverage([U('q'), A('a')])).to.deep.include({ redacted: [], tainted: [] });
    const q = U('q2');
    const clean = summaryOf([q.id]);
    expect(verifyCoverage([q.asArchived(), ...clean]).tainted).to.deep.equal([]);
    const numbersOnly = summaryOf([q.id], { taintedBy: [7] });
    expect(verifyCoverage([q.asArchived(), ...numbersOnly]).tainted).to.deep.equal([]);
    const tainted = summaryOf([q.id], { taintedBy: [q.id] });
    expect(verifyCoverage([q.asArchived(), ...tainted]).tainted).to.deep.equal([tainted[1]!.id]);
  });

  it('reports events read back repaired from a malformed row, with their problems, without failing the ledger', function () {
    const bad = markMalformed(U('q'), ['text was not a string']);
    const report = verifyCoverage([bad, A('a')]);
    expect(report.malformed).to.deep.equal([{ id: bad.id, problems: ['text was not a string'] }]);
    expect(report.ok).to.equal(true);
  });

  it('coveredIds reads only the string ids of a summary', function () {
    const [, summary] = summaryOf(['a', 'b']);
    expect(coveredIds(summary!)).to.deep.equal(['a', 'b']);
    expect(coveredIds(event(Messages.assistant('x'), { metadata: { coveredEventIds: ['a', 3, null] } }))).to.deep.equal(['a']);
    expect(coveredIds(event(Messages.assistant('x'), { metadata: { coveredEventIds: 'a' } }))).to.deep.equal([]);
  });
});
