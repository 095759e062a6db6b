import { expect } from 'chai';
import {
  CompactionRequest,
  CompositeCompactionTrigger,
  InvalidArgumentError,
  Messages,
  TokenCountTrigger,
  TurnCountTrigger,
  formatEvent,
  type TokenCountEstimator,
} from 'session-compaction';
import {
  A,
  CharEstimator,
  SA,
  SU,
  TC,
  U,
  compactionRequest,
  expectRejects,
  expectThrows,
  event,
} from '../../support/fixtures.js';

const turns = (n: number) => Array.from({ length: n }, (_, i) => [U(`q${i + 1}`), A(`a${i + 1}`)]).flat();

describe('TurnCountTrigger', function () {
  it('8: maxTurns 5 with 3 turns does not fire', function () {
    expect(new TurnCountTrigger(5).shouldCompact(compactionRequest(turns(3)))).to.equal(false);
  });

  it('9: maxTurns 3 with exactly 3 turns does not fire (strictly greater required)', function () {
    expect(new TurnCountTrigger(3).shouldCompact(compactionRequest(turns(3)))).to.equal(false);
  });

  it('10: maxTurns 3 with 4 turns fires', function () {
    expect(new TurnCountTrigger(3).shouldCompact(compactionRequest(turns(4)))).to.equal(true);
  });

  it('11: maxTurns 3 over an empty window does not fire', function () {
    expect(new TurnCountTrigger(3).shouldCompact(compactionRequest([]))).to.equal(false);
  });

  it('12: synthetic pairs are not turns — maxTurns 2 with five summary pairs and 2 real turns does not fire', function () {
    const summaries = Array.from({ length: 5 }, (_, i) => [SU(), SA(`summary-${i}`)]).flat();
    expect(new TurnCountTrigger(2).shouldCompact(compactionRequest([...summaries, ...turns(2)]))).to.equal(false);
  });

  it('13: maxTurns 0 or -1 throws InvalidArgumentError "maxTurns must be greater than 0"', function () {
    expectThrows(() => new TurnCountTrigger(0), InvalidArgumentError, 'maxTurns must be greater than 0');
    expectThrows(() => new TurnCountTrigger(-1), InvalidArgumentError, 'maxTurns must be greater than 0');
  });

  it('14: getMaxTurns returns the configured value', function () {
    expect(new TurnCountTrigger(7).getMaxTurns()).to.equal(7);
  });
});

describe('TokenCountTrigger with the CHAR estimator', function () {
  const trigger = (threshold: number) => new TokenCountTrigger({ threshold, tokenCountEstimator: new CharEstimator() });

  it('15: "User: hello" (11) + "Assistant: world" (16) = 27 reaches threshold 27 (>=)', function () {
    expect(trigger(27).shouldCompact(compactionRequest([U('hello'), A('world')]))).to.equal(true);
  });

  it('16: 28 characters exceed threshold 27', function () {
    expect(trigger(27).shouldCompact(compactionRequest([U('hello'), A('world!')]))).to.equal(true);
  });

  it('17: 8 + 13 = 21 stays under threshold 22', function () {
    expect(trigger(22).shouldCompact(compactionRequest([U('hi'), A('ok')]))).to.equal(false);
  });

  it('18: an empty window does not fire', function () {
    expect(trigger(10).shouldCompact(compactionRequest([]))).to.equal(false);
  });

  it('19: four short events (42) reach threshold 35', function () {
    expect(trigger(35).shouldCompact(compactionRequest([U('ab'), A('cd'), U('ef'), A('gh')]))).to.equal(true);
  });

  it('20: threshold 0/-1 and a null estimator throw; getThreshold returns the threshold', function () {
    const est = new CharEstimator();
    expectThrows(
      () => new TokenCountTrigger({ threshold: 0, tokenCountEstimator: est }),
      InvalidArgumentError,
      'threshold must be greater than 0',
    );
    expectThrows(
      () => new TokenCountTrigger({ threshold: -1, tokenCountEstimator: est }),
      InvalidArgumentError,
      'threshold must be greater than 0',
    );
    expectThrows(
      () => new TokenCountTrigger({ threshold: 100, tokenCountEstimator: null as unknown as TokenCountEstimator }),
      InvalidArgumentError,
      'tokenCountEstimator must not be null',
    );
    expect(new TokenCountTrigger({ threshold: 500, tokenCountEstimator: est }).getThreshold()).to.equal(500);
  });

  it('20 (port): without an estimator the trigger defaults to the js-tiktoken one instead of throwing', function () {
    const t = new TokenCountTrigger({ threshold: 1 });
    expect(t.tokenCountEstimator.estimate('hello world')).to.be.greaterThan(0);
    expect(t.shouldCompact(compactionRequest([U('hello')]))).to.equal(true);
  });

  it('21: a tool call is counted through formatEvent, not as 0 tokens', function () {
    const tc = TC();
    const rendered = 'Assistant [tool calls: get_weather({"location":"Paris"})]';
    expect(formatEvent(tc)).to.equal(rendered);
    expect(trigger(rendered.length).shouldCompact(compactionRequest([tc]))).to.equal(true);
    expect(trigger(rendered.length + 1).shouldCompact(compactionRequest([tc]))).to.equal(false);
  });

  it('counts synthetic events too', function () {
    const summary = SA('x'.repeat(50));
    expect(trigger(55).shouldCompact(compactionRequest([summary]))).to.equal(true);
  });
});

