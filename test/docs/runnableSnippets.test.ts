import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../support/fakeAnthropicServer.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { PG_URL, REDIS_URL, servicesRequired, skipWithReason } from '../support/services.js';

/**
 * Every snippet and command the docs mark `<!-- runnable -->` (the line right before its code fence) runs here as
 * written, so a renamed option or a stale flag fails CI instead of a reader. TypeScript snippets run through tsx
 * from a folder inside the repository (their `session-compaction` imports resolve to the source), shell blocks
 * run with bash -e; both in a fresh working directory, with OPENAI_BASE_URL / ANTHROPIC_BASE_URL pointing at
 * loopback fakes and PG_URL / REDIS_URL at the test servers. `<!-- runnable: postgres -->` or `redis` marks a
 * snippet that needs that server: skipped with a visible message when it is unreachable, failed under CI.
 * A snippet that continues the text around it names what it takes from there, `<!-- runnable: with sessions,
 * sessionId -->`: the test defines exactly those names (CONTEXT below) before the snippet's own code.
 */

/**
 * What a fragment may take from the text around it. `session` is a conversation whose first turns (a locker code)
 * were archived by a compaction, so recall has something to find.
 */
const CONTEXT: Record<string, { needs?: readonly string[]; code: string }> = {
  repository: { code: 'const repository = new __sc.InMemorySessionRepository();' },
  sessions: { needs: ['repository'], code: 'const sessions = new __sc.DefaultSessionService(repository);' },
  service: { needs: ['sessions'], code: 'const service = sessions;' },
  sessionService: { needs: ['sessions'], code: 'const sessionService = sessions;' },
  userId: { code: "const userId = 'alice';" },
  session: {
    needs: ['sessions', 'userId'],
    code: [
      'const session = await sessions.create({ userId });',
      "await sessions.appendMessage(session.id, __sc.Messages.user('My locker code is 4711.'));",
      "await sessions.appendMessage(session.id, __sc.Messages.assistant('Noted: locker 4711.'));",
      'for (let i = 1; i <= 6; i++) {',
      '  await sessions.appendMessage(session.id, __sc.Messages.user(`Question ${i}?`));',
      '  await sessions.appendMessage(session.id, __sc.Messages.assistant(`Answer ${i}.`));',
      '}',
      'await sessions.compact(session.id, () => true, new __sc.SlidingWindowCompactionStrategy({ maxEvents: 4 }));',
    ].join('\n'),
  },
  sessionId: { needs: ['session'], code: 'const sessionId = session.id;' },
  client: { code: "const client = new (await import('openai')).default();" },
  chatClient: { code: "const chatClient = new __sc.OpenAIChatClient({ model: 'gpt-4o-mini' });" },
  message: { code: "const message = __sc.Messages.user('Hello');" },
  messageId: { code: "const messageId = 'message-1';" },
  meter: { code: 'const meter = { add: (..._args: unknown[]) => undefined };' },
  audit: { code: 'const audit = { record: (_entry: unknown) => undefined };' },
  DAY: { code: 'const DAY = 86_400_000;' },
  compactionTrigger: { code: 'const compactionTrigger = new __sc.TokenCountTrigger({ threshold: 60_000 });' },
  compactionStrategy: {
    code: 'const compactionStrategy = new __sc.TokenCountCompactionStrategy({ maxTokens: 20_000 });',
  },
};

const SEED_SESSIONS_DB = `import { DefaultSessionService, Messages } from 'session-compaction';
import { SqliteSessionRepository } from 'session-compaction/sqlite';
const repository = new SqliteSessionRepository({ path: './sessions.db' });
const sessions = new DefaultSessionService(repository);
for (const userId of ['alice', 'user-4711']) {
  const session = await sessions.create({ userId });
  for (let i = 1; i <= 4; i++) {
    await sessions.appendMessage(session.id, Messages.user('Question ' + i + '?'));
    await sessions.appendMessage(session.id, Messages.assistant('Answer ' + i + '.'));
  }
}
await repository.close();
`;

