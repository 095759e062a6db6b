import { expect } from 'chai';
import {
  CompactionRequest,
  CompositeCompactionTrigger,
  ContextWindowTrigger,
  IdleTimeTrigger,
  InvalidArgumentError,
  ObservationMaskingCompactionStrategy,
  Session,
  TokenCountTrigger,
  TokenGrowthTrigger,
  contextWindowOf,
  registerModelContextWindows,
  Messages,
} from 'session-compaction';
import { BUILT_IN_MODEL_CONTEXT_WINDOWS, METADATA_TOKEN_CALIBRATION } from 'session-compaction/spi';
import { clearRegisteredModelContextWindows } from '../../../src/compaction/modelContextWindows.js';
import { A, CharEstimator, SA, SU, U, compactionRequest, event, expectThrows, fixtureSession } from '../../support/fixtures.js';
import { call, long, result } from '../../support/beyondEvents.js';

const est = new CharEstimator();
/** One user event costing exactly `n` tokens with the character estimator ("User: " is 6). */
const sized = (n: number) => U('x'.repeat(n - 6));

describe('ContextWindowTrigger', function () {
  it('fires at thresholdRatio (default 0.7) of the context window', function () {
    const t = new ContextWindowTrigger({ contextWindowTokens: 1000, tokenCountEstimator: est });
    expect(t.thresholdTokens).to.equal(700);
    expect(t.shouldCompact(compactionRequest([sized(699)]))).to.equal(false);
    expect(t.shouldCompact(compactionRequest([sized(700)]))).to.equal(true);
  });

  it('subtracts the reply reserve from the budget and adds the system prompt and tool schemas to the input', function () {
    const t = new ContextWindowTrigger({
      contextWindowTokens: 1000,
      thresholdRatio: 0.5,
      reserveTokens: 200,
      systemPromptTokens: 150,
      toolSchemaTokens: 50,
      tokenCountEstimator: est,
    });
    expect(t.thresholdTokens).to.equal(400);
    expect(t.inputTokens(compactionRequest([sized(199)]))).to.equal(399);
    expect(t.shouldCompact(compactionRequest([sized(199)]))).to.equal(false);
    expect(t.shouldCompact(compactionRequest([sized(200)]))).to.equal(true);
    expect(t.contextPressure(compactionRequest([sized(200)]))).to.equal(0.5);
  });

  it('never fires below the minTokens floor, however small the window', function () {
    const t = new ContextWindowTrigger({ contextWindowTokens: 100, minTokens: 500, tokenCountEstimator: est });
    expect(t.thresholdTokens).to.equal(500);
    expect(t.shouldCompact(compactionRequest([sized(90)]))).to.equal(false);
  });

  it("applies the session's calibration ratio to the window tokens", function () {
    const t = new ContextWindowTrigger({ contextWindowTokens: 1000, tokenCountEstimator: est });
    const session = Session.create({
      id: 'test-session',
      userId: 'u',
      metadata: { [METADATA_TOKEN_CALIBRATION]: { ratio: 1.5, samples: 3 } },
    });
    expect(t.shouldCompact(compactionRequest([sized(500)]))).to.equal(false);
    expect(t.shouldCompact(CompactionRequest.of(session, [sized(500)]))).to.equal(true);
  });

  it('looks the window up by model name, including dated and provider-prefixed names', function () {
    expect(new ContextWindowTrigger({ model: 'gpt-4o' }).contextWindowTokens).to.equal(128_000);
    expect(new ContextWindowTrigger({ model: 'gpt-4o-mini-2024-07-18' }).contextWindowTokens).to.equal(128_000);
    expect(new ContextWindowTrigger({ model: 'openai/gpt-4' }).contextWindowTokens).to.equal(8_192);
    expect(new ContextWindowTrigger({ model: 'claude-3-5-sonnet-20241022' }).contextWindowTokens).to.equal(200_000);
    expect(new ContextWindowTrigger({ model: 'deepseek/deepseek-chat' }).thresholdTokens).to.equal(89_600);
  });

  it('rejects an unknown model, saying how to extend the table', function () {
    const error = expectThrows(
      () => new ContextWindowTrigger({ model: 'gpt-4.5-preview' }),
      InvalidArgumentError,
      'Unknown model "gpt-4.5-preview"',
    );
    expect(error.message).to.contain('registerModelContextWindows').and.to.contain('contextWindowTokens');
  });

  it('accepts user entries: per trigger, or registered for the whole process', function () {
    expect(new ContextWindowTrigger({ model: 'my-llama', contextWindows: { 'my-llama': 4096 } }).contextWindowTokens).to.equal(
      4096,
    );
    registerModelContextWindows({ 'my-llama': 8192, 'gpt-4o': 64_000 });
    try {
      expect(contextWindowOf('my-llama')).to.equal(8192);
      expect(contextWindowOf('gpt-4o-2024-08-06')).to.equal(64_000);
      expect(contextWindowOf('my-llama', { 'my-llama': 1024 })).to.equal(1024);
    } finally {
      clearRegisteredModelContextWindows();
    }
    expect(contextWindowOf('gpt-4o')).to.equal(BUILT_IN_MODEL_CONTEXT_WINDOWS['gpt-4o']);
  });

  it('validates its options', function () {
    expectThrows(() => new ContextWindowTrigger({}), InvalidArgumentError, 'contextWindowTokens or model must be given');
    expectThrows(
      () => new ContextWindowTrigger({ contextWindowTokens: 0 }),
      InvalidArgumentError,
      'contextWindowTokens must be greater than 0',
    );
    expectThrows(
      () => new ContextWindowTrigger({ contextWindowTokens: 10, thresholdRatio: 1.5 }),
      InvalidArgumentError,
      'thresholdRatio',
    );
    expectThrows(
      () => new ContextWindowTrigger({ contextWindowTokens: 10, minTokens: -1 }),
      InvalidArgumentError,
      'minTokens must be a non-negative integer',
    );
    expectThrows(
      () => new ContextWindowTrigger({ contextWindowTokens: 1000, reserveTokens: 600, systemPromptTokens: 400 }),
      InvalidArgumentError,
      'must be less than contextWindowTokens (1000)',
    );
    expectThrows(() => registerModelContextWindows({ x: 0 }), InvalidArgumentError, 'context window of x must be greater than 0');
  });
});

