import { expect } from 'chai';
import OpenAI from 'openai';
import { DefaultSessionService, InMemorySessionRepository, Messages, toOpenAIMessages } from 'session-compaction';
import { OpenAISessionMemory } from 'session-compaction/openai';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from './support/harness.js';

describe('prompt safety: a log holding orphan tool messages', function () {
  let server: FakeOpenAIServer;
  let service: DefaultSessionService;
  let client: OpenAI;
  const warnings: Array<[string, Record<string, unknown> | undefined]> = [];
  const logger = { ...silent, warn: (m: string, meta?: Record<string, unknown>) => warnings.push([m, meta]) };

  beforeEach(async function () {
    warnings.length = 0;
    server = await startFakeOpenAIServer({ strict: true });
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    client = new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 });
    await service.create({ id: 's', userId: 'u' });
    // A result whose call was archived, then a call whose result was never stored (an interrupted turn).
    await service.appendMessage('s', Messages.tool([Messages.toolResponse('call-archived', 'lookup', '42')]), {
      id: 'orphan-result',
    });
    await service.appendMessage('s', Messages.user('what is the weather?'), { id: 'q1' });
    await service.appendMessage('s', Messages.assistant(null, { toolCalls: [Messages.toolCall('call-lost', 'weather', '{}')] }), {
      id: 'orphan-call',
    });
  });
  afterEach(() => server.close());

  it('the strict fake server, like the real API, refuses the unrepaired prompt with 400', async function () {
    let status: number | undefined;
    try {
      await client.chat.completions.create({
        model: 'm',
        messages: [
          ...toOpenAIMessages(await service.getEvents('s'), { pairToolMessages: false }),
          { role: 'user', content: 'hi' },
        ],
      });
    } catch (error) {
      status = (error as { status?: number }).status;
    }
    expect(status).to.equal(400);
    expect(server.rejections[0]).to.include("must be a response to a preceeding message with 'tool_calls'");
  });

  it('SessionMemory sends a prompt the strict server accepts, logs each repair with the event id, and leaves the log unchanged', async function () {
    const memory = new OpenAISessionMemory({ sessionService: service, client, model: 'm', logger });
    server.enqueue({ content: 'sunny' });
    const before = await service.getEvents('s');
    const response = await memory.call({ sessionId: 's', messages: [{ role: 'user', content: 'and tomorrow?' }] });
    expect(response.message.content).to.equal('sunny');
    expect(server.rejections).to.deep.equal([]);
    const sent = server.requests[0]!.messages!;
    expect(sent.some((m) => m.role === 'tool' && m.tool_call_id === 'call-archived')).to.equal(false);
    expect(sent.find((m) => m.role === 'tool' && m.tool_call_id === 'call-lost')?.content).to.equal(
      '[no result was recorded for this tool call]',
    );
    expect(warnings.map(([, meta]) => meta)).to.deep.equal([
      { eventId: 'orphan-result', toolCallId: 'call-archived' },
      { eventId: 'orphan-call', toolCallId: 'call-lost' },
    ]);
    const after = await service.getEvents('s');
    expect(after.slice(0, before.length).map((e) => e.message)).to.deep.equal(before.map((e) => e.message));
  });

  it('tool results sent with the request still answer the calls of the stored history', async function () {
    const memory = new OpenAISessionMemory({ sessionService: service, client, model: 'm', logger });
    server.enqueue({ content: 'it is 20°C' });
    await memory.call({
      sessionId: 's',
      messages: [{ role: 'tool', tool_call_id: 'call-lost', content: '{"celsius":20}' }],
    });
    expect(server.rejections).to.deep.equal([]);
    const sent = server.requests[0]!.messages!;
    expect(sent.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).to.deep.equal([
      ['call-lost', '{"celsius":20}'],
    ]);
    expect(warnings.map(([, meta]) => meta)).to.deep.equal([{ eventId: 'orphan-result', toolCallId: 'call-archived' }]);
  });
});
