import { expect } from 'chai';
import sinon from 'sinon';
import {
  CompactionPipeline,
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  ObservationMaskingCompactionStrategy,
  createDefaultLogger,
  type CompactionRequest,
  type CompactionStrategy,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import { CharEstimator } from '../support/fixtures.js';
import { long } from '../support/beyondEvents.js';

const est = new CharEstimator();

async function toolSession() {
  const repo = new InMemorySessionRepository();
  const service = new DefaultSessionService(repo, { logger: createDefaultLogger({ silent: true }), tokenCountEstimator: est });
  const { id } = await service.create({ userId: 'u' });
  await service.appendMessage(id, Messages.user('look around'));
  for (let i = 0; i < 3; i++) {
    await service.appendMessage(id, Messages.assistant(null, { toolCalls: [Messages.toolCall(`c${i}`, 'bash', '{}')] }));
    await service.appendMessage(id, Messages.tool([Messages.toolResponse(`c${i}`, 'bash', long(`out${i}`, 2000))]));
    await service.appendMessage(id, Messages.assistant(`read ${i}`));
  }
  return { repo, service, id };
}

/** A summarising stage whose model call is observable: compact "calls the model", preview does not. */
function summarisingStage() {
  const model = sinon.spy(async () => 'summary');
  const stage: CompactionStrategy = {
    compact: async (r: CompactionRequest) => {
      await model();
      return CompactionResult.noop(r.events);
    },
    preview: async (r: CompactionRequest) => ({
      result: CompactionResult.noop(r.events),
      modelCalled: false,
      summarizedEvents: r.events.slice(0, 3),
    }),
  };
  return { model, stage };
}

describe('previewCompaction (beyond)', function () {
  it('previews a masking compaction with exact token figures and writes nothing', async function () {
    const { repo, service, id } = await toolSession();
    const version = await repo.getEventVersion(id);
    const window = await service.getEvents(id, EventFilter.active());
    const p = await service.previewCompaction(
      id,
      () => true,
      new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }),
    );
    expect(p.triggered).to.equal(true);
    expect(p.tokensBefore).to.equal(estimateEventsTokens(window, est));
    expect(p.tokensAfter).to.equal(estimateEventsTokens(p.result.compactedEvents, est));
    expect(p.tokensBefore - p.tokensAfter).to.equal(p.result.tokensEstimatedSaved);
    expect(p.result.archivedEvents).to.have.length(3);
    expect(await repo.getEventVersion(id)).to.equal(version);
    expect(await service.getEvents(id, EventFilter.all())).to.deep.equal(window);
  });

  it('does not run the strategy when the trigger would not fire', async function () {
    const { service, id } = await toolSession();
    const strategy = sinon.spy(async (r: CompactionRequest) => CompactionResult.noop(r.events));
    const p = await service.previewCompaction(id, () => false, strategy);
    expect(p.triggered).to.equal(false);
    expect(strategy.called).to.equal(false);
    expect(p.tokensAfter).to.equal(p.tokensBefore);
  });

  it('previews a pipeline: mechanical stages run, the summarising stage is previewed without its model', async function () {
    const { repo, service, id } = await toolSession();
    const version = await repo.getEventVersion(id);
    const { model, stage } = summarisingStage();
    const pipeline = new CompactionPipeline({
      stages: [new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }), stage],
      maxTokens: 10,
      tokenCountEstimator: est,
    });
    const p = await service.previewCompaction(id, () => true, pipeline);
    expect(model.called).to.equal(false);
    expect(p.modelCalled).to.equal(false);
    expect(p.summarizedEvents).to.have.length(3);
    expect(p.result.archivedEvents).to.have.length(3);
    expect(await repo.getEventVersion(id)).to.equal(version);
  });

  it('with callModel, runs the stages for real (still without writing)', async function () {
    const { repo, service, id } = await toolSession();
    const version = await repo.getEventVersion(id);
    const { model, stage } = summarisingStage();
    const pipeline = new CompactionPipeline({ stages: [stage], maxTokens: 10, tokenCountEstimator: est });
    const p = await service.previewCompaction(id, () => true, pipeline, { callModel: true });
    expect(model.calledOnce).to.equal(true);
    expect(p.modelCalled).to.equal(true);
    expect(await repo.getEventVersion(id)).to.equal(version);
  });
});