describe('CompositeCompactionTrigger', function () {
  const req = () => compactionRequest([U('q')]);

  it('22: anyOf is true when one member is true and false when all are false', async function () {
    expect(
      await CompositeCompactionTrigger.anyOf(
        () => false,
        () => true,
      ).shouldCompact(req()),
    ).to.equal(true);
    expect(
      await CompositeCompactionTrigger.anyOf(
        () => false,
        () => false,
      ).shouldCompact(req()),
    ).to.equal(false);
  });

  it('22: anyOf() and allOf() with no triggers throw "triggers must not be empty"', function () {
    expectThrows(() => CompositeCompactionTrigger.anyOf(), InvalidArgumentError, 'triggers must not be empty');
    expectThrows(() => CompositeCompactionTrigger.allOf(), InvalidArgumentError, 'triggers must not be empty');
  });

  it('22: anyOf stops evaluating at the first true member', async function () {
    const calls: string[] = [];
    const t = CompositeCompactionTrigger.anyOf(
      () => (calls.push('first'), false),
      () => (calls.push('second'), true),
      () => (calls.push('third'), true),
    );
    expect(await t.shouldCompact(req())).to.equal(true);
    expect(calls).to.deep.equal(['first', 'second']);
  });

  it('allOf is true only when every member is true, and stops at the first false', async function () {
    const calls: string[] = [];
    const t = CompositeCompactionTrigger.allOf(
      () => (calls.push('first'), true),
      () => (calls.push('second'), false),
      () => (calls.push('third'), true),
    );
    expect(await t.shouldCompact(req())).to.equal(false);
    expect(calls).to.deep.equal(['first', 'second']);
    expect(
      await CompositeCompactionTrigger.allOf(
        () => true,
        () => true,
      ).shouldCompact(req()),
    ).to.equal(true);
  });

  it('accepts trigger objects and functions together', async function () {
    const many = compactionRequest(turns(4));
    expect(
      await CompositeCompactionTrigger.allOf(new TurnCountTrigger(3), (r) => r.currentEventCount === 8).shouldCompact(many),
    ).to.equal(true);
    expect(await CompositeCompactionTrigger.allOf(new TurnCountTrigger(5), () => true).shouldCompact(many)).to.equal(false);
  });

  it('awaits async members: a Promise resolving to false is false, not a truthy object', async function () {
    const later = (value: boolean) => () => new Promise<boolean>((resolve) => setTimeout(() => resolve(value), 5));
    expect(await CompositeCompactionTrigger.anyOf(later(false), later(false)).shouldCompact(req())).to.equal(false);
    expect(await CompositeCompactionTrigger.anyOf(later(false), later(true)).shouldCompact(req())).to.equal(true);
    expect(await CompositeCompactionTrigger.allOf(later(true), later(false)).shouldCompact(req())).to.equal(false);
  });

  it('short-circuits async members: a later member is not started after an earlier async true (anyOf)', async function () {
    let secondStarted = false;
    const t = CompositeCompactionTrigger.anyOf(
      async () => true,
      async () => {
        secondStarted = true;
        return true;
      },
    );
    expect(await t.shouldCompact(req())).to.equal(true);
    expect(secondStarted).to.equal(false);
  });

  it('a rejecting async member makes the composite reject', async function () {
    const t = CompositeCompactionTrigger.anyOf(async () => {
      throw new InvalidArgumentError('boom');
    });
    await expectRejects(Promise.resolve(t.shouldCompact(req())), InvalidArgumentError, 'boom');
  });

  it('a member that is neither a function nor a trigger is rejected', function () {
    expectThrows(
      () => CompositeCompactionTrigger.anyOf(null as unknown as () => boolean),
      InvalidArgumentError,
      'trigger must not be null',
    );
  });

  it('members see the same request', async function () {
    const seen: CompactionRequest[] = [];
    const r = compactionRequest([event(Messages.system('sys'))]);
    await CompositeCompactionTrigger.allOf(
      (x) => (seen.push(x), true),
      (x) => (seen.push(x), true),
    ).shouldCompact(r);
    expect(seen).to.deep.equal([r, r]);
  });
});
