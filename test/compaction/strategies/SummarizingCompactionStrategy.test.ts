import { expect } from 'chai';
import {
  CompactionRequest,
  InvalidArgumentError,
  RecursiveSummarizationCompactionStrategy,
  SummarizationError,
  type ChatClient,
  type Logger,
} from 'session-compaction';
import type { ChatRequest, RecursiveSummarizationCompactionStrategyOptions } from 'session-compaction/spi';
import { A, CharEstimator, U, expectThrows, fixtureSession } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

/** Every log line, to check what an operator is told. */
class RecordingLogger implements Logger {
  readonly lines: Array<{ level: string; message: string; meta: Record<string, unknown> | undefined }> = [];
  error(message: string, meta?: Record<string, unknown>) {
    this.lines.push({ level: 'error', message, meta });
  }
  warn(message: string, meta?: Record<string, unknown>) {
    this.lines.push({ level: 'warn', message, meta });
  }
  info(message: string, meta?: Record<string, unknown>) {
    this.lines.push({ level: 'info', message, meta });
  }
  debug(message: string, meta?: Record<string, unknown>) {
    this.lines.push({ level: 'debug', message, meta });
  }
}

/** Four events, of which the first two leave with maxEventsToKeep 2. */
const conversation = () => [U('q1'), A('a1'), U('q2'), A('a2')];

function recursive(chatClient: ChatClient, options: Partial<RecursiveSummarizationCompactionStrategyOptions> = {}) {
  return new RecursiveSummarizationCompactionStrategy({
    chatClient,
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
    ...options,
  });
}

/** The error a failed summary reports to onSummarizationFailure. */
async function failureOf(client: ChatClient, options: Partial<RecursiveSummarizationCompactionStrategyOptions> = {}) {
  const errors: SummarizationError[] = [];
  const strategy = recursive(client, { ...options, onSummarizationFailure: (_r, e) => errors.push(e) });
  const result = await strategy.compact(CompactionRequest.of(fixtureSession(), conversation()));
  expect(result.isNoop()).to.equal(true);
  expect(errors).to.have.length(1);
  return errors[0]!;
}