describe('IdleTimeTrigger', function () {
  const at = (iso: string) => new Date(iso);
  const u = (iso: string) => event(Messages.user('hi'), { timestamp: at(iso) });

  it('fires once the newest event is idleMs old, not before', function () {
    const t = new IdleTimeTrigger({ idleMs: 60_000, now: () => at('2024-01-01T00:02:00Z') });
    expect(t.shouldCompact(compactionRequest([u('2024-01-01T00:00:00Z'), u('2024-01-01T00:01:00Z')]))).to.equal(true);
    expect(t.shouldCompact(compactionRequest([u('2024-01-01T00:00:00Z'), u('2024-01-01T00:01:30Z')]))).to.equal(false);
  });

  it('ignores synthetic summaries (written by compactions, not by the conversation) and never fires on an empty window', function () {
    const t = new IdleTimeTrigger({ idleMs: 60_000, now: () => at('2024-01-01T00:02:00Z') });
    const summary = event(Messages.assistant('summary'), {
      timestamp: at('2024-01-01T00:01:59Z'),
      metadata: { synthetic: true },
    });
    expect(t.shouldCompact(compactionRequest([u('2024-01-01T00:00:00Z'), summary]))).to.equal(true);
    expect(t.shouldCompact(compactionRequest([]))).to.equal(false);
    expect(t.idleFor(compactionRequest([summary]))).to.equal(null);
  });

  it('composes: idle AND large', async function () {
    const now = () => at('2024-01-01T01:00:00Z');
    const both = CompositeCompactionTrigger.allOf(
      new IdleTimeTrigger({ idleMs: 1000, now }),
      new TokenCountTrigger({ threshold: 100, tokenCountEstimator: est }),
    );
    const small = event(Messages.user('hi'), { timestamp: at('2024-01-01T00:00:00Z') });
    const big = event(Messages.user('x'.repeat(200)), { timestamp: at('2024-01-01T00:00:00Z') });
    expect(await both.shouldCompact(compactionRequest([small]))).to.equal(false);
    expect(await both.shouldCompact(compactionRequest([big]))).to.equal(true);
  });

  it('validates its options', function () {
    expectThrows(() => new IdleTimeTrigger({ idleMs: 0 }), InvalidArgumentError, 'idleMs must be greater than 0');
    expectThrows(() => new IdleTimeTrigger(null as never), InvalidArgumentError, 'options must not be null');
  });
});

describe('TokenGrowthTrigger', function () {
  it('counts the whole window of a never-compacted session', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    expect(t.shouldCompact(compactionRequest([sized(60)]))).to.equal(false);
    expect(t.shouldCompact(compactionRequest([sized(60), sized(40)]))).to.equal(true);
  });

  it('after firing, counts only what was appended after the window it fired on', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const window = [sized(80), sized(80)];
    expect(t.shouldCompact(compactionRequest(window))).to.equal(true);
    // A compaction kept the last event; 90 new tokens are not enough, 100 are.
    const kept = [window[1]!];
    expect(t.shouldCompact(compactionRequest([...kept, sized(90)]))).to.equal(false);
    expect(t.shouldCompact(compactionRequest([...kept, sized(90), sized(10)]))).to.equal(true);
  });

  it('without an anchor, counts from the newest summary', function () {
    const t = new TokenGrowthTrigger({ tokens: 100, tokenCountEstimator: est });
    const big = sized(500);
    expect(t.growth(compactionRequest([big, SU(), SA('s'), sized(50)]))).to.equal(50);
  });

  it('finds its anchor through a masked copy of it', async function () {
    const t = new TokenGrowthTrigger({ tokens: 10, tokenCountEstimator: est });
    const window = [call('c1'), result('c1', long('r', 3000))];
    expect(t.shouldCompact(compactionRequest(window))).to.equal(true);
    const next = [...window, A('answered')];
    const masked = (await new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }).compact(compactionRequest(next)))
      .compactedEvents;
    expect(t.growth(compactionRequest(masked))).to.equal('Assistant: answered'.length);
  });

  it('validates its options', function () {
    expectThrows(() => new TokenGrowthTrigger({ tokens: 0 }), InvalidArgumentError, 'tokens must be greater than 0');
    expectThrows(() => new TokenGrowthTrigger({ tokens: 1, maxTrackedSessions: 0 }), InvalidArgumentError, 'maxTrackedSessions');
  });

  it('is composable with the other triggers', async function () {
    const any = CompositeCompactionTrigger.anyOf(
      new TokenGrowthTrigger({ tokens: 1000, tokenCountEstimator: est }),
      new ContextWindowTrigger({ contextWindowTokens: 100, tokenCountEstimator: est }),
    );
    expect(await any.shouldCompact(CompactionRequest.of(fixtureSession(), [sized(80)]))).to.equal(true);
    expect(await any.shouldCompact(CompactionRequest.of(fixtureSession(), [sized(60)]))).to.equal(false);
  });
});
