import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import sinon from 'sinon';
import {
  Bm25Retriever,
  DefaultSessionService,
  EmbeddingRetriever,
  HybridRetriever,
  IllegalStateError,
  InMemorySessionRepository,
  InvalidArgumentError,
  Messages,
  createDefaultLogger,
} from 'session-compaction';
import { localEmbeddings } from 'session-compaction/transformers';
import { writeEmbeddingModel } from '../../support/onnxEmbeddingModel.js';

const logger = createDefaultLogger({ silent: true });

/**
 * Four topics, one axis each, and words that share a topic share its axis: "puppy" and "dog" are the same meaning
 * to this model and different words to BM25. Words outside the vocabulary ("the", "my", identifiers) are [UNK].
 */
const VOCAB: Record<string, number[]> = {
  dog: [1, 0, 0, 0],
  puppy: [1, 0, 0, 0],
  barks: [0.5, 0, 0, 0],
  car: [0, 1, 0, 0],
  engine: [0, 1, 0, 0],
  pizza: [0, 0, 1, 0],
  dinner: [0, 0, 1, 0],
  rain: [0, 0, 0, 2],
};

describe('localEmbeddings (transformers.js, a model on disk)', function () {
  // The first load compiles transformers.js and starts ONNX Runtime: seconds on a shared machine.
  this.timeout(60_000);
  let dir: string;
  let fetchSpy: sinon.SinonStub;

  before(function () {
    dir = writeEmbeddingModel(mkdtempSync(path.join(os.tmpdir(), 'local-embeddings-')), { vocab: VOCAB });
    writeEmbeddingModel(dir, { vocab: { ...VOCAB, dog: [0, 0, 0, 1] }, fileName: 'model_quantized' });
  });
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });
  // Any network access fails the test that made it (and is counted): the model must come from disk only.
  beforeEach(function () {
    fetchSpy = sinon.stub(globalThis, 'fetch').rejects(new Error('no network in these tests'));
  });
  afterEach(function () {
    fetchSpy.restore();
  });

  it('mean-pools the token vectors of each text (padding left out) and normalises them', async function () {
    const embed = localEmbeddings({ modelPath: dir });
    const vectors = await embed(['dog car', 'rain', 'the puppy barks loudly']);
    expect(vectors).to.have.length(3);
    expect(vectors[0]).to.deep.equal([Math.SQRT1_2, Math.SQRT1_2, 0, 0].map((x) => Math.fround(x)));
    expect(vectors[1]).to.deep.equal([0, 0, 0, 1]);
    // (0 + 1 + 0.5 + 0) / 4 tokens on the dog axis, then unit length.
    expect(vectors[2]).to.deep.equal([1, 0, 0, 0]);
    await embed.dispose();
  });

  it('without normalize returns the raw mean; cls and last_token pooling take the first and the last token', async function () {
    const raw = await localEmbeddings({ modelPath: dir, normalize: false })(['dog barks rain']);
    expect(raw[0]!.map((x) => Number(x.toFixed(6)))).to.deep.equal([0.5, 0, 0, Number((2 / 3).toFixed(6))]);
    expect(await localEmbeddings({ modelPath: dir, pooling: 'cls', normalize: false })(['car dog rain'])).to.deep.equal([
      [0, 1, 0, 0],
    ]);
    expect(await localEmbeddings({ modelPath: dir, pooling: 'last_token', normalize: false })(['car rain'])).to.deep.equal([
      [0, 0, 0, 2],
    ]);
  });

  it('gives every text the same vector whatever the batch it is padded in', async function () {
    const texts = ['dog', 'the car engine and the dinner', 'rain rain pizza', 'puppy', 'car'];
    const whole = await localEmbeddings({ modelPath: dir })(texts);
    const byTwo = await localEmbeddings({ modelPath: dir, batchSize: 2 })(texts);
    expect(byTwo).to.deep.equal(whole);
  });

  it('returns the vectors in the order of the texts, though it batches them by length', async function () {
    const texts = ['dog', 'the car engine and the car', 'rain', 'pizza and dinner'];
    const expected = [
      [1, 0, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 0, 1],
      [0, 0, 1, 0],
    ];
    expect(await localEmbeddings({ modelPath: dir })(texts)).to.deep.equal(expected);
    expect(await localEmbeddings({ modelPath: dir, batchSize: 1 })(texts)).to.deep.equal(expected);
  });

  it('embeds a text with no known token (or none at all) as the zero vector, not NaN', async function () {
    const vectors = await localEmbeddings({ modelPath: dir })(['', 'unknown words only']);
    expect(vectors).to.deep.equal([
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
  });

  it('dtype picks the quantised file (onnx/model_quantized.onnx for q8)', async function () {
    const [vector] = await localEmbeddings({ modelPath: dir, dtype: 'q8' })(['dog']);
    expect(vector).to.deep.equal([0, 0, 0, 1]);
  });

  it('reads a relative modelPath from disk (resolved at once), never as the name of a model to download', async function () {
    // The directory's bare name has the shape of a hub model id: it must still be this directory.
    const cwd = process.cwd();
    process.chdir(path.dirname(dir));
    let embed;
    try {
      embed = localEmbeddings({ modelPath: path.basename(dir) });
    } finally {
      process.chdir(cwd);
    }
    expect(await embed(['car'])).to.deep.equal([[0, 1, 0, 0]]);
    expect(fetchSpy.called).to.equal(false);
  });

  it('a missing model file fails with the path and the files it reads, without any download attempt; the next call tries again', async function () {
    const broken = writeEmbeddingModel(mkdtempSync(path.join(os.tmpdir(), 'local-embeddings-broken-')), { vocab: VOCAB });
    try {
      unlinkSync(path.join(broken, 'onnx', 'model.onnx'));
      const embed = localEmbeddings({ modelPath: broken });
      const error = await embed(['dog']).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(IllegalStateError);
      expect((error as Error).message)
        .to.include(broken)
        .and.include('onnx/model.onnx');
      expect(fetchSpy.called).to.equal(false);
      // The failure is not kept: once the file is there, the same function works.
      writeEmbeddingModel(broken, { vocab: VOCAB });
      expect(await embed(['dog'])).to.deep.equal([[1, 0, 0, 0]]);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });

  it('loads the model once for concurrent first calls, and again after dispose', async function () {
    const embed = localEmbeddings({ modelPath: dir });
    const [a, b] = await Promise.all([embed(['dog']), embed(['car'])]);
    expect([a, b]).to.deep.equal([[[1, 0, 0, 0]], [[0, 1, 0, 0]]]);
    await embed.dispose();
    expect(await embed(['pizza'])).to.deep.equal([[0, 0, 1, 0]]);
    await embed.dispose();
  });

  it('rejects invalid options at once and a non-array input on call', async function () {
    expect(() => localEmbeddings({ modelPath: '' })).to.throw(InvalidArgumentError, 'modelPath');
    expect(() => localEmbeddings({ modelPath: dir, pooling: 'max' as never })).to.throw(InvalidArgumentError, 'pooling');
    expect(() => localEmbeddings({ modelPath: dir, dtype: 'fp64' as never })).to.throw(InvalidArgumentError, 'dtype');
    expect(() => localEmbeddings({ modelPath: dir, batchSize: 0 })).to.throw(InvalidArgumentError, 'batchSize');
    expect(() => localEmbeddings({ modelPath: dir, maxInputChars: 1.5 })).to.throw(InvalidArgumentError, 'maxInputChars');
    const error = await localEmbeddings({ modelPath: dir })('dog' as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(InvalidArgumentError);
  });

  describe('in the retrievers', function () {
    async function chat() {
      const service = new DefaultSessionService(new InMemorySessionRepository(), { logger });
      await service.create({ userId: 'u', id: 's' });
      for (const text of [
        'We ordered pizza for dinner again',
        'My puppy barks at the mailman every morning',
        'The build failed with error E4711 in the parser',
        'It will rain all weekend',
      ]) {
        await service.appendMessage('s', Messages.user(text));
      }
      return service;
    }
    const texts = (hits: Array<{ event: { text: string | null } }>) => hits.map((h) => h.event.text);

    it('EmbeddingRetriever finds a paraphrase that shares no word with the question', async function () {
      const service = await chat();
      const request = { sessionId: 's', query: 'How is the dog?', includeActive: true, limit: 1 };
      expect(await new Bm25Retriever({ sessionService: service }).retrieve(request)).to.deep.equal([]);
      const retriever = new EmbeddingRetriever({ sessionService: service, embed: localEmbeddings({ modelPath: dir }) });
      expect(texts(await retriever.retrieve(request))).to.deep.equal(['My puppy barks at the mailman every morning']);
      retriever.close();
    });

    it('HybridRetriever fused with BM25 returns both the exact identifier and the paraphrase', async function () {
      const service = await chat();
      const hybrid = new HybridRetriever({
        retrievers: [
          new Bm25Retriever({ sessionService: service }),
          new EmbeddingRetriever({ sessionService: service, embed: localEmbeddings({ modelPath: dir }), minScore: 0.5 }),
        ],
      });
      // Only BM25 knows E4711 (the model has no such word); only the model knows a dog is a puppy.
      const hits = await hybrid.retrieve({ sessionId: 's', query: 'dog E4711', includeActive: true, limit: 2 });
      expect(texts(hits)).to.have.members([
        'The build failed with error E4711 in the parser',
        'My puppy barks at the mailman every morning',
      ]);
    });
  });
});
