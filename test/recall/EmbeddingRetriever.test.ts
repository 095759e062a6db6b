import { expect } from 'chai';
import {
  Bm25Retriever,
  DefaultSessionService,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  createDefaultLogger,
  EmbeddingRetriever,
  type EmbedFunction,
  HybridRetriever,
} from 'session-compaction';
import { bagOfWordsVector } from '../support/fakeOpenAIServer.js';
import { rankingContract } from './rankingContract.js';

const logger = createDefaultLogger({ silent: true });

/** A deterministic embedder that records every text it was asked to embed. */
function recordingEmbed(): EmbedFunction & { texts: string[]; calls: number } {
  const embed = (async (texts: string[]) => {
    embed.calls += 1;
    embed.texts.push(...texts);
    return texts.map((t) => bagOfWordsVector(t, 256));
  }) as EmbedFunction & { texts: string[]; calls: number };
  embed.texts = [];
  embed.calls = 0;
  return embed;
}

async function setup(options: { maxCachedVectors?: number; batchSize?: number } = {}) {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
  const embed = recordingEmbed();
  const retriever = new EmbeddingRetriever({ sessionService: service, embed, ...options });
  const session = await service.create({ userId: 'u', id: 's' });
  return { service, embed, retriever, session };
}

describe('EmbeddingRetriever', function () {
  rankingContract(
    'EmbeddingRetriever (bag-of-words embedder)',
    async () => {
      const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
      return {
        service,
        retriever: new EmbeddingRetriever({ sessionService: service, embed: recordingEmbed() }),
        close: async () => {},
      };
    },
    'refused',
    false,
  );

  it('embeds an event once: a second search embeds only the query', async function () {
    const { service, embed, retriever } = await setup();
    for (const text of ['otters hold hands', 'herons fish alone', 'otters sleep in rafts']) {
      await service.appendMessage('s', Messages.user(text));
    }
    const first = await retriever.retrieve({ sessionId: 's', query: 'otters', includeActive: true });
    expect(first.map((h) => h.event.text)).to.have.members(['otters hold hands', 'otters sleep in rafts']);
    expect(embed.texts).to.have.length(4);
    embed.texts.length = 0;
    await retriever.retrieve({ sessionId: 's', query: 'herons', includeActive: true });
    expect(embed.texts).to.deep.equal(['herons']);
  });

  it('concurrent searches of a cold session embed each event once', async function () {
    const { service, embed, retriever } = await setup();
    for (let i = 0; i < 5; i++) await service.appendMessage('s', Messages.user(`event number ${i}`));
    await Promise.all([1, 2, 3, 4].map(() => retriever.retrieve({ sessionId: 's', query: 'number', includeActive: true })));
    expect(embed.texts.filter((t) => t !== 'number')).to.have.length(5);
  });

  it('keeps at most maxCachedVectors vectors', async function () {
    const { service, retriever } = await setup({ maxCachedVectors: 3 });
    for (let i = 0; i < 10; i++) await service.appendMessage('s', Messages.user(`event number ${i}`));
    const hits = await retriever.retrieve({ sessionId: 's', query: 'number', includeActive: true });
    expect(hits).to.have.length(10);
    expect(retriever.cachedVectors).to.equal(3);
  });

  it('sends at most batchSize texts per embed call', async function () {
    const { service, embed, retriever } = await setup({ batchSize: 4 });
    for (let i = 0; i < 10; i++) await service.appendMessage('s', Messages.user(`event number ${i}`));
    await retriever.retrieve({ sessionId: 's', query: 'number', includeActive: true });
    // One call for the query, three for 10 events.
    expect(embed.calls).to.equal(4);
  });

  it('a failed embed call is not cached: the next search tries again', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
    await service.create({ userId: 'u', id: 's' });
    await service.appendMessage('s', Messages.user('otters'));
    let fail = true;
    const retriever = new EmbeddingRetriever({
      sessionService: service,
      embed: async (texts) => {
        if (fail && texts.some((t) => t.includes('otters'))) throw new Error('rate limited');
        return texts.map((t) => bagOfWordsVector(t));
      },
    });
    let error: unknown;
    try {
      await retriever.retrieve({ sessionId: 's', query: 'otter family', includeActive: true });
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).to.equal('rate limited');
    fail = false;
    expect(await retriever.retrieve({ sessionId: 's', query: 'otters', includeActive: true })).to.have.length(1);
  });

  it('rejects an embed function that returns the wrong number of vectors or non-numbers', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
    await service.create({ userId: 'u', id: 's' });
    await service.appendMessage('s', Messages.user('otters'));
    for (const embed of [async () => [], async (t: string[]) => t.map(() => [Number.NaN])]) {
      const retriever = new EmbeddingRetriever({ sessionService: service, embed });
      let error: unknown;
      try {
        await retriever.retrieve({ sessionId: 's', query: 'otters', includeActive: true });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(IllegalStateError);
    }
  });

  it('refuses to construct without a service or an embed function', function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
    expect(() => new EmbeddingRetriever({ sessionService: service } as never)).to.throw(InvalidArgumentError, 'embed');
    expect(() => new EmbeddingRetriever({ embed: async () => [] } as never)).to.throw(InvalidArgumentError, 'sessionService');
  });
});

