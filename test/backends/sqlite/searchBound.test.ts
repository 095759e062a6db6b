import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import fc from 'fast-check';
import { EventFilter, Messages, Session, SessionEvent, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import { sqliteTables } from '../../../src/backends/sqlite/schema.js';
import { RARE_WORD_EVENTS, RECENT_MATCHES, buildSqliteSearch } from '../../../src/backends/sqlite/search.js';
import { resolveEventSearchOptions, searchTerms } from '../../../src/repository/eventSearch.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-search-bound-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const logger = createDefaultLogger({ silent: true });
const t = sqliteTables('session_compaction');

interface Hit {
  id: string;
  score: number;
}

/** A file holding session 's' with one user event per text (ids e0, e1, … in log order). */
async function store(
  texts: readonly string[],
  boundedSearchEvents = 0,
): Promise<{ path: string; repo: SqliteSessionRepository }> {
  const path = join(dir, `db-${n++}.db`);
  // Bounded from the first event (the default is a session of 20,000): these sessions are small.
  const repo = new SqliteSessionRepository({ path, logger, boundedSearchEvents });
  await repo.save(Session.create({ id: 's', userId: 'u' }));
  await repo.appendEvents(
    's',
    texts.map((text, i) => SessionEvent.create({ sessionId: 's', id: `e${i}`, message: Messages.user(text) })),
  );
  return { path, repo };
}

/** Every match of the unbounded statement (no window, no bound), best first, ties in log order. */
function exact(path: string, query: string): Hit[] {
  const db = new Database(path, { readonly: true });
  try {
    const o = resolveEventSearchOptions({ includeActive: true, limit: 100_000 });
    const q = buildSqliteSearch(t, 's', searchTerms(query, true), o);
    return (db.prepare(q.sql).all(q.params) as Array<{ id: string; score: number }>).map((r) => ({ id: r.id, score: r.score }));
  } finally {
    db.close();
  }
}

async function bounded(repo: SqliteSessionRepository, query: string, limit: number): Promise<Hit[]> {
  return (await repo.searchEvents('s', query, { includeActive: true, limit })).map((h) => ({ id: h.event.id, score: h.score }));
}

function expectSameHits(actual: readonly Hit[], expected: readonly Hit[]): void {
  expect(actual.map((h) => h.id)).to.deep.equal(expected.map((h) => h.id));
  actual.forEach((h, i) => expect(h.score).to.be.closeTo(expected[i]!.score, 1e-9 * Math.max(1, Math.abs(h.score))));
}

const holds = (text: string, word: string) => text.split(' ').includes(word);
const seqOf = (h: Hit) => Number(h.id.slice(1));
/**
 * Best first, scores equal to 1e-9 in log order: the order the bounded search promises. (Two events whose scores
 * are equal in exact arithmetic can differ in the last bit in FTS5's sums: "walrus orbit lantern" and "walrus
 * lantern harbour" when "orbit" and "harbour" are in as many events.)
 */
const byRoundedScore = (hits: readonly Hit[]) =>
  [...hits].sort((a, b) => Math.round(b.score * 1e9) - Math.round(a.score * 1e9) || seqOf(a) - seqOf(b));

/**
 * "walrus" in 550 short events, "zebra" in 50 long ones; 2,000 others keep "walrus" far from everywhere, so its
 * short events outscore the long "zebra" ones in the unbounded search.
 */
function walrusAndZebra(): string[] {
  const filler = (i: number, words: number) => Array.from({ length: words }, (_, k) => `filler${(i + k) % 97}`).join(' ');
  return [
    ...Array.from({ length: 550 }, () => 'walrus walrus walrus'),
    ...Array.from({ length: 2_000 }, (_, i) => filler(i, 8)),
    ...Array.from({ length: 50 }, (_, i) => `zebra ${filler(i, 199)}`),
  ];
}

describe('SQLite session search bounded by common words', function () {
  this.timeout(60_000);

  it('while no query word is in more events than the bound, the answer is the unbounded one', async function () {
    // 520 events: more rows than the bound, so the words are probed; none is in more than 500 of them.
    const texts = Array.from({ length: 520 }, (_, i) => `${i % 2 === 0 ? 'walrus' : 'zebra'} harbour${i % 7} lantern${i % 3}`);
    const { path, repo } = await store(texts);
    try {
      for (const query of ['walrus lantern1', 'zebra harbour3 lantern0', 'harbour6']) {
        expectSameHits(await bounded(repo, query, 40), exact(path, query).slice(0, 40));
      }
    } finally {
      await repo.close();
    }
  });

  it('with a common word, the events holding a rarer word are ranked with the scores of the unbounded search, topped up from the most recent matches', async function () {
    const vocabulary = ['keeper', 'orbit', 'fig', 'lantern', 'harbour'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.subarray(vocabulary), { minLength: 510, maxLength: 700 }),
        fc.boolean(),
        fc.subarray(vocabulary, { minLength: 1 }),
        fc.integer({ min: 1, max: 60 }),
        async (extra, harbourEverywhere, queryWords, limit) => {
          // "walrus" is in every event: common whatever else the query holds; so is "harbour" in half of the runs.
          const texts = extra.map((words) =>
            ['walrus', ...(harbourEverywhere && !words.includes('harbour') ? ['harbour'] : []), ...words].join(' '),
          );
          const { path, repo } = await store(texts);
          try {
            const query = ['walrus', ...queryWords].join(' ');
            const rare = queryWords.filter((w) => texts.filter((text) => holds(text, w)).length <= RARE_WORD_EVENTS);
            const byId = new Map(texts.map((text, i) => [`e${i}`, text]));
            const all = exact(path, query);
            const recent = all.filter((h) => seqOf(h) >= texts.length - RECENT_MATCHES);
            const holders = all.filter((h) => rare.some((w) => holds(byId.get(h.id)!, w)));
            // Holders of a rare word; when they are fewer than asked for, with the most recent matches.
            const candidates =
              rare.length === 0 ? recent : holders.length >= limit ? holders : [...new Set([...holders, ...recent])];
            const expected = byRoundedScore(candidates);
            expectSameHits(await bounded(repo, query, limit), expected.slice(0, limit));
          } finally {
            await repo.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('an event holding only the common word is not ranked when enough events hold the rare one, however well it would score', async function () {
    const texts = walrusAndZebra();
    const { path, repo } = await store(texts);
    try {
      expect(
        exact(path, 'walrus zebra')
          .slice(0, 10)
          .every((h) => seqOf(h) < 550),
      ).to.equal(true);
      const hits = await bounded(repo, 'walrus zebra', 10);
      expect(hits).to.have.length(10);
      expect(hits.every((h) => seqOf(h) >= 2_550)).to.equal(true);
    } finally {
      await repo.close();
    }
  });

  it('when fewer events hold the rare word than asked for, the most recent matches of the common one fill the answer', async function () {
    const texts = [...Array.from({ length: 600 }, (_, i) => `walrus number ${i}`), 'walrus zebra', 'zebra walrus again'];
    const { path, repo } = await store(texts);
    try {
      const hits = await bounded(repo, 'walrus zebra', 10);
      expect(hits.slice(0, 2).map((h) => h.id)).to.have.members(['e600', 'e601']);
      expectSameHits(hits, byRoundedScore(exact(path, 'walrus zebra')).slice(0, 10));
    } finally {
      await repo.close();
    }
  });

  it('a session of boundedSearchEvents events is searched unbounded; the event that takes it past turns the bound on', async function () {
    const texts = walrusAndZebra();
    const { path, repo } = await store(texts, texts.length);
    try {
      // At the bound: unbounded, the short "walrus" events first.
      const atBound = await bounded(repo, 'walrus zebra', 10);
      expectSameHits(atBound, exact(path, 'walrus zebra').slice(0, 10));
      expect(atBound.every((h) => seqOf(h) < 550)).to.equal(true);
      await repo.appendEvents('s', [SessionEvent.create({ sessionId: 's', id: 'extra', message: Messages.user('walrus') })]);
      // One more event: bounded, only the long "zebra" events are ranked.
      const after = await bounded(repo, 'walrus zebra', 10);
      expect(after.every((h) => h.id.startsWith('e') && seqOf(h) >= 2_550)).to.equal(true);
    } finally {
      await repo.close();
    }
  });

  it('boundedSearchEvents: Infinity never bounds; a negative or fractional value is refused', async function () {
    const texts = [...Array.from({ length: 600 }, () => 'walrus'), 'walrus zebra'];
    const { path, repo } = await store(texts, Infinity);
    try {
      expectSameHits(await bounded(repo, 'walrus', 5), exact(path, 'walrus').slice(0, 5));
    } finally {
      await repo.close();
    }
    for (const boundedSearchEvents of [-1, 1.5, Number.NaN]) {
      expect(() => new SqliteSessionRepository({ path: ':memory:', logger, boundedSearchEvents })).to.throw(
        'boundedSearchEvents must be an integer >= 0 or Infinity',
      );
    }
  });

  it('when every query word is common, only the most recent matches are ranked: a better older match is not found', async function () {
    const old = Array.from({ length: 200 }, () => 'walrus');
    const recent = Array.from({ length: RECENT_MATCHES + 100 }, (_, i) => `walrus and a long tail of words number ${i}`);
    const { path, repo } = await store([...old, ...recent]);
    try {
      const hits = await bounded(repo, 'walrus', 10);
      // Unbounded, the 200 one-word events rank first; bounded, none of them is among the newest matches.
      expect(
        exact(path, 'walrus')
          .slice(0, 10)
          .every((h) => seqOf(h) < 200),
      ).to.equal(true);
      expect(hits).to.have.length(10);
      expect(hits.every((h) => seqOf(h) >= 200 + 100)).to.equal(true);
    } finally {
      await repo.close();
    }
  });
  describe('word probes kept between searches', function () {
    const walrus = (n: number) => Array.from({ length: n }, () => 'walrus walrus walrus');
    const filler = (i: number) => Array.from({ length: 8 }, (_, k) => `filler${(i + k) % 97}`).join(' ');
    const zebras = Array.from(
      { length: 50 },
      (_, i) => `zebra ${Array.from({ length: 199 }, (_, k) => `filler${(i + k) % 97}`).join(' ')}`,
    );
    const events = (sessionId: string, prefix: string, texts: readonly string[]) =>
      texts.map((text, i) => SessionEvent.create({ sessionId, id: `${prefix}${i}`, message: Messages.user(text) }));

    /**
     * Session 's': 450 "walrus" events (rare: fewer than the bound), 2,000 fillers, 50 long "zebra" events; with
     * `interleaved`, session 'x''s 100 "walrus" events are written between its own, inside the rows its search ranks.
     */
    async function walrusStore(interleaved: boolean): Promise<{ path: string; repo: SqliteSessionRepository }> {
      const path = join(dir, `db-${n++}.db`);
      const repo = new SqliteSessionRepository({ path, logger, boundedSearchEvents: 0 });
      await repo.save(Session.create({ id: 's', userId: 'u' }));
      await repo.save(Session.create({ id: 'x', userId: 'u' }));
      await repo.appendEvents('s', events('s', 'w', walrus(450)));
      if (interleaved) await repo.appendEvents('x', events('x', 'w', walrus(100)));
      await repo.appendEvents(
        's',
        events(
          's',
          'f',
          Array.from({ length: 2_000 }, (_, i) => filler(i)),
        ),
      );
      await repo.appendEvents('s', events('s', 'z', zebras));
      return { path, repo };
    }

    /** The answer of a repository that has probed nothing yet, on the same file. */
    async function fresh(path: string, query: string): Promise<Hit[]> {
      const repo = new SqliteSessionRepository({ path, logger, boundedSearchEvents: 0 });
      try {
        return await bounded(repo, query, 10);
      } finally {
        await repo.close();
      }
    }

    const zebraFirst = (hits: readonly Hit[]) => hits.length === 10 && hits.every((h) => h.id.startsWith('z'));
    const walrusFirst = (hits: readonly Hit[]) => hits.length === 10 && hits.every((h) => h.id.startsWith('w'));

    it('a word kept as rare is probed again once appended events may have made it common', async function () {
      const { path, repo } = await walrusStore(false);
      try {
        // Both words rare: the unbounded answer, the short "walrus" events first.
        expect(walrusFirst(await bounded(repo, 'walrus zebra', 10))).to.equal(true);
        await repo.appendEvents('s', events('s', 'v', walrus(100)));
        // 550 "walrus" events now: common, so only the events holding "zebra" are ranked.
        const after = await bounded(repo, 'walrus zebra', 10);
        expect(zebraFirst(after)).to.equal(true);
        expectSameHits(after, await fresh(path, 'walrus zebra'));
      } finally {
        await repo.close();
      }
    });

    it('a word kept as common is probed again after events holding it are deleted (a session deleted, its events by cascade)', async function () {
      const { path, repo } = await walrusStore(true);
      try {
        expect(zebraFirst(await bounded(repo, 'walrus zebra', 10))).to.equal(true);
        await repo.delete('x');
        const after = await bounded(repo, 'walrus zebra', 10);
        expect(walrusFirst(after)).to.equal(true);
        expectSameHits(after, await fresh(path, 'walrus zebra'));
      } finally {
        await repo.close();
      }
    });

    it('a word kept as common is probed again after events holding it are rewritten', async function () {
      const { path, repo } = await walrusStore(false);
      try {
        await repo.appendEvents('s', events('s', 'v', walrus(100)));
        expect(zebraFirst(await bounded(repo, 'walrus zebra', 10))).to.equal(true);
        const rewritten = (await repo.findEvents('s', EventFilter.all()))
          .filter((e) => e.id.startsWith('v'))
          .map((e) => SessionEvent.create({ sessionId: 's', id: e.id, timestamp: e.timestamp, message: Messages.user('otter') }));
        expect(await repo.rewriteEvents('s', rewritten, await repo.getEventVersion('s'))).to.equal(true);
        const after = await bounded(repo, 'walrus zebra', 10);
        expect(walrusFirst(after)).to.equal(true);
        expectSameHits(after, await fresh(path, 'walrus zebra'));
      } finally {
        await repo.close();
      }
    });

    it('with probes kept, every search answers as a repository that probes afresh, whatever writes come between (property)', async function () {
      this.timeout(60_000);
      // Writes that move "walrus" (450 events of 's', 100 more of 'x' between them when interleaved) across the bound.
      const word = fc.constantFrom('walrus', 'walrus', 'zebra', 'otter');
      const k = fc.integer({ min: 1, max: 120 });
      const op = fc.oneof(
        fc.record({ kind: fc.constant('append' as const), session: fc.constantFrom('s', 's', 'x'), word, k }),
        fc.record({ kind: fc.constant('deleteX' as const), other: fc.boolean() }),
        fc.record({ kind: fc.constant('rewrite' as const), from: fc.integer({ min: 0, max: 500 }), k }),
        fc.record({ kind: fc.constant('otherAppend' as const), word, k }),
      );
      // "walrus" with the long "zebra" events: the bounded and the unbounded answers differ.
      const query = fc.subarray(['zebra', 'otter', 'filler3']).map((w) => ['walrus', ...w].join(' '));
      let next = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.array(fc.tuple(op, query), { minLength: 1, maxLength: 6 }),
          async (interleaved, steps) => {
            const { path, repo } = await walrusStore(interleaved);
            const other = new SqliteSessionRepository({ path, logger, boundedSearchEvents: 0 });
            const add = (r: SqliteSessionRepository, session: string, text: string, k: number) =>
              r.appendEvents(
                session,
                events(
                  session,
                  `p${next++}-`,
                  Array.from({ length: k }, () => text),
                ),
              );
            try {
              for (const [step, q] of steps) {
                // A search before the write: its probes are what the write must not leave standing wrongly.
                await bounded(repo, q, 10);
                if (step.kind === 'append') await add(repo, step.session, `${step.word} ${step.word}`, step.k);
                else if (step.kind === 'otherAppend') await add(other, 's', `${step.word} ${step.word}`, step.k);
                else if (step.kind === 'deleteX') {
                  await (step.other ? other : repo).delete('x');
                  await repo.save(Session.create({ id: 'x', userId: 'u' }));
                } else {
                  const log = await repo.findEvents('s', EventFilter.all());
                  const rewritten = log
                    .slice(step.from, step.from + step.k)
                    .map((e) =>
                      SessionEvent.create({ sessionId: 's', id: e.id, timestamp: e.timestamp, message: Messages.user('otter') }),
                    );
                  await repo.rewriteEvents('s', rewritten, await repo.getEventVersion('s'));
                }
                expectSameHits(await bounded(repo, q, 10), await fresh(path, q));
              }
            } finally {
              await other.close();
              await repo.close();
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it('a word kept as common is probed again after another connection deleted events holding it', async function () {
      const { path, repo } = await walrusStore(true);
      const other = new SqliteSessionRepository({ path, logger, boundedSearchEvents: 0 });
      try {
        expect(zebraFirst(await bounded(repo, 'walrus zebra', 10))).to.equal(true);
        await other.delete('x');
        const after = await bounded(repo, 'walrus zebra', 10);
        expect(walrusFirst(after)).to.equal(true);
        expectSameHits(after, await fresh(path, 'walrus zebra'));
      } finally {
        await other.close();
        await repo.close();
      }
    });
  });
});
