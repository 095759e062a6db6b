import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadLocomo, normaliseLocomoEvidence, parseLocomoDate } from '../../benchmarks/src/loaders/loadLocomo.js';
import { convertMiniSweTrajectory } from '../../benchmarks/src/loaders/loadMiniSweAgent.js';
import { loadNeutralFile } from '../../benchmarks/src/loaders/loadRecordedData.js';
import { convertTrajectory } from '../../benchmarks/src/loaders/loadTauBench.js';
import { validateRecordedDataset } from '../../benchmarks/src/recorded/validateRecordedDataset.js';
import { orphanedToolResults } from '../../benchmarks/src/metrics/orphanedToolResults.js';
import { toMessage } from '../../benchmarks/src/recorded/toMessage.js';
import { runCli } from '../cli/support/runCli.js';

describe('bench: LoCoMo loader', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'locomo-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('normalises the malformed evidence strings found in the data', () => {
    expect(normaliseLocomoEvidence('D8:6; D9:17')).to.deep.equal(['D8:6', 'D9:17']);
    expect(normaliseLocomoEvidence('D9:1 D4:4 D4:6')).to.deep.equal(['D9:1', 'D4:4', 'D4:6']);
    expect(normaliseLocomoEvidence('D:11:26')).to.deep.equal(['D11:26']);
    expect(normaliseLocomoEvidence('D30:05')).to.deep.equal(['D30:5']);
    expect(normaliseLocomoEvidence('D')).to.deep.equal([]);
  });

  it('parses session dates to ISO without a timezone', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).to.equal('2023-05-08T13:56:00');
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).to.equal('2023-09-13T00:09:00');
    expect(parseLocomoDate('sometime')).to.equal(undefined);
  });

  function writeConversation(): string {
    const file = join(dir, 'locomo.json');
    const turn = (speaker: string, n: number, k: number, text: string, extra: Record<string, unknown> = {}) => ({
      speaker,
      dia_id: `D${n}:${k}`,
      text,
      ...extra,
    });
    writeFileSync(
      file,
      JSON.stringify([
        {
          sample_id: 'conv-x',
          conversation: {
            speaker_a: 'Ann',
            speaker_b: 'Bob',
            // Numeric order matters: session_10 must come after session_2.
            session_10_date_time: '1:00 pm on 3 June, 2023',
            session_10: [turn('Bob', 10, 1, 'ten')],
            session_1_date_time: '1:56 pm on 8 May, 2023',
            session_1: [turn('Ann', 1, 1, 'hi'), turn('Bob', 1, 2, 'look', { blip_caption: 'a cat' })],
            session_2_date_time: '2:00 pm on 9 May, 2023',
            session_2: [turn('Ann', 2, 1, 'two')],
            session_3_date_time: '3:00 pm on 10 May, 2023',
          },
          qa: [
            { question: 'q1', answer: 2022, evidence: ['D1:2; D10:1'], category: 1 },
            { question: 'q5', adversarial_answer: 'a dog', evidence: ['D2:1', 'D9:9'], category: 5 },
          ],
        },
      ]),
    );
    return file;
  }

  it('flattens sub-sessions in numeric order and maps evidence through the index map', () => {
    const [session] = loadLocomo(writeConversation()).sessions;
    expect(session!.events.map((e) => e.content)).to.deep.equal(['hi', 'look [shares image: a cat]', 'two', 'ten']);
    expect(session!.events.map((e) => e.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
    expect(session!.events[0]!.timestamp).to.equal('2023-05-08T13:56:00');
    expect(session!.probes![0]).to.deep.include({ answer: '2022', evidenceEventIndexes: [1, 3], category: 'multi-hop' });
    expect(session!.probes![1]).to.deep.include({
      answer: 'Not mentioned in the conversation',
      distractor: 'a dog',
      evidenceEventIndexes: [2],
      category: 'adversarial',
    });
  });

  it("starts each turn with its speaker's name when asked, keeping evidence and probes in place", () => {
    const plain = loadLocomo(writeConversation()).sessions[0]!;
    const named = loadLocomo(writeConversation(), { speakerNames: true }).sessions[0]!;
    expect(named.events.map((e) => e.content)).to.deep.equal(plain.events.map((e) => `${e.name}: ${e.content}`));
    expect(named.probes).to.deep.equal(plain.probes);
  });

  it('moves every evidence index when date headers are inserted', () => {
    const [session] = loadLocomo(writeConversation(), { dateHeaders: true }).sessions;
    expect(session!.events[0]).to.deep.include({ role: 'system', content: 'DATE: 1:56 pm on 8 May, 2023' });
    expect(session!.probes![0]!.evidenceEventIndexes).to.deep.equal([2, 6]);
    expect(session!.events[2]!.content).to.equal('look [shares image: a cat]');
  });
});

