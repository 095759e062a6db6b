import { expect } from 'chai';
import OpenAI from 'openai';
import {
  DefaultSessionService,
  SessionMemory,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
  EventFilter,
  RepositoryRetriever,
  TokenCountTrigger,
  type SessionMemoryOptions,
  type SessionRepository,
} from 'session-compaction';
import { METADATA_TOKEN_CALIBRATION, messageText } from 'session-compaction/spi';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { silent } from './support/harness.js';

/** The Java advisor's count for one turn: findById, getEvents, two appends, compact's findById, version and window. */
const JAVA_ADVISOR_ROUND_TRIPS = 7;

/** A real repository whose every method call (each one a round trip to the store) is recorded by name. */
function counting(repository: SessionRepository): { repository: SessionRepository; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(repository, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'close') return value;
      return (...args: unknown[]) => {
        calls.push(property);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { repository: proxy, calls };
}

const user = (content: string) => ({ role: 'user' as const, content });

describe('SessionMemory storage round trips per chat turn', function () {
  let server: FakeOpenAIServer;
  let sqlite: SqliteSessionRepository;
  let calls: string[];
  let memory: SessionMemory;

  beforeEach(async function () {
    server = await startFakeOpenAIServer();
    server.respondWith(() => ({ content: 'an answer', usage: { prompt_tokens: 40, completion_tokens: 3 } }));
    sqlite = new SqliteSessionRepository({ path: ':memory:' });
    const counted = counting(sqlite);
    calls = counted.calls;
    // The calibration and usage totals go through the service (no metadataStore), as a user's setup does.
    memory = new SessionMemory({
      sessionService: new DefaultSessionService(counted.repository, { logger: silent }),
      client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
      model: 'chat-model',
      compactionTrigger: new TokenCountTrigger({ threshold: 100_000 }),
      compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 50 }),
      logger: silent,
    });
    // The first turn creates the session; what follows is the steady state of a conversation.
    await memory.call({ sessionId: 's', messages: [user('first question')] });
    calls.length = 0;
  });
  afterEach(async function () {
    sqlite.close();
    await server.close();
  });

  it('a non-streamed turn with calibration, usage and an unfired trigger makes no more round trips than the Java advisor', async function () {
    await memory.call({ sessionId: 's', messages: [user('second question')] });
    expect(calls.length, calls.join(', ')).to.be.at.most(JAVA_ADVISOR_ROUND_TRIPS);
  });

  it('reads the session record twice per turn: once to resolve it, once to write calibration and usage together (one atomic call)', async function () {
    await memory.call({ sessionId: 's', messages: [user('second question')] });
    expect(calls).to.deep.equal(['findById', 'findEvents', 'appendEvent', 'appendEvent', 'updateSessionMetadata']);
  });

  it('a streamed turn makes as few round trips as a non-streamed one', async function () {
    for await (const _ of memory.stream({ sessionId: 's', messages: [user('second question')] }));
    expect(calls.length, calls.join(', ')).to.be.at.most(JAVA_ADVISOR_ROUND_TRIPS);
  });

  it('a turn with push-down recall reads the session once: the assembler reuses the one the turn resolved', async function () {
    const counted = counting(sqlite);
    const service = new DefaultSessionService(counted.repository, { logger: silent });
    const recalling = new SessionMemory({
      sessionService: service,
      client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
      model: 'chat-model',
      compactionTrigger: new TokenCountTrigger({ threshold: 100_000 }),
      compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 50 }),
      recall: { retriever: new RepositoryRetriever({ repository: counted.repository, sessionService: service }) },
      logger: silent,
    });
    await recalling.call({ sessionId: 's', messages: [user('what was the first question')] });
    expect(counted.calls).to.deep.equal([
      ...['findById', 'findEvents', 'appendEvent'],
      // The search reads its hits' neighbourhoods in the same read (none here: nothing archived matches); the
      // session is not looked up again.
      'searchEventsWithNeighbours',
      ...['appendEvent', 'updateSessionMetadata'],
    ]);
  });

  describe('when the trigger fires or the window is not known', function () {
    const seen: unknown[] = [];
    let counted: { repository: SessionRepository; calls: string[] };
    const memoryWith = (options: Partial<SessionMemoryOptions>) =>
      new SessionMemory({
        sessionService: new DefaultSessionService(counted.repository, { logger: silent }),
        client: new OpenAI({ baseURL: server.url, apiKey: 'k', maxRetries: 0 }),
        model: 'chat-model',
        compactionTrigger: (request) => {
          seen.push(request.session.metadata[METADATA_TOKEN_CALIBRATION]);
          return request.currentEventCount > 3;
        },
        compactionStrategy: new SlidingWindowCompactionStrategy({ maxEvents: 2 }),
        logger: silent,
        ...options,
      });
    beforeEach(function () {
      seen.length = 0;
      counted = counting(sqlite);
    });

    it('a fired trigger compacts from a fresh read of the stored window, asked again about it', async function () {
      const m = memoryWith({});
      await m.call({ sessionId: 'f', messages: [user('one')] });
      counted.calls.length = 0;
      const response = await m.call({ sessionId: 'f', messages: [user('two')] });
      expect(response.compaction?.archivedEvents.map((e) => messageText(e.message))).to.deep.equal(['one', 'an answer']);
      expect(counted.calls).to.deep.equal([
        ...['findById', 'findEvents', 'appendEvent', 'appendEvent', 'updateSessionMetadata'],
        // The version is checked again right before the strategy runs (unchanged here: no second read).
        ...['findById', 'getEventVersion', 'findEvents', 'getEventVersion', 'compactEvents'],
      ]);
      // Once in the first turn; in the second about the turn's window, then about the stored one, then
      // about the window the strategy left (it reached the target: no escalation).
      expect(seen).to.have.length(4);
    });

    it('the trigger sees the calibration sample of the turn that just finished', async function () {
      const m = memoryWith({});
      await m.call({ sessionId: 'c', messages: [user('one')] });
      const stored = (await sqlite.findById('c'))!.metadata[METADATA_TOKEN_CALIBRATION];
      expect(stored).to.not.equal(undefined);
      expect(seen.at(-1)).to.deep.equal(stored);
    });

    it('a history read through an event filter is not the window: the compaction reads it', async function () {
      const m = memoryWith({ eventFilter: EventFilter.realOnly() });
      await m.call({ sessionId: 'r', messages: [user('one')] });
      counted.calls.length = 0;
      await m.call({ sessionId: 'r', messages: [user('two')] });
      expect(counted.calls.slice(5)).to.deep.equal([
        'findById',
        'getEventVersion',
        'findEvents',
        'getEventVersion',
        'compactEvents',
      ]);
    });
  });
});
