import { expect } from 'chai';
import sinon from 'sinon';
import {
  CompactionRequest,
  CompactionResult,
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  PressureBandCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SessionEvent,
  type ChatClient,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, expectThrows } from '../../support/fixtures.js';
import { call, long, result } from '../../support/beyondEvents.js';

const est = new CharEstimator();
const cost = (events: readonly SessionEvent[]) => estimateEventsTokens(events, est);

/** Tool-heavy: two consumed results of ~3000 characters, then a final exchange. */
function agentWindow(): SessionEvent[] {
  return [
    U('investigate'),
    call('c1', 'bash', '{"command":"' + 'a'.repeat(400) + '"}'),
    result('c1', long('one', 3000)),
    A('step one done'),
    call('c2', 'bash', '{"command":"' + 'b'.repeat(400) + '"}'),
    result('c2', long('two', 3000)),
    A('step two done'),
    U('now summarise'),
    A('All done.'),
  ];
}

/** Mostly prose: masking and stripping can do little, only summarising or truncating helps. */
function proseWindow(): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (let i = 0; i < 8; i++) events.push(U(`question ${i} ${'q'.repeat(300)}`), A(`answer ${i} ${'a'.repeat(600)}`));
  events.push(call('c9'), result('c9', long('out', 600)), A('read it'), U('last question'), A('last answer'));
  return events;
}

/** A window of `events` sized so that they fill `pressure` of it. */
const windowFor = (events: readonly SessionEvent[], pressure: number) => Math.round(cost(events) / pressure);

const bands = (
  contextWindowTokens: number,
  extra: Partial<ConstructorParameters<typeof PressureBandCompactionStrategy>[0]> = {},
) => new PressureBandCompactionStrategy({ contextWindowTokens, tokenCountEstimator: est, ...extra });

const scripted = (answer: string | null): ChatClient & { calls: number } => {
  const client = {
    calls: 0,
    async call() {
      client.calls++;
      return answer;
    },
  };
  return client;
};

