import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  OpenAIChatClient,
  RecursiveSummarizationCompactionStrategy,
  TurnCountTrigger,
  type ChatClient,
} from 'session-compaction';
import { OpenAISessionMemory } from 'session-compaction/openai';
import type { ChatRequest } from 'session-compaction/spi';
import { CHAT_MODEL, harness, silent, type Harness } from './support/harness.js';

/** Wraps the real summariser and records how many of its calls overlap. */
class ConcurrencyCountingChatClient implements ChatClient {
  inFlight = 0;
  maxInFlight = 0;
  calls = 0;
  constructor(private readonly inner: ChatClient) {}
  async call(request: ChatRequest): Promise<string | null> {
    this.calls += 1;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.inner.call(request);
    } finally {
      this.inFlight -= 1;
    }
  }
}

describe('SessionMemory under concurrent requests on one session (Lightspeed decision 10)', function () {
  let h: Harness;
  beforeEach(async function () {
    h = await harness();
  });
  afterEach(async function () {
    await h.close();
  });

  async function run(service: DefaultSessionService) {
    h.server.respondWith((body) =>
      body.model === 'summary-model'
        ? { content: 'SUMMARY so far', delayMs: 25 }
        : { content: `reply to ${String(body.messages?.filter((m) => m.role === 'user').at(-1)?.content)}`, delayMs: 5 },
    );
    const summariser = new ConcurrencyCountingChatClient(
      new OpenAIChatClient({ client: h.client, model: 'summary-model', logger: silent }),
    );
    const memory = new OpenAISessionMemory({
      sessionService: service,
      client: h.client,
      model: CHAT_MODEL,
      logger: silent,
      compactionTrigger: new TurnCountTrigger(2),
      compactionStrategy: new RecursiveSummarizationCompactionStrategy({
        chatClient: summariser,
        maxEventsToKeep: 4,
        overlapSize: 1,
        logger: silent,
      }),
    });
    await memory.call({ sessionId: 'busy', userId: 'u', messages: [{ role: 'user', content: 'warm-up' }] });

    const questions = Array.from({ length: 20 }, (_, i) => `question ${i + 1}`);
    const responses = await Promise.all(
      questions.map((q) => memory.call({ sessionId: 'busy', userId: 'u', messages: [{ role: 'user', content: q }] })),
    );

    const real = (await service.getEvents('busy', EventFilter.realOnly())).map((e) => e.text);
    for (const q of questions) {
      expect(
        real.filter((t) => t === q),
        q,
      ).to.have.length(1);
      expect(
        real.filter((t) => t === `reply to ${q}`),
        `reply to ${q}`,
      ).to.have.length(1);
    }
    expect(real).to.have.length(2 * 21);
    expect(responses.every((r) => r.message.content?.startsWith('reply to question'))).to.equal(true);
    return summariser;
  }

  it('20 concurrent requests start at most one summarisation at a time and lose no message', async function () {
    const summariser = await run(h.service);
    expect(summariser.calls).to.be.greaterThan(0);
    expect(summariser.maxInFlight).to.equal(1);
  });

  it('control: without the per-session lock the same load overlaps summarisations (the counter can see it)', async function () {
    const summariser = await run(new DefaultSessionService(h.repository, { logger: silent, lockCompactions: false }));
    expect(summariser.maxInFlight).to.be.greaterThan(1);
  });
});
