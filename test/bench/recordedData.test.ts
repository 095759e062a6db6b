import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { loadRecordedData } from '../../benchmarks/src/loaders/loadRecordedData.js';
import { orphanedToolResults } from '../../benchmarks/src/metrics/orphanedToolResults.js';
import type { RecordedDataset } from '../../benchmarks/src/recorded/RecordedSession.js';
import { toMessage } from '../../benchmarks/src/recorded/toMessage.js';
import { skipWithReason } from '../support/services.js';
import { RECORDED_DIR, recordedDataHint } from '../support/recorded.js';

/** The counts the recordings' own documentation states for each source: the loaders must reproduce them exactly. */
describe('bench: loaders on the full recordings (RECORDED_DIR)', function () {
  let datasets: Map<string, RecordedDataset>;

  before(function () {
    if (RECORDED_DIR === undefined || !existsSync(RECORDED_DIR))
      return skipWithReason(this, `recorded data not found (${recordedDataHint})`);
    datasets = new Map(loadRecordedData(RECORDED_DIR).map((d) => [d.name, d]));
  });

  const count = (d: RecordedDataset, f: (s: RecordedDataset['sessions'][number]) => number) =>
    d.sessions.reduce((n, s) => n + f(s), 0);

  it('LoCoMo: 10 conversations, 5,882 turns, 1,986 probes of which 4 have no resolvable evidence', () => {
    const d = datasets.get('locomo')!;
    expect(d.sessions.map((s) => s.sessionId)).to.deep.equal([
      'conv-26',
      'conv-30',
      'conv-41',
      'conv-42',
      'conv-43',
      'conv-44',
      'conv-47',
      'conv-48',
      'conv-49',
      'conv-50',
    ]);
    expect(count(d, (s) => s.events.length)).to.equal(5882);
    expect(count(d, (s) => s.probes!.length)).to.equal(1986);
    expect(count(d, (s) => s.probes!.filter((p) => p.evidenceEventIndexes.length === 0).length)).to.equal(4);
    expect(count(d, (s) => s.probes!.filter((p) => p.category === 'adversarial').length)).to.equal(446);
  });

  it('τ-bench: 200 trajectories, 5,308 messages, 939 derived probes over 155 trajectories', () => {
    const d = datasets.get('tau-bench')!;
    expect(d.sessions).to.have.length(200);
    expect(count(d, (s) => s.events.length)).to.equal(5308);
    expect(count(d, (s) => s.probes!.length)).to.equal(939);
    expect(d.sessions.filter((s) => s.probes!.length > 0)).to.have.length(155);
  });

  it('mini-swe-agent: 53 runs, 8,774 events with every tool call answered, 66 path probes', () => {
    const d = datasets.get('mini-swe-agent')!;
    expect(d.sessions).to.have.length(53);
    expect(count(d, (s) => s.events.length)).to.equal(53 + 53 + 4334 + 4281 + 53);
    expect(count(d, (s) => s.probes!.length)).to.equal(66);
    for (const s of d.sessions) {
      expect(orphanedToolResults(s.events.map(toMessage)), s.sessionId).to.equal(0);
      const calls = s.events.flatMap((e) => e.toolCalls ?? []).map((c) => c.id);
      const answered = new Set(s.events.filter((e) => e.role === 'tool').map((e) => e.toolCallId));
      expect(
        calls.filter((id) => !answered.has(id)),
        s.sessionId,
      ).to.deep.equal([]);
    }
    expect(d.sessions.filter((s) => s.meta!.resolved === true)).to.have.length(8 + 19);
  });
});