describe('bench: τ-bench and mini-swe-agent converters', () => {
  it('maps a τ-bench trajectory and derives probes from the stated action arguments only', () => {
    const session = convertTrajectory(
      {
        task_id: 3,
        trial: 1,
        reward: 1,
        info: {
          task: {
            user_id: 'ann_1',
            actions: [{ name: 'cancel_reservation', kwargs: { reservation_id: 'ZX12AB', reason: 'unstated reason' } }],
          },
        },
        traj: [
          { role: 'system', content: 'policy' },
          { role: 'user', content: 'Cancel ZX12AB please' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ZX12AB"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', name: 'cancel_reservation', content: '{"status":"cancelled","id":"ZX12AB"}' },
        ],
      },
      'test',
    );
    expect(session.sessionId).to.equal('tau-airline-gpt4o-t3-r1');
    expect(session.events[2]).to.deep.include({
      content: '',
      toolCalls: [{ id: 'c1', name: 'cancel_reservation', arguments: '{"reservation_id":"ZX12AB"}' }],
    });
    expect(session.probes).to.deep.equal([
      {
        question: 'What reservation_id is needed for cancel_reservation?',
        answer: 'ZX12AB',
        evidenceEventIndexes: [1, 3],
        category: 'reservation_id',
      },
    ]);
  });

  it('turns the mini-swe-agent exit record into the result of the dangling submit call', () => {
    const call = (id: string, command: string) => ({
      id,
      type: 'function',
      function: { name: 'bash', arguments: JSON.stringify({ command }) },
    });
    const patch = 'diff --git a/src/app.py b/src/app.py\n+fix';
    const session = convertMiniSweTrajectory(
      {
        instance_id: 'org__repo-1',
        info: { exit_status: 'Submitted', submission: patch, model_stats: { instance_cost: 0.1, api_calls: 2 } },
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'fix it' },
          {
            role: 'assistant',
            content: 'look',
            tool_calls: [call('a', 'cat src/app.py')],
            extra: { timestamp: 1700000000, response: { created: 1700000000 } },
          },
          { role: 'tool', tool_call_id: 'a', content: '<output>src/app.py contents</output>', extra: { timestamp: 1700000001 } },
          { role: 'assistant', content: 'submit', tool_calls: [call('b', 'cat patch.txt')], extra: { timestamp: 1700000002 } },
          { role: 'exit', content: patch, extra: {} },
        ],
      },
      'run1',
      true,
      'test',
    );
    expect(session.sessionId).to.equal('run1/org__repo-1');
    expect(session.events.at(-1)).to.deep.equal({ role: 'tool', content: patch, toolCallId: 'b', name: 'bash' });
    expect(orphanedToolResults(session.events.map(toMessage))).to.equal(0);
    expect(session.events[0]!.timestamp).to.equal('2023-11-14T22:13:20.000Z');
    expect(session.probes).to.deep.equal([
      {
        question: 'Which file did the fix modify?',
        answer: 'src/app.py',
        evidenceEventIndexes: [3, 5],
        category: 'patched-file',
      },
    ]);
    expect(session.meta).to.deep.include({ resolved: true, submission: patch });
  });
});

describe('bench: neutral format validation', () => {
  it('reports every problem with its JSON path in one error', () => {
    const bad = {
      sessions: [
        {
          sessionId: 's1',
          events: [
            { role: 'robot', content: 'x' },
            { role: 'tool', content: 3 },
          ],
          probes: [{ question: 'q', answer: 'a', evidenceEventIndexes: [5] }],
        },
        { sessionId: 's1', events: [] },
      ],
    };
    expect(() => validateRecordedDataset(bad))
      .to.throw()
      .that.satisfies((e: Error) => {
        expect(e.name).to.equal('InvalidArgumentError');
        expect(e.message).to.include('sessions[0].events[0].role must be one of user, assistant, tool, system (got "robot")');
        expect(e.message).to.include('sessions[0].events[1].content must be a string (got number)');
        expect(e.message).to.include('sessions[0].events[1].toolCallId must be a non-empty string on tool events');
        expect(e.message).to.include('sessions[0].probes[0].evidenceEventIndexes[0] must be an integer in [0, 1] (got number)');
        expect(e.message).to.include('sessions[1].sessionId "s1" is a duplicate');
        return true;
      });
  });

  it('accepts a bare array of sessions and names the dataset after the default', () => {
    const dataset = validateRecordedDataset([{ sessionId: 'a', events: [{ role: 'user', content: 'hi' }] }], 'mine');
    expect(dataset.name).to.equal('mine');
    expect(dataset.sessions).to.have.length(1);
  });

  it('reads a JSON Lines export of the admin CLI: one session per line, named after the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-export-'));
    try {
      copyFileSync(new URL('../fixtures/sqlite-v1.db', import.meta.url), join(dir, 'store.db'));
      const exported = await runCli('export', '--url', `sqlite:${join(dir, 'store.db')}`, '--out', join(dir, 'mine.jsonl'));
      expect(exported.code, exported.stderr).to.equal(0);
      const dataset = loadNeutralFile(join(dir, 'mine.jsonl'));
      expect(dataset.name).to.equal('mine');
      expect(dataset.sessions.map((s) => s.sessionId).sort()).to.include.members(['fixture-plain', 'fixture-tools']);
      writeFileSync(join(dir, 'broken.jsonl'), `${readFileSync(join(dir, 'mine.jsonl'), 'utf8')}{"sessionId":\n`);
      expect(() => loadNeutralFile(join(dir, 'broken.jsonl'))).to.throw(/broken\.jsonl:\d+ is not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads the shipped sample, whose every tool result has its call', () => {
    const dataset = loadNeutralFile(new URL('../../benchmarks/data/recorded-sample.json', import.meta.url).pathname);
    expect(dataset.sessions.length).to.be.greaterThan(0);
    for (const s of dataset.sessions) {
      expect(s.probes?.length ?? 0, s.sessionId).to.be.greaterThan(0);
      expect(orphanedToolResults(s.events.map(toMessage)), s.sessionId).to.equal(0);
    }
  });
});
