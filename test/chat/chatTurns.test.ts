import { expect } from 'chai';
import OpenAI from 'openai';
import { EventFilter, OpenAIChatClient } from 'session-compaction';
import { METADATA_FINISH_REASON, METADATA_INCOMPLETE } from 'session-compaction/spi';
import { harness, silent, type Harness } from './support/harness.js';

const REPLY = 'The first part of a long answer, then the second part, then a conclusion.';

async function drain(iterable: AsyncIterable<unknown>, stopAfterChunks = Number.POSITIVE_INFINITY): Promise<unknown> {
  let chunks = 0;
  try {
    for await (const item of iterable) {
      if ((item as { type: string }).type === 'chunk' && ++chunks >= stopAfterChunks) break;
    }
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('chat turns that do not finish', function () {
  let h: Harness;
  beforeEach(async () => (h = await harness()));
  afterEach(() => h.close());

  const stored = async () => (await h.service.getEvents('s', EventFilter.of({ messageTypes: ['assistant'] }))).map((e) => e);

  it('a stream the caller aborts stores what was received, marked incomplete with finishReason "aborted"', async function () {
    h.server.enqueue({ content: REPLY, chunkDelayMs: 40 });
    const controller = new AbortController();
    let chunks = 0;
    let error: unknown;
    try {
      for await (const item of h.memory.stream({
        sessionId: 's',
        messages: [{ role: 'user', content: 'explain' }],
        signal: controller.signal,
      })) {
        if (item.type === 'chunk' && ++chunks === 3) controller.abort();
      }
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).to.equal('AbortError');
    const [reply] = await stored();
    expect(reply!.text!.length).to.be.greaterThan(0);
    expect(REPLY.startsWith(reply!.text!)).to.equal(true);
    expect(reply!.text).to.not.equal(REPLY);
    expect(reply!.metadata[METADATA_INCOMPLETE]).to.equal(true);
    expect(reply!.metadata[METADATA_FINISH_REASON]).to.equal('aborted');
  });

  it('a stream that fails half way stores what was received with finishReason "error", and the caller sees the failure', async function () {
    h.server.enqueue({ content: REPLY, breakAfterChunks: 3 });
    const error = await drain(h.memory.stream({ sessionId: 's', messages: [{ role: 'user', content: 'explain' }] }));
    expect(error).to.be.instanceOf(Error);
    const [reply] = await stored();
    expect(reply!.text).to.equal(REPLY.slice(0, 24));
    expect(reply!.metadata).to.deep.include({ incomplete: true, finishReason: 'error' });
  });

  it('a consumer that stops reading early aborts the call; the partial reply is stored incomplete', async function () {
    h.server.enqueue({ content: REPLY, chunkDelayMs: 30 });
    await drain(h.memory.stream({ sessionId: 's', messages: [{ role: 'user', content: 'explain' }] }), 3);
    // The producer stores the partial reply after the iteration has ended.
    let replies = await stored();
    for (let i = 0; i < 50 && replies.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      replies = await stored();
    }
    expect(replies).to.have.length(1);
    expect(replies[0]!.metadata).to.deep.include({ incomplete: true, finishReason: 'aborted' });
  });

  it('a reply the API cut short (finish_reason "length") is stored marked incomplete', async function () {
    h.server.enqueue({ content: 'a truncated', finishReason: 'length' });
    await h.memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'explain' }] });
    const [reply] = await stored();
    expect(reply!.text).to.equal('a truncated');
    expect(reply!.metadata).to.deep.include({ incomplete: true, finishReason: 'length' });
  });

  it('a complete reply carries no incomplete marker', async function () {
    h.server.enqueue({ content: REPLY });
    await drain(h.memory.stream({ sessionId: 's', messages: [{ role: 'user', content: 'explain' }] }));
    const [reply] = await stored();
    expect(reply!.text).to.equal(REPLY);
    expect(reply!.metadata[METADATA_INCOMPLETE]).to.equal(undefined);
  });

  it('the next prompt shows the interrupted reply as interrupted', async function () {
    h.server.enqueue({ content: REPLY, breakAfterChunks: 2 });
    await drain(h.memory.stream({ sessionId: 's', messages: [{ role: 'user', content: 'explain' }] }));
    h.server.enqueue({ content: 'ok' });
    await h.memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'go on' }] });
    const prompt = h.chatRequests().at(-1)!.messages!;
    const assistant = prompt.find((m) => m.role === 'assistant');
    expect(assistant!.content).to.equal(`${REPLY.slice(0, 16)}\n\n[this reply was interrupted (error) and is incomplete]`);
  });

  describe('timeouts and signals reach every model call, whoever built the client', function () {
    it('SessionMemory over a caller-built client with a ten-minute timeout gives up after its own timeoutMs', async function () {
      const patient = new OpenAI({ baseURL: h.server.url, apiKey: 'k', maxRetries: 0, timeout: 600_000 });
      const memory = h.memoryWith({ client: patient, timeoutMs: 300 });
      for (const streaming of [false, true]) {
        h.server.enqueue({ content: 'never', delayMs: 20_000 });
        const started = Date.now();
        const request = { sessionId: `t-${streaming}`, messages: [{ role: 'user' as const, content: 'hello?' }] };
        const error = streaming
          ? await drain(memory.stream(request))
          : await memory.call(request).then(
              () => undefined,
              (e: unknown) => e,
            );
        expect((error as Error).constructor.name, String(streaming)).to.equal('APIConnectionTimeoutError');
        expect(Date.now() - started, String(streaming)).to.be.below(5_000);
      }
    });

    it('the caller’s AbortSignal stops a non-streaming call at once, and nothing of the reply is stored', async function () {
      h.server.enqueue({ content: 'late', delayMs: 20_000 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const started = Date.now();
      const error = await h.memory
        .call({ sessionId: 's', messages: [{ role: 'user', content: 'hi' }], signal: controller.signal })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect((error as Error).constructor.name).to.equal('APIUserAbortError');
      expect(Date.now() - started).to.be.below(5_000);
      expect(await stored()).to.deep.equal([]);
    });

    it('OpenAIChatClient sends its timeout on every request, also through a client the caller built', async function () {
      const patient = new OpenAI({ baseURL: h.server.url, apiKey: 'k', maxRetries: 0, timeout: 600_000 });
      const summarizer = new OpenAIChatClient({ model: 'summarizer', client: patient, timeoutMs: 300, logger: silent });
      h.server.enqueue({ content: 'never', delayMs: 20_000 });
      const started = Date.now();
      const error = await summarizer.call({ user: 'summarise' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as { kind?: string }).kind).to.equal('timeout');
      expect(Date.now() - started).to.be.below(5_000);
    });
  });
});
