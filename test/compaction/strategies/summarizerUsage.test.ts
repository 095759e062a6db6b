import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionPipeline,
  RecursiveSummarizationCompactionStrategy,
  TokenCountCompactionStrategy,
  type ChatClient,
} from 'session-compaction';
import type { ChatReply, ChatRequest, ChatUsage } from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

/** Answers in turn, each with the usage an endpoint would report for it. */
class MeteredChatClient implements ChatClient {
  private n = 0;
  constructor(private readonly replies: { text: string | null; usage: ChatUsage | null }[]) {}
  async call(request: ChatRequest): Promise<string | null> {
    return (await this.complete(request)).text;
  }
  async complete(_request: ChatRequest): Promise<ChatReply> {
    return this.replies[Math.min(this.n++, this.replies.length - 1)]!;
  }
}

const est = new CharEstimator();
const turns = (n: number) => Array.from({ length: n }, (_, i) => [U(`question ${i}`), A(`answer ${i}`)]).flat();
const recursive = (chatClient: ChatClient) =>
  new RecursiveSummarizationCompactionStrategy({
    chatClient,
    maxEventsToKeep: 2,
    overlapSize: 1,
    tokenCountEstimator: est,
    logger: silentLogger,
  });
const usage = (promptTokens: number, completionTokens: number, cachedPromptTokens?: number): ChatUsage => ({
  promptTokens,
  completionTokens,
  totalTokens: promptTokens + completionTokens,
  ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
});

describe('summariser usage on CompactionResult', () => {
  it('carries the tokens the client reported for its own call, cached prompt tokens included', async () => {
    const result = await recursive(new MeteredChatClient([{ text: 'sum', usage: usage(900, 50, 128) }])).compact(
      compactionRequest(turns(4)),
    );
    expect(result.isNoop()).to.equal(false);
    expect(result.usage).to.include({
      summarizerCalls: 1,
      summarizerInputTokens: 900,
      summarizerCachedInputTokens: 128,
      summarizerOutputTokens: 50,
      inputTokens: 0,
      outputTokens: 0,
    });
  });

  it('counts the call but no tokens when the client reports no usage (nothing is guessed)', async () => {
    const result = await recursive(new ScriptedChatClient(['a summary'])).compact(compactionRequest(turns(4)));
    expect(result.usage).to.include({ summarizerCalls: 1, summarizerInputTokens: 0, summarizerOutputTokens: 0 });
  });

  it('reports a billed but blank summary on the no-op result', async () => {
    const result = await recursive(new MeteredChatClient([{ text: '  ', usage: usage(700, 3) }])).compact(
      compactionRequest(turns(4)),
    );
    expect(result.isNoop()).to.equal(true);
    expect(result.usage).to.include({ summarizerCalls: 1, summarizerInputTokens: 700, summarizerOutputTokens: 3 });
  });

  it('counts a call that failed without an answer, with no tokens', async () => {
    const result = await recursive(new ScriptedChatClient([new Error('connection reset')])).compact(compactionRequest(turns(4)));
    expect(result.usage).to.include({ summarizerCalls: 1, summarizerInputTokens: 0, summarizerOutputTokens: 0 });
  });

  it('sums a chunk summary and its consolidation (additive)', async () => {
    const strategy = new AdditiveSummarizationCompactionStrategy({
      chatClient: new MeteredChatClient([
        { text: 'chunk summary', usage: usage(400, 20) },
        { text: 'consolidated', usage: usage(100, 10) },
      ]),
      keepTurns: 1,
      maxSummaryTokens: 1,
      tokenCountEstimator: est,
      logger: silentLogger,
    });
    const result = await strategy.compact(compactionRequest(turns(3)));
    expect(result.usage).to.include({ summarizerCalls: 2, summarizerInputTokens: 500, summarizerOutputTokens: 30 });
  });

  it('a pipeline reports the summariser calls of every stage that ran', async () => {
    const pipeline = new CompactionPipeline({
      stages: [
        recursive(new MeteredChatClient([{ text: 'sum', usage: usage(300, 30) }])),
        new TokenCountCompactionStrategy({ maxTokens: 1, tokenCountEstimator: est }),
      ],
      maxTokens: 1,
      tokenCountEstimator: est,
    });
    const result = await pipeline.compact(compactionRequest(turns(4)));
    expect(result.usage).to.include({ summarizerCalls: 1, summarizerInputTokens: 300, summarizerOutputTokens: 30 });
  });

  it('strategies without a summariser report no usage', async () => {
    const result = await new TokenCountCompactionStrategy({ maxTokens: 10, tokenCountEstimator: est }).compact(
      compactionRequest(turns(4)),
    );
    expect(result.usage).to.equal(undefined);
  });
});
