import { expect } from 'chai';
import { PROVIDER_PRESETS } from 'session-compaction/spi';
import { TELEMETRY_ATTRIBUTES as ATTR, TELEMETRY_METRICS as METRIC, TELEMETRY_SPANS as SPAN } from 'session-compaction/telemetry';
import { CHAT_MODEL, harness } from '../chat/support/harness.js';
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
});
