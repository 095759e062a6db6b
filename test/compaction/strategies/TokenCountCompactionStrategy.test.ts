import { expect } from 'chai';
import {
  InvalidArgumentError,
  Messages,
  SessionEvent,
  TiktokenTokenCountEstimator,
  TokenCountCompactionStrategy,
  formatEvent,
  type CompactionRequest,
} from 'session-compaction';
import {
  A,
  CharEstimator,
  SA,
  SU,
  TC,
  TR,
  U,
  compactionRequest,
  event,
  expectRejects,
  expectThrows,
  texts,
} from '../../support/fixtures.js';
import { call, result } from '../../support/beyondEvents.js';

// These scenarios assert the 'never' cut, which is an explicit option since 'agent-safe' became the default.
const tokenCount = (maxTokens: number) =>
  new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: new CharEstimator(), cutWithinTurn: 'never' });
const run = (maxTokens: number, events: Parameters<typeof compactionRequest>[0]) =>
  tokenCount(maxTokens).compact(compactionRequest(events));

describe('TokenCountCompactionStrategy with the CHAR estimator', function () {
  it('56: a window under budget is a no-op', async function () {
    const r = await run(100, [U('hi'), A('hello')]);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(r.compactedEvents).to.have.length(2);
  });

  it('57: keeps the newest suffix that fits (13 + 8 = 21 <= 25; +13 = 34 > 25)', async function () {
    const r = await run(25, [U('u1'), A('a1'), U('u2'), A('a2')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['u2', 'a2']);
    expect(r.archivedEvents).to.have.length(2);
  });

  it('58: the scan stops at the first event over budget — no skipping', async function () {
    const r = await run(10, [U('u1'), A('a1_very_large_text_here'), U('u2')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['u2']);
    expect(texts(r.archivedEvents)).to.deep.equal(['u1', 'a1_very_large_text_here']);
  });

  it('59: when the newest event alone exceeds the budget the whole window is archived', async function () {
    const r = await run(4, [U('u1'), A('a1'), U('u2_longtxt'), A('a2')]);
    expect(r.compactedEvents).to.deep.equal([]);
    expect(r.archivedEvents).to.have.length(4);
  });

  it('60: a fitting suffix that starts mid-turn snaps to the end, archiving everything', async function () {
    const r = await run(6, [U('aaaa'), A('bbbb'), U('cccc'), A('dddd'), U('eeee'), A('ffff')]);
    expect(r.compactedEvents).to.deep.equal([]);
    expect(texts(r.archivedEvents)).to.deep.equal(['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee', 'ffff']);
  });

  it('61: synthetic cost can make the budget negative: only the synthetic pair stays', async function () {
    const r = await run(1, [SU('shadow'), SA('summary'), U('hello'), A('world')]);
    expect(r.compactedEvents[0]!.isSynthetic()).to.equal(true);
    expect(r.compactedEvents[1]!.isSynthetic()).to.equal(true);
    expect(r.compactedEvents[1]!.text).to.equal('summary');
    expect(texts(r.compactedEvents)).to.deep.equal(['shadow', 'summary']);
    expect(texts(r.archivedEvents)).to.deep.equal(['hello', 'world']);
  });

  it('62: maxTokens 0 throws "maxTokens must be greater than 0"; compact(null) rejects; empty is a no-op', async function () {
    expectThrows(
      () => new TokenCountCompactionStrategy({ maxTokens: 0 }),
      InvalidArgumentError,
      'maxTokens must be greater than 0',
    );
    await expectRejects(tokenCount(10).compact(null as unknown as CompactionRequest), InvalidArgumentError);
    const r = await run(10, []);
    expect(r.compactedEvents).to.deep.equal([]);
    expect(r.archivedEvents).to.deep.equal([]);
    expect(new TokenCountCompactionStrategy().getMaxTokens()).to.equal(4000);
  });

  it('63: a raw cut on a branch event snaps forward to the next root user', async function () {
    const r = await run(40, [U('u1'), A('a1'), U('u2', 'sub'), A('a2', 'sub'), U('u3'), A('a3')]);
    expect(texts(r.compactedEvents)).to.deep.equal(['u3', 'a3']);
    expect(r.archivedEvents).to.have.length(4);
  });

  // The scenario counts with cl100k_base (42 tokens in all, so 40 forces a cut). Under the port's
  // default o200k_base the same five events cost exactly 40 and fit, so the scenario pins cl100k_base.
  it('64: tool events are not free (counted with cl100k_base)', async function () {
    const estimator = new TiktokenTokenCountEstimator({ encoding: 'cl100k_base' });
    const r = await new TokenCountCompactionStrategy({ maxTokens: 40, tokenCountEstimator: estimator }).compact(
      compactionRequest([U("What's the weather?"), TC(), TR(), U('Thanks'), A("You're welcome")]),
    );
    expect(r.archivedEvents.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(r.tokensEstimatedSaved).to.equal(r.archivedEvents.reduce((n, e) => n + estimator.estimate(formatEvent(e)), 0));
    expect(r.tokensEstimatedSaved).to.be.greaterThan(0);
  });

  it('64 (o200k_base default): a budget one token under the total archives the tool exchange too', async function () {
    const events = [U("What's the weather?"), TC(), TR(), U('Thanks'), A("You're welcome")];
    const estimator = new TiktokenTokenCountEstimator();
    const total = events.reduce((n, e) => n + estimator.estimate(formatEvent(e)), 0);
    const r = await new TokenCountCompactionStrategy({ maxTokens: total - 1 }).compact(compactionRequest(events));
    expect(r.archivedEvents).to.have.length(3);
    expect(r.tokensEstimatedSaved).to.be.greaterThan(0);
  });

  it('65: a leading preamble is archived even under budget (cutWithinTurn never)', async function () {
    const r = await run(1000, [A('preamble'), U('u1'), A('a1')]);
    expect(texts(r.archivedEvents)).to.deep.equal(['preamble']);
    expect(texts(r.compactedEvents)).to.deep.equal(['u1', 'a1']);
  });

  it('tokensEstimatedSaved is the CHAR cost of the archived events', async function () {
    const r = await run(25, [U('u1'), A('a1'), U('u2'), A('a2')]);
    expect(r.tokensEstimatedSaved).to.equal('User: u1'.length + 'Assistant: a1'.length);
  });
});

describe('TokenCountCompactionStrategy: what the budget pays for', function () {
  const chars = new CharEstimator();
  const strategy = (maxTokens: number, cutWithinTurn?: 'tool-pair-safe') =>
    new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: chars, ...(cutWithinTurn ? { cutWithinTurn } : {}) });
  /** A user / assistant event costing exactly `n` tokens ("User: " is 6 characters, "Assistant: " 11). */
  const u = (n: number, metadata: Record<string, unknown> = {}) => event(Messages.user('u'.repeat(n - 6)), { metadata });
  const a = (n: number) => event(Messages.assistant('a'.repeat(n - 11)));
  const pinned = { [SessionEvent.METADATA_PINNED]: true };
  const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
  const cost = (events: readonly SessionEvent[]) => events.reduce((n, e) => n + formatEvent(e).length, 0);
  /** One agent turn: a task costing `task` tokens, then `steps` call/result pairs of `stepTokens` each. */
  function agentTurn(task: number, steps: number, stepTokens: number): SessionEvent[] {
    const events = [u(task)];
    for (let i = 0; i < steps; i++) {
      const c = call(`c${i}`, 'f', '{}');
      const resultTokens = stepTokens - formatEvent(c).length;
      const r = result(`c${i}`, '', 'f');
      events.push(c, result(`c${i}`, 'r'.repeat(resultTokens - formatEvent(r).length), 'f'));
    }
    return events;
  }

  it('pinned events are paid for first: the kept suffix gets what they leave of the budget', async function () {
    const events = [u(100, pinned), a(50), u(50), a(50)];
    const r = await strategy(200).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, events[2]!, events[3]!]));
    expect(ids(r.archivedEvents)).to.deep.equal(ids([events[1]!]));
  });

  it('a pinned event inside the kept suffix is passed over, not paid for twice', async function () {
    const events = [u(50), a(50), u(100, pinned), a(50), u(50), a(50)];
    const r = await strategy(300).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events.slice(2)));
    expect(ids(r.archivedEvents)).to.deep.equal(ids(events.slice(0, 2)));
  });

  it('a pinned event held back before the cut is not paid for a second time as a held-back opener', async function () {
    const events = [u(50, pinned), a(50), u(50), a(50), u(50), a(50)];
    const r = await strategy(250).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(2)]));
    expect(cost(r.compactedEvents)).to.equal(250);
  });

  it('an event that exactly fills what is left of the budget is kept', async function () {
    const events = [u(50), a(50), u(50), a(50)];
    const r = await strategy(100, 'tool-pair-safe').compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events.slice(2)));
  });

  it('the task kept by the agent-safe cut is paid for out of the budget: fewer steps stay', async function () {
    const events = agentTurn(60, 6, 100);
    const r = await strategy(350).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(-4)]));
    expect(cost(r.compactedEvents)).to.equal(260);
  });

  it('the task and the latest steps are kept when together they exactly fill the budget', async function () {
    const events = agentTurn(60, 6, 100);
    const r = await strategy(260).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(-4)]));
  });

  it('a pinned step in the kept suffix is not counted again when the task is paid for', async function () {
    const events = agentTurn(60, 6, 100);
    // Pinning the last result pins its call too: both are paid for up front, as pinned events.
    events[events.length - 1] = event(events.at(-1)!.message, { metadata: pinned });
    const r = await strategy(260).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids([events[0]!, ...events.slice(-4)]));
  });

  it('when the task and the latest step cannot both fit, the budget wins: the task goes, the step stays', async function () {
    const events = agentTurn(100, 3, 150);
    const r = await strategy(200).compact(compactionRequest(events));
    expect(ids(r.compactedEvents)).to.deep.equal(ids(events.slice(-2)));
  });
});
