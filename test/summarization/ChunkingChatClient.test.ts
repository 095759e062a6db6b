import { expect } from 'chai';
import {
  ChunkingChatClient,
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  type ChatClient,
} from 'session-compaction';
import { CharacterTokenCountEstimator, buildSummaryPrompt, type ChatRequest } from 'session-compaction/spi';
import { silentLogger } from './support.js';

const est = new CharacterTokenCountEstimator();

/** A summariser with a hard context window: a prompt over it fails, as a real endpoint would. */
class LimitedSummarizer implements ChatClient {
  readonly requests: ChatRequest[] = [];
  constructor(private readonly window: number) {}
  async call(request: ChatRequest): Promise<string | null> {
    this.requests.push(request);
    const size = (request.system ?? '').length + request.user.length;
    if (size > this.window) throw new Error(`context length exceeded: ${size} > ${this.window}`);
    return `summary#${this.requests.length}`;
  }
}

describe('ChunkingChatClient (map, then merge)', function () {
  it('passes a prompt that fits straight through', async function () {
    const inner = new LimitedSummarizer(10_000);
    const chunking = new ChunkingChatClient({
      client: inner,
      contextTokens: 10_000,
      reserveTokens: 100,
      tokenCountEstimator: est,
    });
    expect(await chunking.call({ system: 's', user: buildSummaryPrompt({ transcript: ['User: hi'] }) })).to.equal('summary#1');
    expect(inner.requests).to.have.length(1);
  });

  it('summarises a range larger than the summariser window in chunks, then merges the chunk summaries', async function () {
    const inner = new LimitedSummarizer(3_000);
    const chunking = new ChunkingChatClient({
      client: inner,
      contextTokens: 3_000,
      reserveTokens: 200,
      tokenCountEstimator: est,
    });
    const transcript = Array.from({ length: 60 }, (_, i) => `User: message ${i} ${'x'.repeat(200)}`);
    const user = buildSummaryPrompt({ priorSummaries: ['earlier summary'], transcript });
    expect(user.length).to.be.greaterThan(10_000);
    const summary = await chunking.call({ system: 'summarise', user });
    expect(summary).to.equal(`summary#${inner.requests.length}`);
    expect(inner.requests.length).to.be.greaterThan(2);
    for (const r of inner.requests) expect(r.user.length + (r.system ?? '').length).to.be.at.most(3_000);
    const all = inner.requests.map((r) => r.user).join('\n');
    for (let i = 0; i < 60; i++) expect(all).to.include(`message ${i} `);
    // The merge carries the prior summary and the part summaries.
    const last = inner.requests.at(-1)!.user;
    expect(last).to.include('earlier summary');
    expect(last).to.include('Summary of part 1 of');
  });

  it('compaction works when the conversation is too long for the summariser: the window is summarised, not skipped', async function () {
    const inner = new LimitedSummarizer(4_000);
    const service = new DefaultSessionService(new InMemorySessionRepository(), {
      logger: silentLogger,
      tokenCountEstimator: est,
    });
    const { id } = await service.create({ userId: 'u' });
    for (let i = 0; i < 40; i++) {
      await service.appendMessage(id, Messages.user(`q${i} ${'y'.repeat(300)}`));
      await service.appendMessage(id, Messages.assistant(`a${i}`));
    }
    const strategy = (chatClient: ChatClient) =>
      new RecursiveSummarizationCompactionStrategy({ chatClient, maxEventsToKeep: 4, overlapSize: 0, logger: silentLogger });
    expect((await service.compact(id, () => true, strategy(inner))).isNoop(), 'the bare summariser fails').to.equal(true);
    const chunking = new ChunkingChatClient({
      client: inner,
      contextTokens: 4_000,
      reserveTokens: 200,
      tokenCountEstimator: est,
    });
    const result = await service.compact(id, () => true, strategy(chunking));
    expect(result.eventsRemoved).to.equal(76);
    expect((await service.getEvents(id, EventFilter.active()))[1]!.metadata.summaryMethod).to.equal('model');
  });
});
