/**
 * The studio's server without a browser: loopback only, the access token on every request, the Host check,
 * read-only unless --allow-writes, CSRF on writes, methods per route, and the `studio` command end to end.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import {
  createDefaultLogger,
  DefaultSessionService,
  Messages,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
} from 'session-compaction';
import { startStudio, type RunningStudio } from '../../../cli/src/studio/startStudio.js';
import { main } from '../../../cli/src/main.js';
import { silentLogger } from '../../summarization/support.js';

const logger = createDefaultLogger({ level: 'error', silent: true });

/** A raw request, so that the Host header can be anything. */
function raw(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('studio server', function () {
  let dir: string;
  let path: string;
  let compactionId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'studio-server-'));
    path = join(dir, 'store.db');
    const repository = new SqliteSessionRepository({ path, logger: silentLogger });
    const service = new DefaultSessionService(repository, { logger: silentLogger });
    await service.create({ id: 's1', userId: 'alice' });
    for (let i = 0; i < 6; i++)
      await service.appendMessage('s1', i % 2 === 0 ? Messages.user(`q${i}`) : Messages.assistant(`a${i}`));
    await service.compact('s1', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
    compactionId = (await service.listCompactions!('s1'))[0]!.id;
    await repository.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('read-only', function () {
    let studio: RunningStudio;
    before(async () => (studio = await startStudio({ url: `sqlite:${path}`, logger })));
    after(async () => studio.close());
    const auth = () => ({ 'X-Studio-Token': studio.token });

    it('listens on the loopback address only, with a token of 256 random bits', function () {
      expect(new URL(studio.url).hostname).to.equal('127.0.0.1');
      expect(Buffer.from(studio.token, 'base64url')).to.have.length(32);
      expect(new URL(studio.url).searchParams.get('token')).to.equal(studio.token);
    });

    it('turns the token of the URL into an HttpOnly SameSite=Strict cookie and redirects to the URL without it', async function () {
      const response = await fetch(`${studio.origin}/session?id=s1&token=${studio.token}`, { redirect: 'manual' });
      expect(response.status).to.equal(303);
      expect(response.headers.get('location')).to.equal('/session?id=s1');
      const cookie = response.headers.get('set-cookie')!;
      expect(cookie)
        .to.match(/^sc_studio_\d+=/)
        .and.to.contain('HttpOnly')
        .and.to.contain('SameSite=Strict');
      const port = new URL(studio.origin).port;
      const page = await fetch(`${studio.origin}/session?id=s1`, { headers: { Cookie: `sc_studio_${port}=${studio.token}` } });
      expect(page.status).to.equal(200);
    });

    it('refuses a wrong token in the URL without setting a cookie', async function () {
      const response = await fetch(`${studio.origin}/?token=nope`, { redirect: 'manual' });
      expect(response.status).to.equal(403);
      expect(response.headers.get('set-cookie')).to.equal(null);
    });

    it('refuses a Host header that is not the loopback address (DNS rebinding)', async function () {
      const port = new URL(studio.origin).port;
      expect(await raw(`${studio.origin}/`, { ...auth(), Host: `evil.example:${port}` })).to.equal(403);
      expect(await raw(`${studio.origin}/`, { ...auth(), Host: `localhost:${port}` })).to.equal(200);
    });

    it('accepts the token as a bearer header too', async function () {
      expect((await fetch(`${studio.origin}/`, { headers: { Authorization: `Bearer ${studio.token}` } })).status).to.equal(200);
    });

    it('sends a Content-Security-Policy without inline script or style, and no caching', async function () {
      const response = await fetch(`${studio.origin}/`, { headers: auth() });
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).to.contain("script-src 'self'").and.to.contain("style-src 'self'").and.to.contain("frame-ancestors 'none'");
      expect(csp).not.to.contain('unsafe-inline');
      expect(response.headers.get('cache-control')).to.equal('no-store');
      expect(await response.text()).not.to.match(/<script>|style="/);
    });

    it('refuses a write with the right CSRF token when started without --allow-writes, and shows no revert button', async function () {
      const response = await fetch(`${studio.origin}/compactions/revert`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: studio.server.csrfToken, id: 's1', compactionId }).toString(),
      });
      expect(response.status).to.equal(403);
      expect(await response.text()).to.contain('read-only');
      const page = await (await fetch(`${studio.origin}/compactions?id=s1`, { headers: auth() })).text();
      expect(page).to.contain('<button type="button" disabled').and.not.to.contain('action="/compactions/revert"');
      const repository = new SqliteSessionRepository({ path, logger: silentLogger });
      expect((await repository.listCompactions('s1'))[0]!.revertedAt).to.equal(null);
      await repository.close();
    });

    it('answers 404 for a missing session or page and 405 for a view posted to', async function () {
      expect((await fetch(`${studio.origin}/session?id=nope`, { headers: auth() })).status).to.equal(404);
      expect((await fetch(`${studio.origin}/nowhere`, { headers: auth() })).status).to.equal(404);
      expect((await fetch(`${studio.origin}/session?id=s1`, { method: 'POST', headers: auth() })).status).to.equal(405);
    });

    it('answers 400 for a bad parameter', async function () {
      expect((await fetch(`${studio.origin}/prompt?id=s1&max=-3`, { headers: auth() })).status).to.equal(400);
      expect((await fetch(`${studio.origin}/preview?id=s1&setup=profile:nope`, { headers: auth() })).status).to.equal(400);
      expect((await fetch(`${studio.origin}/session`, { headers: auth() })).status).to.equal(400);
    });
  });

  it('refuses a store that does not exist instead of creating one', async function () {
    const missing = join(dir, 'missing.db');
    let error: unknown;
    await startStudio({ url: `sqlite:${missing}`, logger }).catch((e: unknown) => (error = e));
    expect(String(error)).to.contain('no SQLite store');
  });

  it('opens the repository and window of a configuration file', async function () {
    const config = join(dir, 'studio.yaml');
    writeFileSync(config, `repository:\n  kind: sqlite\n  path: ${path}\ncontextWindowTokens: 32000\n`);
    const studio = await startStudio({ config, logger });
    try {
      expect(studio.context.contextWindowTokens).to.equal(32000);
      const page = await (await fetch(`${studio.origin}/`, { headers: { 'X-Studio-Token': studio.token } })).text();
      expect(page).to.contain('data-session="s1"').and.to.contain('pressure (of 32,000)');
    } finally {
      await studio.close();
    }
  });

  it('`session-compaction studio` prints the URL with the token, serves it, and stops on SIGTERM', async function () {
    let stdout = '';
    let stderr = '';
    let printed: (url: string) => void;
    const url = new Promise<string>((resolve) => (printed = resolve));
    const saved = process.exitCode;
    const before = new Set(process.listeners('SIGTERM'));
    const running = main(['node', 'session-compaction', 'studio', '--url', `sqlite:${path}`, '--no-open'], {
      stdout: (text) => {
        stdout += text;
        const found = /http:\/\/\S+/.exec(stdout)?.[0];
        if (found !== undefined) printed(found);
      },
      stderr: (text) => (stderr += text),
      stderrIsTTY: false,
    });
    // A command that fails before printing must fail the test, not leave it waiting on a URL that never comes.
    const address = await Promise.race([
      url,
      running.then((code) => Promise.reject(new Error(`studio exited with ${code} before printing its URL: ${stderr}`))),
    ]);
    expect(address).to.match(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect((await fetch(address, { redirect: 'manual' })).status).to.equal(303);
    // Only the studio's own handler hears this SIGTERM: the test process may hold others (a library's exit hook,
    // an example server started by another test) that must not run in the middle of the suite.
    const studioHandlers = process.listeners('SIGTERM').filter((l) => !before.has(l));
    process.stderr.write(
      `[studio test] SIGTERM listeners: ${process.listeners('SIGTERM').length}, studio's: ${studioHandlers.length}\n`,
    );
    expect(studioHandlers).to.have.length(1);
    for (const handler of studioHandlers) (handler as () => void)();
    expect(await running).to.equal(0);
    process.exitCode = saved;
    expect(stdout).to.contain('read-only');
    // Stopped: the port no longer answers.
    let refused = false;
    await fetch(address).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });
});
