/**
 * The studio in a real browser (Debian's headless Chromium through playwright-core) on a SQLite store seeded
 * from the shipped recorded sample: every view, the prompt anatomy against ContextAssembler, a revert through
 * the UI, hostile content, and the access and CSRF checks. With STUDIO_SCREENSHOTS=<dir> the views'
 * screenshots go to that directory (docs/studio/ is made this way); otherwise to a temporary one.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import {
  ContextAssembler,
  createDefaultLogger,
  DefaultSessionService,
  defaultTokenCountEstimator,
  EventFilter,
  Messages,
  RepositoryRetriever,
  SlidingWindowCompactionStrategy,
  SqliteSessionRepository,
} from 'session-compaction';
import { startStudio, type RunningStudio } from '../../../cli/src/studio/startStudio.js';
import { servicesRequired, skipWithReason } from '../../support/services.js';
import { silentLogger } from '../../summarization/support.js';
import { HOSTILE_SESSION, HOSTILE_TEXT, seedStudioStore, type SeededStore } from './seedStudioStore.js';
import { CHROMIUM, chromiumAvailable, launchChromium, type LaunchedBrowser } from './studioBrowser.js';

const WINDOW = 8000;

describe('studio in a browser', function () {
  this.timeout(180_000);
  let dir: string;
  let path: string;
  let seeded: SeededStore;
  let studio: RunningStudio;
  let browser: LaunchedBrowser;
  let page: Page;
  let shots: string;

  before(async function () {
    if (!chromiumAvailable()) {
      if (servicesRequired()) throw new Error(`no Chromium at ${CHROMIUM}; CI=true requires it (apt-get install chromium)`);
      skipWithReason(this, `no Chromium at ${CHROMIUM} (apt-get install chromium): the studio's browser test did not run`);
    }
    dir = mkdtempSync(join(tmpdir(), 'studio-test-'));
    path = join(dir, 'studio.db');
    seeded = await seedStudioStore(path);
    studio = await startStudio({
      url: `sqlite:${path}`,
      allowWrites: true,
      contextWindowTokens: WINDOW,
      logger: createDefaultLogger({ level: 'error' }),
    });
    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    shots = process.env.STUDIO_SCREENSHOTS !== undefined ? resolve(process.env.STUDIO_SCREENSHOTS) : join(dir, 'shots');
    mkdirSync(shots, { recursive: true });
    // The printed URL: its token becomes a cookie, and the address bar loses it.
    await page.goto(studio.url);
  });

  after(async () => {
    await browser?.close();
    await studio?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** A repository of the test's own on the studio's file, to compare what the UI shows with the store. */
  async function withStore<T>(
    work: (repository: SqliteSessionRepository, service: DefaultSessionService) => Promise<T>,
  ): Promise<T> {
    const repository = new SqliteSessionRepository({ path, logger: silentLogger, initializeSchema: false });
    try {
      return await work(repository, new DefaultSessionService(repository, { logger: silentLogger }));
    } finally {
      await repository.close();
    }
  }

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: join(shots, `${name}.png`) });
  }

  it('opens from the printed URL and leaves the token out of the address bar', async function () {
    expect(page.url()).to.equal(`${studio.origin}/`);
    const cookies = await browser.context.cookies(studio.origin);
    expect(cookies.map((c) => [c.httpOnly, c.sameSite])).to.deep.equal([[true, 'Strict']]);
  });

  it('navigates through every view of a recorded session', async function () {
    await page.goto(`${studio.origin}/`);
    const listed = await page
      .locator('table.sessions tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session')));
    expect(listed).to.deep.equal([...seeded.sessionIds, HOSTILE_SESSION].sort());
    await shot('sessions');

    await page.click(`a[href="/session?id=${seeded.compacted}"]`);
    await page.waitForSelector('ol.events');
    const badges = await page.locator('ol.events .badge').allTextContents();
    for (const b of ['active', 'archived', 'pinned', 'summary']) expect(badges).to.include(b);
    // A summary expands to the originals it covers.
    const covers = page.locator('li.is-summary details.covers').first();
    await covers.locator(':scope > summary').click();
    expect(await covers.locator('ol.originals li').count()).to.be.greaterThan(1);
    expect(await page.locator('.pairing').count()).to.be.greaterThan(0);
    await shot('timeline');

    await page.click('nav.tabs a[data-tab="compactions"]');
    expect(await page.locator('table.compactions tbody tr[data-compaction]').count()).to.equal(2);
    expect(await page.locator('svg.chart circle.compaction').count()).to.equal(2);
    await shot('compactions');

    await page.click('nav.tabs a[data-tab="prompt"]');
    await page.fill('input[name="q"]', 'checked bags baggage allowance');
    await page.click('form.prompt-form button[type="submit"]');
    await page.waitForSelector('.anatomy');
    await shot('prompt');

    // The preview of a session not compacted yet: a summary would replace its older part.
    await page.goto(`${studio.origin}/preview?id=${seeded.sessionIds[1]}`);
    await page.selectOption('select[name="setup"]', 'profile:recursive');
    await page.check('input[name="force"]');
    await page.click('form.preview-form button[type="submit"]');
    await page.waitForSelector('table.diff');
    const fates = await page.locator('table.diff tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-fate')));
    expect(new Set(fates)).to.include.members(['summarised', 'kept']);
    await shot('preview');

    await page.click('nav.tabs a[data-tab="health"]');
    // Never compacted, one event redacted: every original is in the context once (the marker stands for it).
    expect(await page.locator('[data-coverage]').getAttribute('data-coverage')).to.equal('ok');
    expect(await page.locator('[data-violations]').getAttribute('data-violations')).to.equal('0');
    expect(await page.locator('[data-schema]').getAttribute('data-schema')).to.equal('current');
    await shot('health');
    for (const name of ['sessions', 'timeline', 'compactions', 'prompt', 'preview', 'health']) {
      expect(
        readFileSync(join(shots, `${name}.png`))
          .subarray(1, 4)
          .toString(),
      ).to.equal('PNG');
    }
  });

  it('shows the prompt anatomy ContextAssembler computes, and highlights what it recalled', async function () {
    const question = 'which flights did Ivan book, and how many checked bags?';
    await page.goto(`${studio.origin}/prompt?id=${seeded.compacted}&q=${encodeURIComponent(question)}&reserve=500`);
    const shown = Object.fromEntries(
      await page
        .locator('ul.legend li[data-part]')
        .evaluateAll((items) => items.map((li) => [li.getAttribute('data-part'), Number(li.getAttribute('data-tokens'))])),
    ) as Record<string, number>;
    const expected = await withStore(async (repository, service) => {
      const assembler = new ContextAssembler({
        sessionService: service,
        retriever: new RepositoryRetriever({ repository }),
        tokenCountEstimator: defaultTokenCountEstimator(),
      });
      return assembler.assemble({
        sessionId: seeded.compacted,
        maxTokens: WINDOW,
        reserveTokens: 500,
        query: question,
        pending: [Messages.user(question)],
      });
    });
    expect(expected.recalled.length).to.be.greaterThan(0);
    expect(shown).to.deep.equal({
      system: expected.tokens.system,
      recall: expected.tokens.recall,
      history: expected.tokens.history,
      reserve: 500,
      free: WINDOW - expected.tokens.total - 500,
      total: expected.tokens.total,
    });
    const highlighted = await page
      .locator('li.event.recalled')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-event-id')));
    expect(highlighted).to.deep.equal(expected.recalled.map((e) => e.id));
  });

  it('reverts a compaction through the UI, and the repository has the window before it again', async function () {
    const session = seeded.sessionIds[2]!;
    const record = await withStore(async (repository, service) => {
      await service.compact(session, () => true, new SlidingWindowCompactionStrategy({ maxEvents: 6 }));
      return (await service.listCompactions!(session))[0]!;
    });
    await page.goto(`${studio.origin}/compactions?id=${session}`);
    await page.click(`tr[data-compaction="${record.id}"] button.danger`);
    await page.waitForSelector('.notice.info', { timeout: 5000 }).catch(async (e: unknown) => {
      console.log(await page.content());
      throw e;
    });
    expect(await page.locator('.notice.info').textContent()).to.contain(`Compaction ${record.id} reverted.`);
    await withStore(async (repository) => {
      const [after] = await repository.listCompactions(session);
      expect(after!.revertedAt).to.be.instanceOf(Date);
      const active = await repository.findEvents(session, EventFilter.active());
      expect(active.map((e) => e.id)).to.deep.equal(record.windowBefore);
    });
  });

  it('renders a hostile message as text: no script runs, no element is injected', async function () {
    await page.goto(`${studio.origin}/session?id=${HOSTILE_SESSION}`);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
    expect(await page.locator('ol.events img, ol.events script').count()).to.equal(0);
    const texts = await page.locator('ol.events pre.text').allTextContents();
    expect(texts[0]).to.equal(`User: ${HOSTILE_TEXT}`);
    await page.goto(`${studio.origin}/?user=${encodeURIComponent('<b>mallory</b>')}`);
    expect(await page.locator('table.sessions b').count()).to.equal(0);
    expect(await page.locator('table.sessions tbody tr td:nth-child(2)').textContent()).to.equal('<b>mallory</b>');
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
  });

  it('refuses a request without the access token (403), in the browser and from a script', async function () {
    const fresh = await browser.context.browser()?.newContext();
    const other = fresh === undefined ? await browser.context.newPage() : await fresh.newPage();
    if (fresh === undefined) await browser.context.clearCookies();
    const response = await other.goto(`${studio.origin}/session?id=${seeded.compacted}`);
    expect(response?.status()).to.equal(403);
    expect(await other.content()).not.to.contain(seeded.compacted);
    await other.close();
    await fresh?.close();
    if (fresh === undefined) await page.goto(studio.url);
    expect((await fetch(`${studio.origin}/`)).status).to.equal(403);
    expect((await fetch(`${studio.origin}/`, { headers: { 'X-Studio-Token': `${studio.token}x` } })).status).to.equal(403);
    expect((await fetch(`${studio.origin}/assets/studio.js`)).status).to.equal(403);
  });

  it('refuses a write without the CSRF token, and the store is unchanged', async function () {
    const session = seeded.compacted;
    const before = await withStore(async (repository) => repository.listCompactions(session));
    const standing = before.find((r) => r.revertedAt === null)!;
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${studio.origin}/compactions/revert`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'X-Studio-Token': studio.token, 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    expect((await post({ id: session, compactionId: standing.id })).status).to.equal(403);
    expect((await post({ id: session, compactionId: standing.id, csrf: 'guess' })).status).to.equal(403);
    expect(
      (await post({ id: session, compactionId: standing.id, csrf: studio.server.csrfToken }, { Origin: 'http://evil.example' }))
        .status,
    ).to.equal(403);
    expect(
      (await fetch(`${studio.origin}/compactions/revert?id=${session}`, { headers: { 'X-Studio-Token': studio.token } })).status,
    ).to.equal(405);
    const after = await withStore(async (repository) => repository.listCompactions(session));
    expect(after.map((r) => r.revertedAt)).to.deep.equal(before.map((r) => r.revertedAt));
  });
});
