import { expect } from 'chai';
import sinon from 'sinon';
import {
  CompactionPipeline,
  CompactionRequest,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InvalidArgumentError,
  ObservationMaskingCompactionStrategy,
  Session,
  TokenCountCompactionStrategy,
  createDefaultLogger,
  type CompactionStrategy,
  type CompactionStrategyLike,
  type UsageRecord,
  type SessionEvent,
} from 'session-compaction';
import { METADATA_TOKEN_CALIBRATION, estimateEventsTokens, type StrategySkipReason } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, expectThrows } from '../../support/fixtures.js';
import { call, long, result } from '../../support/beyondEvents.js';

const est = new CharEstimator();
const mask = () => new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est });
const budget = (maxTokens: number) =>
  new TokenCountCompactionStrategy({ maxTokens, tokenCountEstimator: est, cutWithinTurn: 'tool-pair-safe' });
const cost = (events: readonly SessionEvent[]) => estimateEventsTokens(events, est);

/** A tool-heavy window: three consumed results of ~3000 characters and a final turn. */
function agentWindow() {
  return [
    U('investigate'),
    call('c1'),
    result('c1', long('one', 3000)),
    A('step one done'),
    call('c2'),
    result('c2', long('two', 3000)),
    A('step two done'),
    U('now summarise'),
    A('All done.'),
  ];
}