describe('summarising strategies: the shared path from a model call to a summary', function () {
  it('refuses missing options and a chat client without a call method', function () {
    expectThrows(
      () => new RecursiveSummarizationCompactionStrategy(null as unknown as RecursiveSummarizationCompactionStrategyOptions),
      InvalidArgumentError,
      'chatClient must not be null',
    );
    expectThrows(
      () => new RecursiveSummarizationCompactionStrategy(undefined as unknown as RecursiveSummarizationCompactionStrategyOptions),
      InvalidArgumentError,
      'chatClient must not be null',
    );
    expectThrows(() => recursive(undefined as unknown as ChatClient), InvalidArgumentError, 'chatClient must not be null');
    expectThrows(() => recursive({} as ChatClient), InvalidArgumentError, 'chatClient must have a call method');
  });

  it('adds the instructions of beforeCompaction hooks to the system prompt, one per line', async function () {
    const client = new ScriptedChatClient(['summary']);
    const request = CompactionRequest.of(fixtureSession(), conversation(), { instructions: ['keep order ids', 'be brief'] });
    await recursive(client).compact(request);
    expect(client.requests[0]!.system).to.match(/\n\nAdditional instructions for this summary:\n- keep order ids\n- be brief$/);
    await recursive(client).compact(CompactionRequest.of(fixtureSession(), conversation()));
    expect(client.requests[1]!.system).to.not.contain('Additional instructions');
  });

  it('commits the summary trimmed, and the quality gate judges it trimmed', async function () {
    const judged: string[] = [];
    const gate = { check: (summary: string) => (judged.push(summary), { ok: true, reasons: [] }) };
    const result = await recursive(new ScriptedChatClient(['  the summary \n']), { qualityGate: gate }).compact(
      CompactionRequest.of(fixtureSession(), conversation()),
    );
    expect(result.compactedEvents[1]!.text).to.equal('the summary');
    expect(judged).to.deep.equal(['the summary']);
  });

  it('a blank answer is a failure of kind blank that says the summariser returned no text', async function () {
    const error = await failureOf(new ScriptedChatClient(['  ']));
    expect(error.kind).to.equal('blank');
    expect(error.message).to.equal('summarizer returned no text');
  });

  it('a summary the quality gate rejects is a failure of kind quality, listing its reasons', async function () {
    const gate = { check: () => ({ ok: false, reasons: ['too short', 'no ids'] }) };
    const error = await failureOf(new ScriptedChatClient(['s']), { qualityGate: gate });
    expect(error.kind).to.equal('quality');
    expect(error.message).to.equal('summary rejected by the quality gate: too short; no ids');
  });

  it("a client's own SummarizationError reaches the listener as it is", async function () {
    const thrown = new SummarizationError('rate limited', { kind: 'http', status: 429 });
    const error = await failureOf(new ScriptedChatClient([thrown]));
    expect(error).to.equal(thrown);
  });

  it('any other rejection is a connection failure carrying the cause', async function () {
    const cause = new Error('socket hang up');
    const error = await failureOf(new ScriptedChatClient([cause]));
    expect(error.kind).to.equal('connection');
    expect(error.message).to.equal('summarizer failed: socket hang up');
    expect(error.cause).to.equal(cause);
  });

  it('a failed summary is logged as a warning naming the strategy, the session, the mode and the kind', async function () {
    const logger = new RecordingLogger();
    await recursive(new ScriptedChatClient([null]), { logger, failureMode: 'skip' }).compact(
      CompactionRequest.of(fixtureSession(), conversation()),
    );
    expect(logger.lines).to.deep.equal([
      {
        level: 'warn',
        message: 'summarization failed; no events lost',
        meta: {
          strategy: 'RecursiveSummarizationCompactionStrategy',
          sessionId: fixtureSession().id,
          failureMode: 'skip',
          kind: 'blank',
          error: 'summarizer returned no text',
        },
      },
    ]);
  });

  it('a failure listener that throws is logged and ignored: the compaction still completes', async function () {
    const logger = new RecordingLogger();
    const strategy = recursive(new ScriptedChatClient([null]), {
      logger,
      onSummarizationFailure: () => {
        throw new Error('listener bug');
      },
    });
    const result = await strategy.compact(CompactionRequest.of(fixtureSession(), conversation()));
    expect(result.skipReason).to.equal('summarization-failed');
    expect(logger.lines.map((l) => [l.message, l.meta?.error])).to.deep.include([
      'onSummarizationFailure threw; ignored',
      'Error: listener bug',
    ]);
  });

  it('with a custom eventFormatter the saving is the estimate of what the formatter renders', async function () {
    const result = await recursive(new ScriptedChatClient(['s']), { eventFormatter: (e) => `<${e.text ?? ''}>` }).compact(
      CompactionRequest.of(fixtureSession(), conversation()),
    );
    // '<q1>' and '<a1>', four characters each with the character estimator.
    expect(result.tokensEstimatedSaved).to.equal(8);
  });

  it('a preview shows the summary as a non-blank placeholder and calls no model', async function () {
    const client = new ScriptedChatClient(['s']);
    const preview = await recursive(client).preview(CompactionRequest.of(fixtureSession(), conversation()));
    expect(preview.result.compactedEvents[1]!.text).to.equal('[preview: the summary would go here]');
    expect(preview.modelCalled).to.equal(false);
    expect(client.callCount).to.equal(0);
  });

  it('passes no output cap when none is set, and the one set otherwise', async function () {
    const client = new ScriptedChatClient(['s']);
    await recursive(client).compact(CompactionRequest.of(fixtureSession(), conversation()));
    await recursive(client, { maxSummaryTokens: 50 }).compact(CompactionRequest.of(fixtureSession(), conversation()));
    const caps = client.requests.map((r: ChatRequest) => r.maxTokens);
    expect(caps).to.deep.equal([undefined, 50]);
    expect(client.requests[0]).to.not.have.property('maxTokens');
  });
});
