import OpenAI from 'openai';
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  InMemorySessionRepository,
  Messages,
  TurnWindowCompactionStrategy,
} from 'session-compaction';
import { OpenAISessionMemory } from 'session-compaction/openai';
import { withArchivedCalls } from '../../src/chat/archivedToolCalls.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from './support/harness.js';

describe('withArchivedCalls: a late result whose call compaction archived', function () {
  let service: DefaultSessionService;
  beforeEach(async function () {
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    await service.create({ id: 's', userId: 'u' });
    // The user moves on from a call (abandoned); compaction archives that turn; the result comes late after all.
    await service.appendMessage('s', Messages.user('confirm my address'), { id: 'u1' });
    await service.appendMessage(
      's',
      Messages.assistant(null, {
        toolCalls: [Messages.toolCall('c1', 'confirm', '{}'), Messages.toolCall('c2', 'lookup', '{}')],
      }),
      { id: 'call' },
    );
    await service.appendMessage('s', Messages.tool([Messages.toolResponse('c2', 'lookup', 'found')]), { id: 'r2' });
    await service.appendMessage('s', Messages.user('never mind, a joke please'), { id: 'u2' });
    await service.appendMessage('s', Messages.assistant('Here is one.'), { id: 'a2' });
    await service.compact('s', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
  });

  it('brings the call back right before the late result, with only the calls whose results are there', async function () {
    await service.appendMessage('s', Messages.tool([Messages.toolResponse('c1', 'confirm', 'confirmed')]), { id: 'late' });
    const window = await service.getEvents('s', EventFilter.active());
    expect(window.map((e) => e.id)).to.deep.equal(['u2', 'a2', 'late']);
    const read = await withArchivedCalls(service, 's', window);
    expect(read.map((e) => e.id)).to.deep.equal(['u2', 'a2', 'call', 'late']);
    expect(read[2]!.message).to.deep.equal(Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'confirm', '{}')] }));
  });

  it("a call brought back keeps its author's name", async function () {
    await service.create({ id: 'named', userId: 'u' });
    const calls = [Messages.toolCall('n1', 'confirm', '{}'), Messages.toolCall('n2', 'lookup', '{}')];
    await service.appendMessage('named', Messages.user('confirm my address'));
    await service.appendMessage('named', Messages.assistant(null, { toolCalls: calls, name: 'agent-7' }), { id: 'call' });
    await service.appendMessage('named', Messages.tool([Messages.toolResponse('n2', 'lookup', 'found')]));
    await service.appendMessage('named', Messages.user('never mind'));
    await service.appendMessage('named', Messages.assistant('Sure.'));
    await service.compact('named', () => true, new TurnWindowCompactionStrategy({ maxTurns: 1 }));
    const window = await service.getEvents('named', EventFilter.active());
    const read = await withArchivedCalls(service, 'named', window, ['n1']);
    expect(read.at(-1)!.message).to.deep.equal(Messages.assistant(null, { toolCalls: [calls[0]!], name: 'agent-7' }));
  });

  it('for a result the request brings, the call goes at the end of the window; nothing is read when nothing is missing', async function () {
    const window = await service.getEvents('s', EventFilter.active());
    expect((await withArchivedCalls(service, 's', window, ['c1'])).map((e) => e.id)).to.deep.equal(['u2', 'a2', 'call']);
    let reads = 0;
    const counting = {
      getEvents: (...args: Parameters<DefaultSessionService['getEvents']>) => (reads++, service.getEvents(...args)),
    };
    expect(await withArchivedCalls(counting, 's', window)).to.deep.equal(window);
    expect(reads).to.equal(0);
  });

  describe('through SessionMemory', function () {
    let server: FakeOpenAIServer;
    beforeEach(async function () {
      server = await startFakeOpenAIServer({ strict: true });
    });
    afterEach(() => server.close());

    it('the late result, sent with the next question, reaches the model with its call and is stored', async function () {
      const memory = new OpenAISessionMemory({
        sessionService: service,
        client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
        model: 'm',
        logger: silent,
      });
      server.enqueue({ content: 'Thanks, address confirmed.' });
      await memory.call({
        sessionId: 's',
        messages: [
          { role: 'tool', tool_call_id: 'c1', content: 'confirmed' },
          { role: 'user', content: 'and my order?' },
        ],
      });
      expect(server.rejections).to.deep.equal([]);
      const sent = server.requests[0]!.messages!;
      const call = sent.findIndex((m) => m.role === 'assistant' && JSON.stringify(m.tool_calls ?? []).includes('c1'));
      expect(sent[call + 1]).to.deep.equal({ role: 'tool', tool_call_id: 'c1', content: 'confirmed' });
      const stored = (await service.getEvents('s', EventFilter.active())).map((e) => e.message.type);
      expect(stored.slice(-3)).to.deep.equal(['tool', 'user', 'assistant']);
    });
  });
});