describe('PressureBandCompactionStrategy', function () {
  it('changes nothing below the first band and runs no band', async function () {
    const events = agentWindow();
    const run = await bands(windowFor(events, 0.79)).run(compactionRequest(events));
    expect(run.result.isNoop()).to.equal(true);
    expect(run.stages).to.deep.equal([]);
  });

  it('at 82 % pressure only masks consumed tool output, then stops because the pressure fell below 80 %', async function () {
    const events = agentWindow();
    const strategy = bands(windowFor(events, 0.82));
    const request = compactionRequest(events);
    const run = await strategy.run(request);
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask']);
    expect(strategy.pressureOf(request.withEvents(run.result.compactedEvents))).to.be.below(0.8);
    expect(run.result.archivedEvents.map((e) => e.message.type)).to.deep.equal(['tool', 'tool']);
  });

  it('applies the bands in ascending order while the pressure stays at or above each threshold', async function () {
    const events = proseWindow();
    const client = scripted('The user asked eight questions; all were answered.');
    const summarizer = new RecursiveSummarizationCompactionStrategy({
      chatClient: client,
      maxEventsToKeep: 4,
      overlapSize: 1,
      tokenCountEstimator: est,
    });
    const strategy = bands(windowFor(events, 0.95), { summarizer });
    const run = await strategy.run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask', 'strip', 'summarize']);
    expect(client.calls).to.equal(1);
    const budget = windowFor(events, 0.95);
    // Each band started at or above its threshold; the run ended under the first band.
    const thresholds: Record<string, number> = { mask: 0.8, strip: 0.85, summarize: 0.9 };
    for (const s of run.stages) expect(s.tokensBefore / budget).to.be.at.least(thresholds[s.name]! - 0.001);
    expect(run.stages.at(-1)!.tokensAfter / budget).to.be.below(0.8);
    expect(run.result.isNoop()).to.equal(false);
  });

  it('truncates only at 99 % and when nothing milder brought the window down (a failed summary)', async function () {
    const events = proseWindow();
    const failing = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed'));
    // Over the window already (a long tool output arrived): the milder bands cannot bring it under 99 %.
    const strategy = bands(windowFor(events, 1.2), { summarizer: failing });
    const request = compactionRequest(events);
    const run = await strategy.run(request);
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask', 'strip', 'summarize', 'truncate']);
    expect(failing.calledOnce).to.equal(true);
    // The default emergency target is 70 % of the window.
    expect(strategy.pressureOf(request.withEvents(run.result.compactedEvents))).to.be.at.most(0.7);
    expect(run.result.compactedEvents.length).to.be.greaterThan(0);
  });

  it('at 97 % with a failed summary does not truncate: the emergency band is 99 %', async function () {
    const events = proseWindow();
    const failing = async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed');
    const run = await bands(windowFor(events, 0.97), { summarizer: failing }).run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask', 'strip', 'summarize']);
  });

  it('its trigger fires at the first band and not below it', function () {
    const events = agentWindow();
    expect(bands(windowFor(events, 0.81)).trigger.shouldCompact(compactionRequest(events))).to.equal(true);
    expect(bands(windowFor(events, 0.78)).trigger.shouldCompact(compactionRequest(events))).to.equal(false);
  });

  it('counts the instruction overhead in the pressure (system prompt and tool schemas)', async function () {
    const events = agentWindow();
    const contextWindowTokens = windowFor(events, 0.7);
    const overhead = Math.ceil(contextWindowTokens * 0.15);
    const run = await bands(contextWindowTokens, { systemPromptTokens: overhead }).run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.include('mask');
  });

  it('runs custom bands, named in the report', async function () {
    const events = agentWindow();
    const first = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const second = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const strategy = bands(windowFor(events, 0.65), {
      bands: [
        { threshold: 0.5, name: 'gentle', strategy: first },
        { threshold: 0.6, name: 'firm', strategy: second },
        { threshold: 0.9, name: 'never here', strategy: second },
      ],
    });
    const run = await strategy.run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.deep.equal(['gentle', 'firm']);
    expect(first.calledOnce && second.calledOnce).to.equal(true);
  });

  it('shows each band and its tokens in previewCompaction, without calling the summariser', async function () {
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { tokenCountEstimator: est });
    const session = await service.create({ userId: 'u' });
    for (const e of proseWindow()) await service.appendMessage(session.id, e.message);
    const events = await service.getEvents(session.id);
    const client = scripted('summary');
    const summarizer = new RecursiveSummarizationCompactionStrategy({
      chatClient: client,
      maxEventsToKeep: 4,
      overlapSize: 1,
      tokenCountEstimator: est,
    });
    const strategy = bands(windowFor(events, 0.95), { summarizer });
    const preview = await service.previewCompaction(session.id, strategy.trigger, strategy);
    expect(preview.triggered).to.equal(true);
    expect(preview.stages?.map((s) => s.name)).to.deep.equal(['mask', 'strip', 'summarize']);
    expect(preview.stages![0]!.tokensBefore).to.equal(preview.tokensBefore);
    expect(client.calls).to.equal(0);
    expect(preview.modelCalled).to.equal(false);
    expect(await service.getEventVersion(session.id)).to.equal(events.length);
  });

  it('measures the bands against the usable window: the context window minus the reserve', async function () {
    const events = agentWindow();
    // 82 % of the usable window once 1000 tokens are reserved; 1000 tokens more would be under 80 %.
    const usable = windowFor(events, 0.82);
    const run = await bands(usable + 1000, { reserveTokens: 1000 }).run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask']);
  });

  it('counts system prompt and tool schemas together as overhead', async function () {
    const events = agentWindow();
    const contextWindowTokens = windowFor(events, 0.7);
    const third = Math.ceil(contextWindowTokens * 0.1);
    // 70 % window + 10 % system prompt + 10 % tool schemas: 90 % pressure; the difference of the two would be 70 %.
    const run = await bands(contextWindowTokens, { systemPromptTokens: third, toolSchemaTokens: third }).run(
      compactionRequest(events),
    );
    expect(run.stages.map((s) => s.name)).to.include('mask');
  });

  it('a window exactly at the first band runs it; once under it, the run fits', async function () {
    const events = agentWindow();
    // cost = ceil(0.8 × window): exactly at the mask band.
    const run = await bands(cost(events) / 0.8).run(compactionRequest(events));
    expect(run.stages.map((s) => s.name)).to.deep.equal(['mask']);
    expect(run.fits).to.equal(true);
  });

  it('emergency truncation keeps as much as fits the target, not just the last turn', async function () {
    const events = proseWindow();
    const failing = async (r: CompactionRequest) => CompactionResult.noop(r.events, 'summarization-failed');
    const strategy = bands(windowFor(events, 1.2), { summarizer: failing });
    const request = compactionRequest(events);
    const run = await strategy.run(request);
    expect(run.stages.at(-1)!.name).to.equal('truncate');
    const after = strategy.pressureOf(request.withEvents(run.result.compactedEvents));
    expect(after).to.be.at.most(0.7);
    expect(after).to.be.at.least(0.5);
  });

  it('passes its cache lifetime to the pipeline: a small mask waits while the cache is warm', async function () {
    const T0 = Date.parse('2026-01-01T00:00:00Z');
    const window = [U('go'), call('c1'), result('c1', long('c1', 1000)), A('read c1')].map((e) =>
      SessionEvent.create({ ...e, timestamp: new Date(T0) }),
    );
    const strategy = (cacheTtlMs?: number) =>
      bands(Math.round(cost(window) / 0.9), {
        minSavedTokens: 5000,
        ...(cacheTtlMs !== undefined ? { cacheTtlMs } : {}),
        now: () => new Date(T0 + 10 * 60_000),
      });
    // Ten minutes after the last call: warm for a 15-minute cache, cold for the default 5 minutes.
    expect((await strategy(15 * 60_000).compact(compactionRequest(window))).skipReason).to.equal('deferred');
    expect((await strategy().compact(compactionRequest(window))).archivedEvents).to.have.length(1);
  });

  it('refuses missing options', function () {
    expectThrows(() => new PressureBandCompactionStrategy(undefined as never), InvalidArgumentError, 'options must not be null');
    expectThrows(() => new PressureBandCompactionStrategy(null as never), InvalidArgumentError, 'options must not be null');
  });

  describe('band validation', function () {
    const noop = async (r: CompactionRequest) => CompactionResult.noop(r.events);
    const withBands = (b: unknown) => () => bands(10_000, { bands: b as never });

    it('rejects an empty band list', function () {
      expectThrows(withBands([]), InvalidArgumentError, 'bands must not be empty');
    });

    it('rejects a threshold outside (0, 1], naming the band and the value', function () {
      expectThrows(
        withBands([{ threshold: 'high', name: 'x', strategy: noop }]),
        InvalidArgumentError,
        'bands[0].threshold must be a number in (0, 1] (got "high")',
      );
      expectThrows(withBands([{ threshold: 1.2, name: 'x', strategy: noop }]), InvalidArgumentError, 'bands[0].threshold');
      expectThrows(withBands([{ threshold: 0, name: 'x', strategy: noop }]), InvalidArgumentError, 'bands[0].threshold');
    });

    it('rejects thresholds that are not strictly ascending', function () {
      expectThrows(
        withBands([
          { threshold: 0.9, name: 'a', strategy: noop },
          { threshold: 0.8, name: 'b', strategy: noop },
        ]),
        InvalidArgumentError,
        'bands[1].threshold (0.8) must be greater than bands[0].threshold (0.9)',
      );
    });

    it('rejects a blank or repeated name and a missing strategy', function () {
      expectThrows(
        withBands([{ threshold: 0.5, name: ' ', strategy: noop }]),
        InvalidArgumentError,
        'bands[0].name must not be blank',
      );
      expectThrows(
        withBands([
          { threshold: 0.5, name: 'a', strategy: noop },
          { threshold: 0.6, name: 'a', strategy: noop },
        ]),
        InvalidArgumentError,
        "bands[1].name 'a' is used by another band",
      );
      expectThrows(withBands([{ threshold: 0.5, name: 'a' }]), InvalidArgumentError, 'bands[0].strategy must be a strategy');
    });

    it('rejects an emergency target above the first default band', function () {
      expectThrows(() => bands(10_000, { emergencyTargetRatio: 0.9 }), InvalidArgumentError, 'emergencyTargetRatio');
    });

    it('rejects a band that is not an object, a numeric string as threshold, and a missing name', function () {
      expectThrows(withBands([null]), InvalidArgumentError, 'bands[0] must be an object');
      expectThrows(withBands(['mask']), InvalidArgumentError, 'bands[0] must be an object');
      expectThrows(withBands([{ threshold: '0.5', name: 'x', strategy: noop }]), InvalidArgumentError, 'bands[0].threshold');
      expectThrows(withBands([{ threshold: 0.5, strategy: noop }]), InvalidArgumentError, 'bands[0].name must not be blank');
    });

    it('accepts a last band at exactly 1 and refuses two bands at the same threshold', function () {
      expect(withBands([{ threshold: 1, name: 'x', strategy: noop }])().bands.map((b) => b.threshold)).to.deep.equal([1]);
      expectThrows(
        withBands([
          { threshold: 0.8, name: 'a', strategy: noop },
          { threshold: 0.8, name: 'b', strategy: noop },
        ]),
        InvalidArgumentError,
        'bands[1].threshold (0.8) must be greater than bands[0].threshold (0.8)',
      );
    });

    it('refuses an emergency target of 0 or given as a string', function () {
      expectThrows(() => bands(10_000, { emergencyTargetRatio: 0 }), InvalidArgumentError, 'emergencyTargetRatio');
      expectThrows(() => bands(10_000, { emergencyTargetRatio: '0.5' as never }), InvalidArgumentError, 'emergencyTargetRatio');
    });
  });
});
