import { expect } from 'chai';
import OpenAI from 'openai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  createDefaultLogger,
  EmbeddingRetriever,
  openAIEmbeddings,
} from 'session-compaction';
import { bagOfWordsVector, startFakeOpenAIServer, type FakeOpenAIServer } from '../../support/fakeOpenAIServer.js';

describe('openAIEmbeddings (real openai SDK against a loopback server)', function () {
  let server: FakeOpenAIServer;
  beforeEach(async function () {
    server = await startFakeOpenAIServer();
  });
  afterEach(async function () {
    await server.close();
  });

  it('returns one vector per text in input order, although the server lists them out of order', async function () {
    const embed = openAIEmbeddings({ model: 'text-embedding-3-small', baseURL: server.url, apiKey: 'k' });
    const texts = ['alpha beta', 'gamma', 'delta delta'];
    expect(await embed(texts)).to.deep.equal(texts.map((t) => bagOfWordsVector(t)));
    expect(server.embeddingRequests[0]).to.include({ model: 'text-embedding-3-small', encoding_format: 'float' });
    expect(server.embeddingRequests[0]!.input).to.deep.equal(texts);
  });

  it('uses a given client and sends dimensions when set', async function () {
    const client = new OpenAI({ apiKey: 'k', baseURL: server.url });
    const embed = openAIEmbeddings({ model: 'm', client, dimensions: 64 });
    await embed(['x']);
    expect(server.embeddingRequests[0]).to.include({ dimensions: 64 });
  });

  it('makes no request for no texts, and cuts each text to maxInputChars without splitting a surrogate pair', async function () {
    const embed = openAIEmbeddings({ model: 'm', baseURL: server.url, apiKey: 'k', maxInputChars: 5 });
    expect(await embed([])).to.deep.equal([]);
    expect(server.embeddingRequests).to.have.length(0);
    await embed(['abcdefgh', 'abcd😀x', '']);
    expect(server.embeddingRequests[0]!.input).to.deep.equal(['abcde', 'abcd', ' ']);
  });

  it('surfaces an HTTP failure after the SDK gives up', async function () {
    server.embedWith(() => 400);
    const embed = openAIEmbeddings({ model: 'm', client: new OpenAI({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }) });
    let error: unknown;
    try {
      await embed(['x']);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).to.equal(400);
  });

  it('needs a model, and a key unless a local baseURL is given', async function () {
    expect(() => openAIEmbeddings({ model: '' })).to.throw(InvalidArgumentError, 'model');
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      let error: unknown;
      try {
        await openAIEmbeddings({ model: 'm' })(['x']);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(InvalidArgumentError);
      expect(await openAIEmbeddings({ model: 'm', baseURL: server.url })(['x'])).to.have.length(1);
    } finally {
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
      if (saved.url !== undefined) process.env.OPENAI_BASE_URL = saved.url;
    }
  });

  it('drives an EmbeddingRetriever end to end: the relevant archived event ranks first', async function () {
    const logger = createDefaultLogger({ silent: true });
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
    await service.create({ userId: 'u', id: 's' });
    const otter = await service.appendMessage('s', Messages.user('the otter sleeps holding hands with another otter'));
    await service.appendMessage('s', Messages.user('a heron fishes in the shallow river'));
    const retriever = new EmbeddingRetriever({
      sessionService: service,
      embed: openAIEmbeddings({ model: 'm', baseURL: server.url, apiKey: 'k' }),
    });
    const hits = await retriever.retrieve({ sessionId: 's', userId: 'u', query: 'otter', includeActive: true });
    expect(hits[0]!.event.id).to.equal(otter.id);
    const calls = server.embeddingRequests.length;
    await retriever.retrieve({ sessionId: 's', userId: 'u', query: 'heron river', includeActive: true });
    // The events were embedded by the first search; the second sends the query only.
    expect(server.embeddingRequests.slice(calls).map((r) => r.input)).to.deep.equal([['heron river']]);
  });
});
