import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  SessionMemory,
  type Message,
  type SessionEvent,
} from 'session-compaction';
import { METADATA_TOKEN_CALIBRATION, type ChatProvider, type ChatProviderTypes } from 'session-compaction/spi';
import { expectThrows } from '../support/fixtures.js';
import { silent } from './support/harness.js';

/** A chat API of its own: requests are plain strings ("tool:<id>=<data>" answers a call), the reply echoes. */
interface EchoTypes extends ChatProviderTypes {
  message: string;
  params: { prefix?: string; steps?: number };
  prompt: { lines: string[] };
  reply: string;
  usage: { input: number };
  chunk: string;
  completion: string;
}

class EchoProvider implements ChatProvider<EchoTypes> {
  declare readonly types?: EchoTypes;
  readonly prompts: string[][] = [];

  prompt(history: readonly SessionEvent[], messages: readonly string[]): { lines: string[] } {
    return { lines: [...history.map((e) => `${e.messageType}:${e.text ?? ''}`), ...messages] };
  }

  requestMessages(messages: readonly string[]): Message[] {
    return messages.map((m) => Messages.user(m));
  }

  incoming(messages: readonly string[]) {
    const last = messages[messages.length - 1];
    if (last === undefined) return [];
    const [, id, data] = /^tool:(\w+)=(.*)$/.exec(last) ?? [];
    if (id === undefined) return [{ message: Messages.user(last) }];
    // One request message can carry two log entries: the tool result, and the user's words sent with it.
    return [
      { message: Messages.tool([Messages.toolResponse(id, 'lookup', data ?? '')]), metadata: { raw: last } },
      { message: Messages.user(`after ${id}`) },
    ];
  }

  async call(call: { prompt: { lines: string[] }; params: { prefix?: string; steps?: number } }) {
    this.prompts.push(call.prompt.lines);
    const reply = `${call.params.prefix ?? ''}${call.prompt.lines.length} lines`;
    // A multi-step run: a tool call and its result per extra step, then the final answer.
    const steps = Array.from({ length: call.params.steps ?? 0 }, (_, i) => [
      { message: Messages.assistant(null, { toolCalls: [Messages.toolCall(`c${i}`, 'lookup', '{}')] }) },
      { message: Messages.tool([Messages.toolResponse(`c${i}`, 'lookup', `r${i}`)]) },
    ]).flat();
    return {
      reply,
      persist: [...steps, { message: Messages.assistant(reply), metadata: { native: reply } }],
      usage: { input: 40 },
      promptTokens: 40,
      finishReason: 'stop',
      completion: reply,
    };
  }

  async stream(call: { prompt: { lines: string[] }; params: { prefix?: string } }, onChunk: (chunk: string) => void) {
    const outcome = await this.call(call);
    for (const part of outcome.reply.split(' ')) onChunk(part);
    return outcome;
  }
}

describe('SessionMemory over a custom ChatProvider', function () {
  const setup = () => {
    const repository = new InMemorySessionRepository();
    const service = new DefaultSessionService(repository, { logger: silent });
    const provider = new EchoProvider();
    const memory = new SessionMemory({ sessionService: service, provider, model: 'echo', logger: silent });
    return { service, provider, memory };
  };

  it('refuses both a client and a provider', function () {
    const { service, provider } = setup();
    expectThrows(
      () => new SessionMemory({ sessionService: service, provider, client: {} as never, model: 'm' }),
      InvalidArgumentError,
      'set client or provider, not both',
    );
  });

  it('sends the provider its prompt built from the history and passes the request parameters through', async function () {
    const { memory, provider } = setup();
    await memory.call({ sessionId: 's', messages: ['hello'] });
    const response = await memory.call({ sessionId: 's', messages: ['again'], prefix: '> ' });
    expect(provider.prompts[1]).to.deep.equal(['user:hello', 'assistant:1 lines', 'again']);
    expect(response.message).to.equal('> 3 lines');
    expect(response.completion).to.equal('> 3 lines');
  });

  it('appends every incoming entry in order, with its metadata, then the reply with its metadata', async function () {
    const { memory, service } = setup();
    await memory.call({ sessionId: 's', messages: ['hello'] });
    await memory.call({ sessionId: 's', messages: ['tool:c1=42'] });
    const events = await service.getEvents('s');
    expect(events.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(events[2]!.metadata).to.deep.include({ raw: 'tool:c1=42' });
    expect(events[4]!.metadata).to.deep.include({ native: '3 lines' });
  });

  it('appends every message of a multi-step reply, in order', async function () {
    const { memory, service } = setup();
    await memory.call({ sessionId: 's', messages: ['hello'], steps: 2 });
    const events = await service.getEvents('s');
    expect(events.map((e) => e.messageType)).to.deep.equal(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
  });

  it('records the token calibration from the provider-reported prompt tokens', async function () {
    const { memory, service } = setup();
    await memory.call({ sessionId: 's', messages: ['hello'] });
    const session = await service.findById('s');
    expect(session!.metadata[METADATA_TOKEN_CALIBRATION]).to.have.property('samples', 1);
  });

  it('streams the provider chunks and then the response', async function () {
    const { memory } = setup();
    const items: string[] = [];
    for await (const item of memory.stream({ sessionId: 's', messages: ['hello'] })) {
      items.push(item.type === 'chunk' ? item.chunk : item.type);
    }
    expect(items).to.deep.equal(['1', 'lines', 'done']);
  });
});
