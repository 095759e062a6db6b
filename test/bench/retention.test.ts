import { expect } from 'chai';
import { createDefaultLogger, Messages } from 'session-compaction';
import { CharacterTokenCountEstimator, messageName } from 'session-compaction/spi';
import { ContextSnapshot } from '../../benchmarks/src/metrics/ContextSnapshot.js';
import { EVIDENCE_AGE_EDGES, evidenceAgeGroup, evidenceAgeLabel } from '../../benchmarks/src/metrics/evidenceAge.js';
import type { RecordedEvent, RecordedProbe, RecordedSession } from '../../benchmarks/src/recorded/RecordedSession.js';
import { createDefaultContenderRegistry } from '../../benchmarks/src/registry/defaultContenders.js';
import type { PeerContender, StrategyContender } from '../../benchmarks/src/registry/ContenderRegistry.js';
import { createBenchRepository } from '../../benchmarks/src/replay/createBenchRepository.js';
import { PreparedSession, type ProbeTiming } from '../../benchmarks/src/replay/PreparedSession.js';
import { replayWithPeer, replayWithStrategy, type ReplayContext } from '../../benchmarks/src/replay/replaySession.js';

const logger = createDefaultLogger({ silent: true });
const filler = (n: number) => `Filler turn ${n}: ${'small talk about the weather and nothing in particular. '.repeat(3)}`;

/**
 * Six turns. Turn 1 holds the booking code (probe A) and the city (probe C, whose answer is repeated in
 * turn 6); turn 6 holds the seat preference (probe B). Probe D is adversarial (evidence in turn 1, its
 * abstention answer present nowhere), probe E has no evidence. With a 2-turn window at the end, only
 * turns 5 and 6 are sent, so the right answer is: A lost, B retained verbatim, C retained through its
 * answer only, D lost, E unscored → 2 of 4 retained, 1 verbatim, 2 answers found.
 */
function handMadeSession(): RecordedSession {
  const events: RecordedEvent[] = [
    { role: 'user', content: 'My booking code is QX7781 and I fly from Lisbon.' },
    { role: 'assistant', content: 'Noted, booking QX7781 from Lisbon.' },
  ];
  for (let t = 2; t <= 5; t++) events.push({ role: 'user', content: filler(t) }, { role: 'assistant', content: `Reply ${t}.` });
  events.push(
    { role: 'user', content: 'I prefer an aisle seat. Remember that I leave from lisbon!' },
    { role: 'assistant', content: 'Aisle it is.' },
  );
  const probes: RecordedProbe[] = [
    { question: 'What is the booking code?', answer: 'QX7781', evidenceEventIndexes: [0] },
    { question: 'Which seat?', answer: 'an aisle seat', evidenceEventIndexes: [10] },
    { question: 'Departure city?', answer: 'Lisbon', evidenceEventIndexes: [0, 1] },
    { question: 'What is the return date?', answer: 'Not mentioned', evidenceEventIndexes: [0], distractor: 'Friday' },
    { question: 'Unanswerable?', answer: 'nothing', evidenceEventIndexes: [] },
  ];
  return { sessionId: 'hand-made', events, probes };
}

async function replay(name: string, timing: ProbeTiming, budgetTokens: number, options: Record<string, unknown> = {}) {
  const estimator = new CharacterTokenCountEstimator();
  const session = new PreparedSession('test', handMadeSession(), `retention-${name}-${Math.random()}`, estimator, timing);
  const registry = await createDefaultContenderRegistry();
  const contender = registry.get(name);
  const context: ReplayContext = { budgetTokens, estimator, logger, createRepository: () => createBenchRepository('memory') };
  return contender.kind === 'strategy'
    ? replayWithStrategy(session, contender as StrategyContender, options, context)
    : replayWithPeer(session, contender as PeerContender, options, context);
}

