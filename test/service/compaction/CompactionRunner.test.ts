/**
 * Every way a compaction ends without a commit, through DefaultSessionService.compact: one
 * `compactionSkipped` event with the reason, no write, the window returned unchanged, and the compact span's
 * outcome saying why.
 */
import { expect } from 'chai';
import {
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  InProcessCompactionLock,
  Messages,
  SlidingWindowCompactionStrategy,
  type CompactionLock,
  type CompactionRequest,
  type CompactionStrategyLike,
  type DefaultSessionServiceOptions,
  type UsageRecord,
} from 'session-compaction';
import type { CompactionSkipReason } from 'session-compaction/spi';
import { TELEMETRY_ATTRIBUTES as ATTR, TELEMETRY_SPANS as SPAN } from 'session-compaction/telemetry';
import { installOtel, type OtelCapture } from '../../support/otel.js';
import { CharEstimator } from '../../support/fixtures.js';
import { silentLogger } from '../../summarization/support.js';

const est = new CharEstimator();
const always = () => true;
const never = () => false;
const archiveAll = new SlidingWindowCompactionStrategy({ maxEvents: 2, tokenCountEstimator: est });
/** What a summariser call cost: kept on a no-op result, since it was paid. */
const usage: UsageRecord = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens: 0,
  summarizerCalls: 1,
  summarizerInputTokens: 120,
  summarizerCachedInputTokens: 0,
  summarizerOutputTokens: 30,
};
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Run {
  service: DefaultSessionService;
  id: string;
  skipped: CompactionSkipReason[];
  completed: number;
}

