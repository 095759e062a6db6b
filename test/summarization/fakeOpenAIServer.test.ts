import { expect } from 'chai';
import OpenAI from 'openai';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';

describe('fakeOpenAIServer (test support)', () => {
  let server: FakeOpenAIServer;
  let client: OpenAI;
  beforeEach(async () => {
    server = await startFakeOpenAIServer();
    client = new OpenAI({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  afterEach(() => server.close());

  it('answers a non-streaming completion with the enqueued content and usage, and records the request', async () => {
    server.enqueue({ content: 'hello there', usage: { prompt_tokens: 11, completion_tokens: 2 } });
    const completion = await client.chat.completions.create({
      model: 'm1',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]?.message.content).to.equal('hello there');
    expect(completion.usage).to.include({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
    expect(server.requests).to.have.length(1);
    expect(server.requests[0]?.messages).to.deep.equal([{ role: 'user', content: 'hi' }]);
    expect(server.requestHeaders[0]?.authorization).to.equal('Bearer test-key');
  });

  it('streams SSE deltas that concatenate to the content, with a usage chunk when asked', async () => {
    server.enqueue({ content: 'a longer streamed answer', usage: { prompt_tokens: 5, completion_tokens: 4 } });
    const stream = await client.chat.completions.create({
      model: 'm1',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let deltas = 0;
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) {
        text += piece;
        deltas += 1;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).to.equal('a longer streamed answer');
    expect(deltas).to.be.greaterThan(1);
    expect(usage).to.include({ prompt_tokens: 5, completion_tokens: 4 });
  });

  it('streams tool calls', async () => {
    server.enqueue({ content: null, toolCalls: [{ name: 'get_weather', arguments: '{"location":"Paris"}' }] });
    const stream = await client.chat.completions.create({
      model: 'm1',
      messages: [{ role: 'user', content: 'weather?' }],
      stream: true,
    });
    let name = '';
    let args = '';
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
    }
    expect(name).to.equal('get_weather');
    expect(JSON.parse(args)).to.deep.equal({ location: 'Paris' });
  });

  it('returns non-streaming tool calls', async () => {
    server.enqueue({ content: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.id).to.equal('c1');
    expect(call?.type === 'function' && call.function.name).to.equal('lookup');
    expect(completion.choices[0]?.finish_reason).to.equal('tool_calls');
  });

  it('sends error statuses the SDK maps to typed errors, and uses the default responder when the queue is empty', async () => {
    server.respondWith((body) => ({ content: `echo ${body.model}` }));
    server.enqueue({ status: 503 });
    const error = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).to.equal(503);
    const ok = await client.chat.completions.create({ model: 'zz', messages: [{ role: 'user', content: 'x' }] });
    expect(ok.choices[0]?.message.content).to.equal('echo zz');
  });
});