describe('HybridRetriever', function () {
  const event = (id: string) => ({ id, sessionId: 's' }) as never;
  const fixed = (ids: string[]) => ({
    retrieve: async () => ids.map((id, i) => ({ event: event(id) as never, score: 100 - i })),
  });

  it('fuses by reciprocal rank: score = Σ weight / (k + rank)', async function () {
    const hybrid = new HybridRetriever({ retrievers: [fixed(['a', 'b', 'c']), fixed(['c', 'a'])], k: 60 });
    const hits = await hybrid.retrieve({ sessionId: 's', query: 'q' });
    const score = Object.fromEntries(hits.map((h) => [(h.event as { id: string }).id, h.score]));
    expect(hits.map((h) => (h.event as { id: string }).id)).to.deep.equal(['a', 'c', 'b']);
    expect(score.a).to.be.closeTo(1 / 61 + 1 / 62, 1e-12);
    expect(score.c).to.be.closeTo(1 / 63 + 1 / 61, 1e-12);
    expect(score.b).to.be.closeTo(1 / 62, 1e-12);
  });

  it('k and weights change the fusion', async function () {
    // With k = 0 a first place dominates; with weight 3 the second retriever decides.
    const top = async (options: { k?: number; weights?: number[] }) =>
      (
        await new HybridRetriever({ retrievers: [fixed(['a', 'b']), fixed(['b', 'c', 'd', 'a'])], ...options }).retrieve({
          sessionId: 's',
          query: 'q',
        })
      ).map((h) => (h.event as { id: string }).id);
    expect((await top({ k: 0 }))[0]).to.equal('b');
    expect((await top({ k: 60, weights: [3, 1] }))[0]).to.equal('a');
  });

  it('asks each retriever for more candidates than the limit, and returns the limit', async function () {
    const asked: number[] = [];
    const spy = { retrieve: async (r: { limit?: number }) => (asked.push(r.limit!), []) };
    await new HybridRetriever({ retrievers: [spy, spy] }).retrieve({ sessionId: 's', query: 'q', limit: 5 });
    expect(asked).to.deep.equal([50, 50]);
    const hits = await new HybridRetriever({ retrievers: [fixed(['a', 'b', 'c']), fixed(['d'])] }).retrieve({
      sessionId: 's',
      query: 'q',
      limit: 2,
    });
    expect(hits).to.have.length(2);
  });

  it('rejects an empty list, a negative k and mismatched weights', function () {
    expect(() => new HybridRetriever({ retrievers: [] })).to.throw(InvalidArgumentError);
    expect(() => new HybridRetriever({ retrievers: [fixed([])], k: -1 })).to.throw(InvalidArgumentError, 'k');
    expect(() => new HybridRetriever({ retrievers: [fixed([])], weights: [1, 2] })).to.throw(InvalidArgumentError, 'weights');
  });

  rankingContract(
    'HybridRetriever (BM25 + embeddings)',
    async () => {
      const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
      const retriever = new HybridRetriever({
        retrievers: [
          new Bm25Retriever({ sessionService: service }),
          new EmbeddingRetriever({ sessionService: service, embed: recordingEmbed() }),
        ],
      });
      return { service, retriever, close: async () => {} };
    },
    'refused',
    false,
  );
});
