import { expect } from 'chai';
import { PROVIDER_PRESETS } from 'session-compaction/spi';
import { TELEMETRY_ATTRIBUTES as ATTR, TELEMETRY_METRICS as METRIC, TELEMETRY_SPANS as SPAN } from 'session-compaction/telemetry';
import { OpenAIChatClient, RecursiveSummarizationCompactionStrategy, TurnCountTrigger } from 'session-compaction';
import { CHAT_MODEL, harness, silent } from '../chat/support/harness.js';
import { installOtel, type OtelCapture } from '../support/otel.js';

describe('telemetry: what a turn consumed and cost', function () {
  let otel: OtelCapture;
  before(() => (otel = installOtel()));
  after(async () => otel.shutdown());
  beforeEach(() => otel.reset());

  it('puts the turn usage on the turn span and adds it to the token and cost counters', async function () {
    const h = await harness({ prices: PROVIDER_PRESETS['openai-gpt-4.1']!.prices });
    try {
      h.server.enqueue(
        { content: 'a', usage: { prompt_tokens: 1200, completion_tokens: 100 } },
        { content: 'b', usage: { prompt_tokens: 1500, completion_tokens: 80, cached_tokens: 1152 } },
      );
      await h.memory.call({ sessionId: 'cost', messages: [{ role: 'user', content: 'q1' }] });
      otel.reset();
      await h.memory.call({ sessionId: 'cost', messages: [{ role: 'user', content: 'q2' }] });
      const turn = otel.spansNamed(SPAN.TURN)[0]!;
      expect(turn.attributes).to.include({
        [ATTR.USAGE_INPUT_TOKENS]: 1500,
        [ATTR.USAGE_OUTPUT_TOKENS]: 80,
        [ATTR.USAGE_CACHED_INPUT_TOKENS]: 1152,
        [ATTR.USAGE_ESTIMATED_COST]: 0.001912,
        [ATTR.COST_CURRENCY]: 'USD',
      });
      await otel.collect();
      const tokens = (type: string) =>
        otel
          .points(METRIC.TURN_TOKENS)
          .filter((p) => p.attributes[ATTR.TOKEN_TYPE] === type && p.attributes[ATTR.REQUEST_MODEL] === CHAT_MODEL)
          .reduce((n, p) => n + (p.value as number), 0);
      // Counters are cumulative over both turns.
      expect(tokens('input')).to.equal(2700);
      expect(tokens('cached_input')).to.equal(1152);
      expect(tokens('output')).to.equal(180);
      const cost = otel.points(METRIC.ESTIMATED_COST).reduce((n, p) => n + (p.value as number), 0);
      expect(cost).to.be.closeTo(0.0032 + 0.001912, 1e-12);
    } finally {
      await h.close();
    }
  });

  it('counts what compactions cost apart from the turn: cost.source compaction vs turn, and on the turn span', async function () {
    const h = await harness({ prices: PROVIDER_PRESETS['openai-gpt-4.1']!.prices });
    try {
      const summariser = new OpenAIChatClient({
        model: 'summary-model',
        baseURL: h.server.url,
        apiKey: 'k',
        maxRetries: 0,
        logger: silent,
      });
      const memory = h.memoryWith({
        prices: PROVIDER_PRESETS['openai-gpt-4.1']!.prices,
        summarizerPrices: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
        compactionTrigger: new TurnCountTrigger(2),
        compactionStrategy: new RecursiveSummarizationCompactionStrategy({
          chatClient: summariser,
          maxEventsToKeep: 2,
          overlapSize: 1,
          logger: silent,
        }),
      });
      h.server.enqueue(
        { content: 'a1', usage: { prompt_tokens: 1200, completion_tokens: 100 } },
        { content: 'a2', usage: { prompt_tokens: 1500, completion_tokens: 80 } },
        { content: 'a3', usage: { prompt_tokens: 1800, completion_tokens: 60 } },
        { content: 'the summary', usage: { prompt_tokens: 900, completion_tokens: 50 } },
      );
      const cost = (source: string) =>
        otel
          .points(METRIC.ESTIMATED_COST)
          .filter((p) => p.attributes[ATTR.COST_SOURCE] === source)
          .reduce((n, p) => n + (p.value as number), 0);
      for (const q of ['q1', 'q2']) await memory.call({ sessionId: 'split', messages: [{ role: 'user', content: q }] });
      await otel.collect();
      // Counters are cumulative (over the earlier tests too): the third turn's share is the difference.
      const turnBefore = cost('turn');
      const compactionBefore = cost('compaction');
      otel.reset();
      await memory.call({ sessionId: 'split', messages: [{ role: 'user', content: 'q3' }] });
      // The summary: 900 × $0.15/M + 50 × $0.60/M = $0.000165; the call: 1,800 × $2/M + 60 × $8/M = $0.00408.
      const turn = otel.spansNamed(SPAN.TURN)[0]!;
      expect(turn.attributes[ATTR.USAGE_ESTIMATED_COMPACTION_COST]).to.be.closeTo(0.000165, 1e-12);
      await otel.collect();
      expect(cost('compaction') - compactionBefore).to.be.closeTo(0.000165, 1e-12);
      expect(cost('turn') - turnBefore).to.be.closeTo(0.00408, 1e-12);
    } finally {
      await h.close();
    }
  });
});