export function contextPrelude(names: readonly string[]): string {
  const order: string[] = [];
  const visit = (name: string): void => {
    const entry = CONTEXT[name];
    if (entry === undefined) throw new Error(`unknown context name '${name}' (known: ${Object.keys(CONTEXT).join(', ')})`);
    if (order.includes(name)) return;
    for (const need of entry.needs ?? []) visit(need);
    order.push(name);
  };
  for (const name of names) if (name !== 'sessions.db') visit(name);
  if (order.length === 0) return '';
  return ["import * as __sc from 'session-compaction';", ...order.map((name) => CONTEXT[name]!.code), ''].join('\n');
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tsxLoader = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
const MARKER = /^<!--\s*runnable(?::\s*([A-Za-z., ]+))?\s*-->\s*$/;
const FENCE = /^```(ts|typescript|js|javascript|sh|bash)\s*$/;

interface Snippet {
  readonly doc: string;
  readonly line: number;
  readonly language: 'ts' | 'sh';
  readonly needs: readonly string[];
  readonly context: readonly string[];
  readonly code: string;
}

function markdownFiles(): string[] {
  const files = [join(root, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files;
}

export function extractSnippets(doc: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]!);
    if (!marker) continue;
    // Prettier puts a blank line between the comment and the fence.
    let open = i + 1;
    while (lines[open]?.trim() === '') open++;
    const fence = FENCE.exec(lines[open] ?? '');
    if (!fence) throw new Error(`${doc}:${i + 1}: <!-- runnable --> must be followed by a ts/js/sh code fence`);
    const end = lines.findIndex((l, j) => j > open && l.startsWith('```'));
    if (end < 0) throw new Error(`${doc}:${open + 1}: unterminated code fence`);
    const words = (marker[1] ?? '').split(/[\s,]+/).filter((s) => s !== '');
    const withAt = words.indexOf('with');
    const needs = withAt < 0 ? words : words.slice(0, withAt);
    const context = withAt < 0 ? [] : words.slice(withAt + 1);
    const language = fence[1] === 'sh' || fence[1] === 'bash' ? 'sh' : 'ts';
    const code = lines.slice(open + 1, end).join('\n') + '\n';
    snippets.push({ doc, line: open + 1, language, needs, context, code });
    i = end;
  }
  return snippets;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function reachable(name: string): Promise<string | null> {
  try {
    if (name === 'postgres') {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.end();
    } else if (name === 'redis') {
      const { Redis } = await import('ioredis');
      const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
    } else {
      return `unknown requirement '${name}'`;
    }
    return null;
  } catch (error) {
    return `${name} unreachable (${(error as Error).message})`;
  }
}

const snippets = markdownFiles().flatMap((file) => extractSnippets(relative(root, file), readFileSync(file, 'utf8')));

describe('docs: every snippet and command marked runnable runs as written', function () {
  this.timeout(120_000);
  let openai: FakeOpenAIServer;
  let anthropic: FakeAnthropicServer;
  let scratch: string;
  let work: string;

  before(async function () {
    openai = await startFakeOpenAIServer();
    anthropic = await startFakeAnthropicServer();
    // Inside the repository, so `import 'session-compaction'` resolves through the package's self-reference.
    scratch = join(root, 'node_modules', '.cache', 'runnable-snippets');
    mkdirSync(scratch, { recursive: true });
  });

  after(async function () {
    await openai?.close();
    await anthropic?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  beforeEach(function () {
    work = mkdtempSync(join(tmpdir(), 'sc-snippet-'));
  });

  afterEach(function () {
    rmSync(work, { recursive: true, force: true });
  });

  it('the docs mark at least one runnable snippet in the README and in the guides', function () {
    expect(snippets.some((s) => s.doc === 'README.md')).to.equal(true);
    expect(new Set(snippets.map((s) => s.doc)).size).to.be.greaterThan(5);
  });

  it('a marker must sit right before a code fence', function () {
    expect(() => extractSnippets('x.md', '<!-- runnable -->\ntext\n')).to.throw('x.md:1');
  });

  it('a marker names the servers a snippet needs and the names it takes from the text around it', function () {
    const [snippet] = extractSnippets('x.md', '<!-- runnable: postgres with sessionId, chatClient -->\n```ts\nx;\n```\n');
    expect(snippet).to.deep.include({ needs: ['postgres'], context: ['sessionId', 'chatClient'], code: 'x;\n' });
    expect(contextPrelude(['sessionId'])).to.match(
      /const repository[\s\S]*const sessions[\s\S]*const session =[\s\S]*const sessionId/,
    );
    expect(() => contextPrelude(['nope'])).to.throw("unknown context name 'nope'");
  });

  for (const snippet of snippets) {
    it(`${snippet.doc}:${snippet.line} (${snippet.language}${snippet.needs.length ? `, needs ${snippet.needs.join(', ')}` : ''})`, async function () {
      for (const need of snippet.needs) {
        const problem = await reachable(need);
        if (problem === null) continue;
        if (servicesRequired()) throw new Error(`${problem}; CI=true or REQUIRE_SERVICES=1 requires it`);
        skipWithReason(this, `${snippet.doc}:${snippet.line}: ${problem}`);
      }
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --conditions=session-compaction-source`,
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_API_KEY: 'sk-ant-test',
        PG_URL,
        REDIS_URL,
        PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      };
      let result: { code: number | null; output: string };
      if (snippet.language === 'ts') {
        const file = join(scratch, `${snippet.doc.replace(/[^A-Za-z0-9]+/g, '-')}-${snippet.line}.mts`);
        writeFileSync(file, contextPrelude(snippet.context) + snippet.code);
        result = await run(process.execPath, ['--import', tsxLoader, file], work, env, 100_000);
      } else {
        if (snippet.context.includes('sessions.db')) {
          // A shell block that works on an existing store: ./sessions.db with a conversation of alice and of user-4711.
          const seed = join(scratch, 'seed-sessions-db.mts');
          writeFileSync(seed, SEED_SESSIONS_DB);
          const seeded = await run(process.execPath, ['--import', tsxLoader, seed], work, env, 100_000);
          expect(seeded.code, seeded.output).to.equal(0);
        }
        // The tools' own JavaScript then loads the library's source, as the snippets above do.
        const shellEnv = { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import ${tsxLoader}` };
        result = await run('bash', ['-euo', 'pipefail', '-c', snippet.code], work, shellEnv, 100_000);
      }
      expect(result.code, `${snippet.doc}:${snippet.line} exited ${String(result.code)}:\n${result.output}`).to.equal(0);
    });
  }
});