describe('CompactionPipeline', function () {
  it('leaves a window already within maxTokens alone without running any stage', async function () {
    const stage = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const events = [U('hi'), A('hello')];
    const r = await new CompactionPipeline({ stages: [stage], maxTokens: 10_000, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(r.isNoop()).to.equal(true);
    expect(stage.called).to.equal(false);
  });

  it('stops after the first stage that brings the window under budget', async function () {
    const events = agentWindow();
    const later = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const pipeline = new CompactionPipeline({
      stages: [mask(), later],
      maxTokens: cost(events) - 4000,
      tokenCountEstimator: est,
    });
    const run = await pipeline.run(compactionRequest(events));
    expect(run.fits).to.equal(true);
    expect(run.stages.map((s) => s.name)).to.deep.equal(['ObservationMaskingCompactionStrategy']);
    expect(later.called).to.equal(false);
    expect(run.result.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id, events[5]!.id]);
  });

  it('gives each stage a request of the same session over the previous window', async function () {
    const events = agentWindow();
    const seen: CompactionRequest[] = [];
    const spyStage = async (r: CompactionRequest) => {
      seen.push(r);
      return CompactionResult.noop(r.events);
    };
    const session = Session.create({ id: 'test-session', userId: 'u', metadata: { k: 1 } });
    const masked = await mask().compact(CompactionRequest.of(session, events));
    await new CompactionPipeline({ stages: [mask(), spyStage], maxTokens: 10, tokenCountEstimator: est }).compact(
      CompactionRequest.of(session, events),
    );
    expect(seen).to.have.length(1);
    expect(seen[0]!.session).to.deep.equal(session);
    expect(seen[0]!.events.map((e) => e.message)).to.deep.equal(masked.compactedEvents.map((e) => e.message));
  });

  it('archives only events of the original window: a copy masked and then archived later is dropped for its original', async function () {
    const events = agentWindow();
    const run = await new CompactionPipeline({ stages: [mask(), budget(100)], maxTokens: 100, tokenCountEstimator: est }).run(
      compactionRequest(events),
    );
    const originalIds = new Set(events.map((e) => e.id));
    const archivedIds = run.result.archivedEvents.map((e) => e.id);
    expect(archivedIds.every((id) => originalIds.has(id))).to.equal(true);
    expect(new Set(archivedIds).size).to.equal(archivedIds.length);
    expect(archivedIds).to.deep.equal(events.slice(0, 7).map((e) => e.id));
    // Stage 2 archived the two masked copies too; they are not in the union.
    expect(run.stages.map((s) => s.archived)).to.deep.equal([2, 7]);
    expect(run.result.compactedEvents.map((e) => e.id)).to.deep.equal([events[7]!.id, events[8]!.id]);
    expect(run.result.tokensEstimatedSaved).to.equal(cost(events) - cost(run.result.compactedEvents));
  });

  it('continues past a stage that archives nothing, and reports each stage', async function () {
    const events = agentWindow();
    const noop = async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed');
    const run = await new CompactionPipeline({ stages: [noop, mask()], maxTokens: 1000, tokenCountEstimator: est }).run(
      compactionRequest(events),
    );
    expect(run.stages.map((s) => [s.name, s.archived])).to.deep.equal([
      ['stage 1', 0],
      ['ObservationMaskingCompactionStrategy', 2],
    ]);
    expect(run.stages[0]!.skipReason).to.equal('summarization-failed');
    expect(run.stages[1]!.tokensAfter).to.be.lessThan(run.stages[1]!.tokensBefore);
  });

  it("scales the window by the session's calibration ratio before comparing with maxTokens", async function () {
    const events = [U('x'.repeat(100))];
    const stage = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const pipeline = new CompactionPipeline({ stages: [stage], maxTokens: 150, tokenCountEstimator: est });
    const plain = Session.create({ id: 'test-session', userId: 'u' });
    const calibrated = Session.create({
      id: 'test-session',
      userId: 'u',
      metadata: { [METADATA_TOKEN_CALIBRATION]: { ratio: 2, samples: 5 } },
    });
    await pipeline.compact(CompactionRequest.of(plain, events));
    expect(stage.called).to.equal(false);
    await pipeline.compact(CompactionRequest.of(calibrated, events));
    expect(stage.calledOnce).to.equal(true);
  });

  it('previews stages that support it (no model call) and runs the others', async function () {
    const events = agentWindow();
    const compact = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const previewing: CompactionStrategy = {
      compact,
      preview: async (r) => ({
        result: CompactionResult.noop(r.events),
        modelCalled: false,
        summarizedEvents: r.events.slice(0, 2),
      }),
    };
    const p = await new CompactionPipeline({ stages: [mask(), previewing], maxTokens: 10, tokenCountEstimator: est }).preview(
      compactionRequest(events),
    );
    expect(compact.called).to.equal(false);
    expect(p.modelCalled).to.equal(false);
    expect(p.summarizedEvents).to.have.length(2);
    expect(p.result.archivedEvents.map((e) => e.id)).to.deep.equal([events[2]!.id, events[5]!.id]);
  });

  it('is committed by the service in one CAS write, and the coverage ledger holds', async function () {
    const repo = new InMemorySessionRepository();
    const write = sinon.spy(repo, 'compactEvents');
    const service = new DefaultSessionService(repo, { logger: createDefaultLogger({ silent: true }) });
    const { id } = await service.create({ userId: 'u' });
    for (const e of agentWindow()) await service.appendMessage(id, e.message);
    const contentBefore = (await service.getEvents(id)).length;
    await service.compact(
      id,
      () => true,
      new CompactionPipeline({ stages: [mask(), mask()], maxTokens: 10, tokenCountEstimator: est }),
    );
    expect(write.calledOnce).to.equal(true);
    expect(await service.getEvents(id, EventFilter.active())).to.have.length(contentBefore);
    expect((await service.verifyCoverage(id)).ok).to.equal(true);
  });

  it('a named stage with minTokens is passed over while the window is below it, and reported under its name', async function () {
    const events = agentWindow();
    const heavy = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const run = await new CompactionPipeline({
      stages: [
        { strategy: mask(), name: 'mask' },
        { strategy: heavy, name: 'heavy', minTokens: cost(events) },
      ],
      maxTokens: 100,
      tokenCountEstimator: est,
    }).run(compactionRequest(events));
    // Masking shrank the window below the heavy stage's floor: it never ran, though the budget is not met.
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask']);
    expect(heavy.called).to.equal(false);
    expect(run.fits).to.equal(false);
    expectThrows(
      () => new CompactionPipeline({ stages: [{ strategy: mask(), minTokens: -1 }], maxTokens: 1 }),
      InvalidArgumentError,
      'stages[0].minTokens must be a non-negative integer',
    );
  });

  it('rejects empty stages and a non-positive budget', function () {
    expectThrows(() => new CompactionPipeline({ stages: [], maxTokens: 1 }), InvalidArgumentError, 'stages must not be empty');
    expectThrows(
      () => new CompactionPipeline({ stages: [mask()], maxTokens: 0 }),
      InvalidArgumentError,
      'maxTokens must be greater than 0',
    );
    expectThrows(() => new CompactionPipeline(null as never), InvalidArgumentError, 'options must not be null');
  });

  it("names an unnamed stage by its class, and a function or an object without a class 'stage N'", async function () {
    const bare = Object.assign(Object.create(null) as object, {
      compact: async (r: CompactionRequest) => CompactionResult.noop(r.events),
    }) as CompactionStrategy;
    const fn = async (r: CompactionRequest) => CompactionResult.noop(r.events);
    const run = await new CompactionPipeline({ stages: [mask(), fn, bare], maxTokens: 10, tokenCountEstimator: est }).run(
      compactionRequest(agentWindow()),
    );
    expect(run.stages.map((s) => s.name)).to.deep.equal(['ObservationMaskingCompactionStrategy', 'stage 2', 'stage 3']);
  });

  it('runs an object with a compact method as a strategy, even when it also has a strategy property', async function () {
    const own = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const inner = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const wrapper = { compact: own, strategy: inner };
    await new CompactionPipeline({ stages: [wrapper], maxTokens: 10, tokenCountEstimator: est }).compact(
      compactionRequest(agentWindow()),
    );
    expect(own.calledOnce).to.equal(true);
    expect(inner.called).to.equal(false);
  });

  it('refuses missing options, a stage that is neither a strategy nor a stage, and a blank stage name', function () {
    expectThrows(() => new CompactionPipeline(undefined as never), InvalidArgumentError, 'options must not be null');
    for (const stage of [null, 'mask', 42]) {
      expectThrows(
        () => new CompactionPipeline({ stages: [stage as never], maxTokens: 10 }),
        InvalidArgumentError,
        'strategy must not be null',
      );
    }
    expectThrows(
      () => new CompactionPipeline({ stages: [mask(), { strategy: mask(), name: ' ' }], maxTokens: 10 }),
      InvalidArgumentError,
      'stages[1].name must not be null or empty',
    );
  });

  it('a stage minTokens is a non-negative integer: 0 runs always, a fraction is refused', function () {
    expect(new CompactionPipeline({ stages: [{ strategy: mask(), minTokens: 0 }], maxTokens: 10 }).stages).to.have.length(1);
    expectThrows(
      () => new CompactionPipeline({ stages: [{ strategy: mask(), minTokens: 1.5 }], maxTokens: 10 }),
      InvalidArgumentError,
      'stages[0].minTokens must be a non-negative integer',
    );
  });

  it('a window that costs exactly maxTokens fits, and runs no stage', async function () {
    const events = agentWindow();
    const stage = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const run = await new CompactionPipeline({ stages: [stage], maxTokens: cost(events), tokenCountEstimator: est }).run(
      compactionRequest(events),
    );
    expect(stage.called).to.equal(false);
    expect(run.fits).to.equal(true);
  });

  it('a stage runs from exactly its minTokens, compared with the calibrated window', async function () {
    const events = agentWindow();
    const stage = () => sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const at = stage();
    await new CompactionPipeline({
      stages: [{ strategy: at, minTokens: cost(events) }],
      maxTokens: 10,
      tokenCountEstimator: est,
    }).compact(compactionRequest(events));
    expect(at.calledOnce).to.equal(true);
    const calibrated = Session.create({
      id: 'test-session',
      userId: 'u',
      metadata: { [METADATA_TOKEN_CALIBRATION]: { ratio: 2, samples: 5 } },
    });
    const doubled = stage();
    await new CompactionPipeline({
      stages: [{ strategy: doubled, minTokens: 2 * cost(events) }],
      maxTokens: 10,
      tokenCountEstimator: est,
    }).compact(CompactionRequest.of(calibrated, events));
    expect(doubled.calledOnce).to.equal(true);
  });

  it('run without the preview flag compacts for real', async function () {
    const compact = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const preview = sinon.spy(async (r: CompactionRequest) => ({ result: CompactionResult.noop(r.events), modelCalled: false }));
    await new CompactionPipeline({ stages: [{ compact, preview }], maxTokens: 10, tokenCountEstimator: est }).run(
      compactionRequest(agentWindow()),
    );
    expect(compact.calledOnce).to.equal(true);
    expect(preview.called).to.equal(false);
  });

  it("a preview says the model was called when a stage's preview called it, and lists summarised events only when a stage summarises", async function () {
    const events = agentWindow();
    const calling: CompactionStrategy = {
      compact: async (r) => CompactionResult.noop(r.events),
      preview: async (r) => ({ result: CompactionResult.noop(r.events), modelCalled: true }),
    };
    const p = await new CompactionPipeline({ stages: [calling, mask()], maxTokens: 10, tokenCountEstimator: est }).preview(
      compactionRequest(events),
    );
    expect(p.modelCalled).to.equal(true);
    expect(p.summarizedEvents).to.equal(undefined);
    expect(p.result.archivedEvents).to.have.length(2);
  });

  it("reports no usage when no stage called a model, and a stage's usage when one did", async function () {
    const events = agentWindow();
    const plain = await new CompactionPipeline({ stages: [mask()], maxTokens: 10, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(plain.usage).to.equal(undefined);
    const usage: UsageRecord = {
      inputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      summarizerCalls: 1,
      summarizerInputTokens: 50,
      summarizerCachedInputTokens: 0,
      summarizerOutputTokens: 5,
    };
    const billed = async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed').withUsage(usage);
    const r = await new CompactionPipeline({ stages: [billed, mask()], maxTokens: 10, tokenCountEstimator: est }).compact(
      compactionRequest(events),
    );
    expect(r.usage).to.deep.include({ summarizerCalls: 1, summarizerInputTokens: 50, summarizerOutputTokens: 5 });
  });

  it("when no stage archives anything, the result says why: the first stage's reason, else nothing-to-archive", async function () {
    const events = agentWindow();
    const skip = (reason?: StrategySkipReason) => async (r: CompactionRequest) => CompactionResult.noop(r.events, reason);
    const pipeline = (...stages: CompactionStrategyLike[]) =>
      new CompactionPipeline({ stages, maxTokens: 10, tokenCountEstimator: est }).compact(compactionRequest(events));
    const failed = await pipeline(skip(), skip('summarization-failed'), skip('deferred'));
    expect(failed.skipReason).to.equal('summarization-failed');
    expect(failed.compactedEvents).to.deep.equal(events);
    expect((await pipeline(skip())).skipReason).to.equal('nothing-to-archive');
  });
});
