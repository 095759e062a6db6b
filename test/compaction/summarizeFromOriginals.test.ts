import { expect } from 'chai';
import {
  CompactionPipeline,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  AdditiveSummarizationCompactionStrategy,
} from 'session-compaction';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
/** A tool output far longer than a 300-character excerpt, with a marker only its middle holds. */
const OUTPUT = 'head '.repeat(200) + 'THE-NEEDLE-IN-THE-MIDDLE ' + 'tail '.repeat(200);

async function toolSession() {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silentLogger, tokenCountEstimator: est });
  const { id } = await service.create({ userId: 'u' });
  await service.appendMessage(id, Messages.user('read the log'));
  await service.appendMessage(id, Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'cat', '{"f":"log"}')] }));
  await service.appendMessage(id, Messages.tool([Messages.toolResponse('c1', 'cat', OUTPUT)]));
  await service.appendMessage(id, Messages.assistant('the log says it failed'));
  for (let i = 0; i < 4; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  return { service, id };
}

const recursive = (client: ScriptedChatClient, summarizeFrom?: 'originals' | 'window') =>
  new RecursiveSummarizationCompactionStrategy({
    chatClient: client,
    maxEventsToKeep: 4,
    overlapSize: 0,
    tokenCountEstimator: est,
    logger: silentLogger,
    ...(summarizeFrom !== undefined ? { summarizeFrom } : {}),
  });

describe('summarising from originals', function () {
  it('mask → summarise in one pipeline: the summary prompt holds the unmasked tool output', async function () {
    const { service, id } = await toolSession();
    const client = new ScriptedChatClient(['summary']);
    const pipeline = new CompactionPipeline({
      stages: [new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }), recursive(client)],
      maxTokens: 100,
      tokenCountEstimator: est,
    });
    await service.compact(id, () => true, pipeline);
    expect(client.callCount).to.equal(1);
    expect(client.requests[0]!.user).to.include(OUTPUT);
  });

  it("with summarizeFrom 'window' the summariser reads the masked excerpt instead", async function () {
    const { service, id } = await toolSession();
    const client = new ScriptedChatClient(['summary']);
    const pipeline = new CompactionPipeline({
      stages: [new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }), recursive(client, 'window')],
      maxTokens: 100,
      tokenCountEstimator: est,
    });
    await service.compact(id, () => true, pipeline);
    expect(client.requests[0]!.user).not.to.include('THE-NEEDLE-IN-THE-MIDDLE');
    expect(client.requests[0]!.user).to.include('characters masked');
  });

  it('masking committed first, summarising in a later compaction: the service hands the archived original to the summariser', async function () {
    const { service, id } = await toolSession();
    await service.compact(id, () => true, new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est }));
    const active = await service.getEvents(id, EventFilter.active());
    expect(active.some((e) => e.metadata.maskedFrom !== undefined)).to.equal(true);
    const client = new ScriptedChatClient(['summary']);
    const additive = new AdditiveSummarizationCompactionStrategy({
      chatClient: client,
      keepTurns: 1,
      maxSummaryTokens: 10_000,
      tokenCountEstimator: est,
      logger: silentLogger,
    });
    await service.compact(id, () => true, additive);
    expect(client.requests[0]!.user).to.include(OUTPUT);
    // The window itself still holds no unmasked copy: only the summary and the kept turn.
    const after = await service.getEvents(id, EventFilter.active());
    expect(after.some((e) => e.message.type === 'tool')).to.equal(false);
  });

  it('rejects an unknown summarizeFrom', function () {
    expect(() => recursive(new ScriptedChatClient(), 'everything' as never)).to.throw(
      "summarizeFrom must be 'originals' or 'window'",
    );
  });
});
