import { expect } from 'chai';
import { CompactionRequest, RecursiveSummarizationCompactionStrategy, type ChatClient } from 'session-compaction';
import type { ChatRequest } from 'session-compaction/spi';
import { configureTelemetry, TELEMETRY_ATTRIBUTES as ATTR } from 'session-compaction/telemetry';
import { A, CharEstimator, U, fixtureSession } from '../../support/fixtures.js';
import { installOtel, type OtelCapture } from '../../support/otel.js';
import { silentLogger } from '../../summarization/support.js';

const compact = (chatClient: ChatClient, maxSummaryTokens?: number) =>
  new RecursiveSummarizationCompactionStrategy({
    chatClient,
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
    ...(maxSummaryTokens !== undefined ? { maxSummaryTokens } : {}),
  }).compact(CompactionRequest.of(fixtureSession(), [U('q1'), A('a1'), U('q2'), A('a2')]));

describe("summarising strategies: the summariser call's span", function () {
  let otel: OtelCapture;
  before(() => (otel = installOtel()));
  after(async () => otel.shutdown());
  beforeEach(() => otel.reset());
  afterEach(() => configureTelemetry({ captureContent: false, enabled: true }));

  it('names the strategy and the output cap, and records the tokens the endpoint reported', async function () {
    const client: ChatClient = {
      model: 'summary-model',
      call: async () => 'unused',
      complete: async () => ({ text: 'the summary', usage: { promptTokens: 120, completionTokens: 7, totalTokens: 127 } }),
    };
    await compact(client, 50);
    const span = otel.spansNamed('chat summary-model')[0]!;
    expect(span.attributes).to.include({
      [ATTR.STRATEGY]: 'RecursiveSummarizationCompactionStrategy',
      [ATTR.REQUEST_MAX_TOKENS]: 50,
      [ATTR.USAGE_INPUT_TOKENS]: 120,
      [ATTR.USAGE_OUTPUT_TOKENS]: 7,
    });
  });

  it('without a cap there is no max-tokens attribute; without reported usage, the estimate of what was sent', async function () {
    const sent: ChatRequest[] = [];
    const client: ChatClient = { model: 'summary-model', call: async (r) => (sent.push(r), 'the summary') };
    await compact(client);
    const span = otel.spansNamed('chat summary-model')[0]!;
    expect(span.attributes).to.not.have.property(ATTR.REQUEST_MAX_TOKENS);
    expect(span.attributes).to.not.have.property(ATTR.USAGE_INPUT_TOKENS);
    // The character estimator: the system prompt and the user prompt as sent, and the answer.
    expect(span.attributes[ATTR.INPUT_TOKENS_ESTIMATED]).to.equal(sent[0]!.system!.length + sent[0]!.user.length);
    expect(span.attributes[ATTR.OUTPUT_TOKENS_ESTIMATED]).to.equal('the summary'.length);
  });

  it('with content capture, the span holds the system and user prompts as sent', async function () {
    configureTelemetry({ captureContent: true });
    const sent: ChatRequest[] = [];
    await compact({ model: 'summary-model', call: async (r) => (sent.push(r), 'the summary') });
    const input = JSON.parse(otel.spansNamed('chat summary-model')[0]!.attributes[ATTR.INPUT_MESSAGES] as string) as Array<{
      role: string;
      parts: Array<{ content: string }>;
    }>;
    expect(input.map((m) => [m.role, m.parts[0]!.content])).to.deep.equal([
      ['system', sent[0]!.system],
      ['user', sent[0]!.user],
    ]);
  });
});