async function conversation(options: DefaultSessionServiceOptions = {}): Promise<Run> {
  const service = new DefaultSessionService(new InMemorySessionRepository(), {
    logger: silentLogger,
    tokenCountEstimator: est,
    ...options,
  });
  const { id } = await service.create({ userId: 'u' });
  for (let i = 0; i < 4; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  const run: Run = { service, id, skipped: [], completed: 0 };
  service.events.on('compactionSkipped', (e) => run.skipped.push(e.reason));
  service.events.on('compactionCompleted', () => run.completed++);
  return run;
}

/** Compacts, then checks what every skip has in common; returns the result and the compact span's attributes. */
async function expectSkip(
  run: Run,
  otel: OtelCapture,
  reason: CompactionSkipReason,
  compact: () => Promise<CompactionResult>,
): Promise<{ result: CompactionResult; span: Record<string, unknown> }> {
  const before = await run.service.getEvents(run.id, EventFilter.active());
  const version = await run.service.getEventVersion(run.id);
  otel.reset();
  const result = await compact();
  expect(run.skipped).to.deep.equal([reason]);
  expect(run.completed).to.equal(0);
  expect(result.archivedEvents).to.deep.equal([]);
  expect(result.compactedEvents.map((e) => e.id)).to.deep.equal(before.map((e) => e.id));
  expect(await run.service.getEventVersion(run.id)).to.equal(version);
  const spans = otel.spansNamed(SPAN.COMPACT);
  expect(spans).to.have.length(1);
  return { result, span: spans[0]!.attributes };
}

describe('CompactionRunner: the one skip path', function () {
  let otel: OtelCapture;
  before(() => (otel = installOtel()));
  after(async () => otel.shutdown());

  it('trigger-not-fired: the trigger said no; the span says not triggered', async function () {
    const run = await conversation();
    const { result, span } = await expectSkip(run, otel, 'trigger-not-fired', () =>
      run.service.compact(run.id, never, archiveAll),
    );
    expect(result.skipReason).to.equal(undefined);
    expect(span).to.include({ [ATTR.TRIGGER_FIRED]: false, [ATTR.OUTCOME]: 'not-triggered' });
  });

  it('trigger-not-fired on a known window: the same skip, without reading the session', async function () {
    const run = await conversation();
    const session = (await run.service.findById(run.id))!;
    const events = await run.service.getEvents(run.id, EventFilter.active());
    const { span } = await expectSkip(run, otel, 'trigger-not-fired', () =>
      run.service.compact(run.id, never, archiveAll, { knownWindow: { session, events } }),
    );
    expect(span).to.include({ [ATTR.TRIGGER_FIRED]: false, [ATTR.OUTCOME]: 'not-triggered' });
    expect(otel.spansNamed('repository.findById')).to.deep.equal([]);
  });

  it('trigger-not-fired with a compaction lock: the same skip, decided before the lease is taken', async function () {
    const lock = new InProcessCompactionLock();
    let acquired = 0;
    const counting: CompactionLock = {
      acquire: (sessionId, options) => (acquired++, lock.acquire(sessionId, options)),
      renew: (lease, leaseMs) => lock.renew(lease, leaseMs),
      release: (lease) => lock.release(lease),
    };
    const run = await conversation({ compactionLock: counting });
    const { span } = await expectSkip(run, otel, 'trigger-not-fired', () => run.service.compact(run.id, never, archiveAll));
    expect(span).to.include({ [ATTR.TRIGGER_FIRED]: false, [ATTR.OUTCOME]: 'not-triggered' });
    expect(acquired).to.equal(0);
  });

  it('nothing-to-archive: the strategy archived nothing; its own result is returned as it is', async function () {
    const run = await conversation();
    let own: CompactionResult | undefined;
    const keepAll: CompactionStrategyLike = async (request) => (own = CompactionResult.noop(request.events));
    const { result, span } = await expectSkip(run, otel, 'nothing-to-archive', () =>
      run.service.compact(run.id, always, keepAll),
    );
    expect(result).to.equal(own);
    expect(span).to.include({ [ATTR.TRIGGER_FIRED]: true, [ATTR.SKIP_REASON]: 'nothing-to-archive' });
  });

  it("summarization-failed: the strategy's own reason is the skip reason, and its usage stays on the result", async function () {
    const run = await conversation();
    const failing: CompactionStrategyLike = async (request: CompactionRequest) =>
      new CompactionResult(request.events, [], 0, 'summarization-failed', usage);
    const { result, span } = await expectSkip(run, otel, 'summarization-failed', () =>
      run.service.compact(run.id, always, failing),
    );
    expect(result.skipReason).to.equal('summarization-failed');
    expect(result.usage).to.deep.equal(usage);
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'summarization-failed' });
  });

  it('vetoed: a beforeCompaction hook stopped it before the strategy ran', async function () {
    const run = await conversation({ hooks: { beforeCompaction: () => ({ veto: true, reason: 'busy' }) } });
    let ran = false;
    const strategy: CompactionStrategyLike = async (request) => ((ran = true), archiveAll.compact(request));
    const { span } = await expectSkip(run, otel, 'vetoed', () => run.service.compact(run.id, always, strategy));
    expect(ran).to.equal(false);
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'vetoed' });
  });

  it('empty-range: the range holds no event of the window, so the strategy never runs', async function () {
    const run = await conversation();
    let ran = false;
    const strategy: CompactionStrategyLike = async (request) => ((ran = true), archiveAll.compact(request));
    const future = new Date(Date.now() + 60 * 60 * 1000);
    const { span } = await expectSkip(run, otel, 'empty-range', () =>
      run.service.compact(run.id, always, strategy, { range: { since: future } }),
    );
    expect(ran).to.equal(false);
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'empty-range' });
  });

  it('pinned-event: a result that archives a pinned event is not committed', async function () {
    const run = await conversation();
    const [first] = await run.service.getEvents(run.id, EventFilter.active());
    await run.service.pinEvent(run.id, first!.id);
    run.skipped.length = 0;
    const ignoresPins: CompactionStrategyLike = async (request) =>
      new CompactionResult(request.events.slice(-2), request.events.slice(0, -2), 1);
    const { span } = await expectSkip(run, otel, 'pinned-event', () => run.service.compact(run.id, always, ignoresPins));
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'pinned-event' });
  });

  it('lock-held: another holder has the lease; the result says so', async function () {
    const lock = new InProcessCompactionLock();
    const run = await conversation({ compactionLock: lock });
    expect(await lock.acquire(run.id, { leaseMs: 60_000 })).to.not.equal(null);
    const { result, span } = await expectSkip(run, otel, 'lock-held', () => run.service.compact(run.id, always, archiveAll));
    expect(result.skipReason).to.equal('lock-held');
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'lock-held' });
  });

  it('lock-lost: the lease was lost while the strategy ran; nothing is committed, the usage is kept', async function () {
    const lock = new InProcessCompactionLock();
    const losing: CompactionLock = {
      acquire: (sessionId, options) => lock.acquire(sessionId, options),
      renew: async () => null,
      release: (lease) => lock.release(lease),
    };
    const run = await conversation({ compactionLock: { lock: losing, leaseMs: 60 } });
    const slow: CompactionStrategyLike = async (request) => {
      await sleep(100);
      return (await archiveAll.compact(request)).withUsage(usage);
    };
    const { result, span } = await expectSkip(run, otel, 'lock-lost', () => run.service.compact(run.id, always, slow));
    expect(result.skipReason).to.equal('lock-lost');
    expect(result.usage).to.deep.equal(usage);
    expect(span).to.include({ [ATTR.SKIP_REASON]: 'lock-lost' });
  });

  it('cas-conflict: an append landed during the strategy; the window as read comes back, the usage is kept', async function () {
    const run = await conversation();
    const racing: CompactionStrategyLike = async (request) => {
      await run.service.appendMessage(run.id, Messages.user('late'));
      return (await archiveAll.compact(request)).withUsage(usage);
    };
    const window = await run.service.getEvents(run.id, EventFilter.active());
    otel.reset();
    const result = await run.service.compact(run.id, always, racing);
    expect(run.skipped).to.deep.equal(['cas-conflict']);
    expect(run.completed).to.equal(0);
    expect(result.archivedEvents).to.deep.equal([]);
    expect(result.compactedEvents.map((e) => e.id)).to.deep.equal(window.map((e) => e.id));
    expect(result.skipReason).to.equal(undefined);
    expect(result.usage).to.deep.equal(usage);
    expect(await run.service.getEvents(run.id, EventFilter.active())).to.have.length(window.length + 1);
    expect(otel.spansNamed(SPAN.COMPACT)[0]!.attributes).to.include({ [ATTR.OUTCOME]: 'lost', [ATTR.CAS_OUTCOME]: 'lost' });
  });
});