describe('bench: evidence retention metric', () => {
  it('scores a 2-turn window on the hand-made session as 2 of 4 retained, 1 verbatim, 2 answers found', async () => {
    const run = await replay('turn-window', 'end', 200, { maxTurns: 2 });
    expect(run.probesScored).to.equal(4);
    expect(run.probesRetained).to.equal(2);
    expect(run.probesEvidenceVerbatim).to.equal(1);
    expect(run.probesAnswerFound).to.equal(2);
  });

  it('retains every probe when nothing is compacted', async () => {
    const run = await replay('none', 'end', 200);
    expect(run.probesScored).to.equal(4);
    expect(run.probesRetained).to.equal(4);
    expect(run.probesEvidenceVerbatim).to.equal(4);
    expect(run.compactions).to.equal(0);
  });

  it('asks a probe right after its evidence when timed 0 calls after it, before any compaction lost it', async () => {
    const run = await replay('turn-window', 0, 200, { maxTurns: 2 });
    expect(run.probesRetained).to.equal(4);
    expect(run.probesEvidenceVerbatim).to.equal(4);
  });

  it('counts each evidence event and groups it by its age when asked (the lost-in-compaction curve)', async () => {
    const run = await replay('turn-window', 'end', 200, { maxTurns: 2 });
    // Evidence cited: A [0], B [10], C [0, 1], D [0] — five events; only event 10 (B) is in the 2-turn window.
    expect(run.evidenceTurns).to.equal(5);
    expect(run.evidenceTurnsPresent).to.equal(1);
    // Per probe: A 0, B 1, C 0 of 2, D 0.
    expect(run.probeEvidenceShares).to.equal(1);
    // Asked after all 12 events: event 10 is 1 event old, events 0 and 1 are 11 and 10 old — all in the first group.
    expect(run.evidenceByAge[0]).to.deep.equal({ turns: 5, present: 1 });
    expect(run.evidenceByAge.slice(1).every((g) => g.turns === 0)).to.equal(true);
  });

  it('counts the tokens sent at each model call, and the history they stand for', async () => {
    const run = await replay('turn-window', 'end', 200, { maxTurns: 2 });
    // One call before each of the 6 assistant replies, plus the next call after the last event.
    expect(run.tokensSent).to.have.length(7);
    expect(run.fullTokens[6]).to.be.greaterThan(run.tokensSent[6]!);
    expect(run.compactions).to.be.greaterThan(0);
  });
});

describe('bench: evidence age groups', () => {
  it('puts each age in the group of the last edge at or below it, the last group open-ended', () => {
    expect([0, 24, 25, 99, 100, 399, 400, 5000].map(evidenceAgeGroup)).to.deep.equal([0, 0, 1, 2, 3, 4, 5, 5]);
    expect(EVIDENCE_AGE_EDGES.map((_, i) => evidenceAgeLabel(i))).to.deep.equal([
      '0–24',
      '25–49',
      '50–99',
      '100–199',
      '200–399',
      '400+',
    ]);
  });
});

describe('bench: recorded times', () => {
  const dated: RecordedSession = {
    sessionId: 'dated',
    events: [
      { role: 'user', content: 'a', timestamp: '2023-05-08T13:56:00Z' },
      { role: 'assistant', content: 'b', timestamp: '2023-06-09T10:00:00Z' },
    ],
  };

  it('replays events at the times their recording gives them by default', () => {
    const session = new PreparedSession('test', dated, 'dated-1', new CharacterTokenCountEstimator());
    expect(session.events.map((e) => e.timestamp.toISOString())).to.deep.equal([
      '2023-05-08T13:56:00.000Z',
      '2023-06-09T10:00:00.000Z',
    ]);
  });

  it('replays them one second apart without recorded times', () => {
    const session = new PreparedSession('test', dated, 'dated-2', new CharacterTokenCountEstimator(), 'end', false);
    const [a, b] = session.events.map((e) => e.timestamp.getTime());
    expect(b! - a!).to.equal(1000);
    expect(new Date(a!).getUTCFullYear()).to.equal(2024);
  });

  const spoken: RecordedSession = {
    sessionId: 'spoken',
    events: [
      { role: 'user', content: 'a', name: 'Caroline' },
      { role: 'assistant', content: 'b', name: 'Melanie', toolCalls: [{ id: 'c1', name: 'look', arguments: '{}' }] },
      { role: 'tool', content: 'c', toolCallId: 'c1', name: 'look' },
    ],
  };

  it("replays a recorded speaker as the message's name by default, and without it when asked; a tool keeps its name", () => {
    const names = (session: PreparedSession) =>
      session.events.map((e) => (e.message.type === 'tool' ? e.message.responses[0]!.name : messageName(e.message)));
    const estimator = new CharacterTokenCountEstimator();
    expect(names(new PreparedSession('test', spoken, 'spoken-1', estimator))).to.deep.equal(['Caroline', 'Melanie', 'look']);
    expect(names(new PreparedSession('test', spoken, 'spoken-2', estimator, 'end', true, false))).to.deep.equal([
      undefined,
      undefined,
      'look',
    ]);
  });
});

describe('bench: ContextSnapshot', () => {
  const snapshot = new ContextSnapshot([
    Messages.user('We met in PARIS, on 7 May 2023.'),
    Messages.assistant('Parisian cafés are great.'),
  ]);
  const events: RecordedEvent[] = [{ role: 'user', content: 'not in context' }];

  it('finds an answer whatever its case and punctuation', () => {
    expect(snapshot.evaluate({ question: '', answer: 'paris', evidenceEventIndexes: [0] }, events).answerFound).to.equal(true);
    expect(snapshot.evaluate({ question: '', answer: '7 May, 2023', evidenceEventIndexes: [0] }, events).answerFound).to.equal(
      true,
    );
  });

  it('finds a date written in another word order or with an ordinal day', () => {
    for (const answer of ['May 7, 2023', 'May 7th, 2023', '7th of May 2023', 'May 7']) {
      expect(snapshot.evaluate({ question: '', answer, evidenceEventIndexes: [0] }, events).answerFound, answer).to.equal(true);
    }
    expect(snapshot.evaluate({ question: '', answer: 'May 17, 2023', evidenceEventIndexes: [0] }, events).answerFound).to.equal(
      false,
    );
  });

  it('matches answers on whole words only', () => {
    expect(snapshot.evaluate({ question: '', answer: 'Pari', evidenceEventIndexes: [0] }, events).answerFound).to.equal(false);
  });

  it('accepts any of the ;-separated alternatives of an answer', () => {
    expect(snapshot.evaluate({ question: '', answer: 'London; Paris', evidenceEventIndexes: [0] }, events).retained).to.equal(
      true,
    );
  });

  it('counts an evidence event quoted with indented continuation lines as present (layout is not content)', () => {
    const quoted = new ContextSnapshot([
      Messages.user('=== RECALLED ===\n[8 May 2023 13:56] User: first line\n  second line\n=== END ==='),
    ]);
    const multiLine: RecordedEvent[] = [{ role: 'user', content: 'first line\r\nsecond line' }];
    expect(quoted.evaluate({ question: '', answer: 'x', evidenceEventIndexes: [0] }, multiLine).evidencePresent).to.deep.equal([
      { index: 0, present: true },
    ]);
  });

  it('does not count an excerpt of an evidence event as the event (strict evidence)', () => {
    const excerpt = new ContextSnapshot([Messages.user('User: We met in PARIS, […]')]);
    const outcome = excerpt.evaluate({ question: '', answer: 'x', evidenceEventIndexes: [0] }, [
      { role: 'user', content: 'We met in PARIS, on 7 May 2023.' },
    ]);
    expect(outcome.evidencePresent).to.deep.equal([{ index: 0, present: false }]);
    expect(outcome.evidenceVerbatim).to.equal(false);
  });

  it('requires every evidence event verbatim', () => {
    const both: RecordedEvent[] = [
      { role: 'user', content: 'We met in PARIS, on 7 May 2023.' },
      { role: 'user', content: 'absent text' },
    ];
    expect(snapshot.evaluate({ question: '', answer: 'x', evidenceEventIndexes: [0] }, both).evidenceVerbatim).to.equal(true);
    expect(snapshot.evaluate({ question: '', answer: 'x', evidenceEventIndexes: [0, 1] }, both).evidenceVerbatim).to.equal(false);
  });
});
