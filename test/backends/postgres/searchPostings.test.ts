import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, PostgresSessionRepository, Session, SessionEvent, createDefaultLogger } from 'session-compaction';
import { buildSearchQuery } from '../../../src/backends/postgres/search.js';
import { postgresTables, type PostgresTables } from '../../../src/backends/postgres/schema.js';
import { resolveEventSearchOptions, searchWords } from '../../../src/repository/eventSearch.js';
import { freshPostgresPrefix, postgresPoolFixture } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });
const VOCABULARY = ['walrus', 'zebra', 'harbour', 'lantern', 'the', 'what', 'keeper', 'orbit', 'fig'];
const user = (sessionId: string, id: string, text: string) =>
  SessionEvent.create({ sessionId, id, message: Messages.user(text) });

describe('PostgreSQL session search through the postings table', function () {
  this.timeout(60_000);
  const prefixes: string[] = [];
  const prefix = () => {
    const p = freshPostgresPrefix();
    prefixes.push(p);
    return p;
  };
  const db = postgresPoolFixture(prefixes, { max: 4 });

  /**
   * The hits of the search statement as `id score` in the repository's order (best first, ties in log order),
   * then with `radius` the neighbourhood rows as `rank id`, sorted.
   */
  async function ranked(
    t: PostgresTables,
    sessionId: string,
    query: string,
    options: Parameters<typeof resolveEventSearchOptions>[0],
    postingsPerWord: number | undefined,
    radius?: number,
  ): Promise<string[]> {
    const o = resolveEventSearchOptions(options);
    const q = buildSearchQuery(t, sessionId, searchWords(query), 'english_stem', o, radius, postingsPerWord);
    type Row = { id: string; score: number | null; kind?: number; seq?: string; ord?: string | null };
    const { rows } = await db.pool().query<Row>(q.sql, q.params);
    if (radius === undefined) return rows.map((r) => `${r.id} ${r.score}`);
    const hits = rows
      .filter((r) => Number(r.kind) === 0)
      .sort((a, b) => Number(b.score) - Number(a.score) || Number(a.seq) - Number(b.seq))
      .map((r) => `${r.id} ${r.score}`);
    const around = rows.filter((r) => Number(r.kind) === 1).map((r) => `${r.ord} ${r.id}`);
    return [...hits, ...around.sort()];
  }

  /** Postings that differ from the words of the archived events' tsvectors, in either direction. */
  async function stalePostings(t: PostgresTables): Promise<number> {
    const expected = `SELECT e.session_id, w.lexeme, length(e.text_tsv) AS dl, e.seq
      FROM ${t.events} e, unnest(tsvector_to_array(e.text_tsv)) AS w(lexeme) WHERE e.archived`;
    const stored = `SELECT session_id, lexeme, dl, seq FROM ${t.eventTerms}`;
    const { rows } = await db
      .pool()
      .query<{ n: string }>(
        `SELECT count(*) AS n FROM ((${expected} EXCEPT ${stored}) UNION ALL (${stored} EXCEPT ${expected})) d`,
      );
    return Number(rows[0]!.n);
  }

  it('when no query word has more postings than the bound, scores and order equal the statement that visits every match', async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.migrate();
    let n = 0;
    const text = fc.array(fc.constantFrom(...VOCABULARY), { minLength: 0, maxLength: 6 }).map((w) => w.join(' '));
    const event = fc.record({
      text,
      archived: fc.boolean(),
      synthetic: fc.boolean(),
      branch: fc.constantFrom(null, 'a', 'a.b', 'c'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { minLength: 1, maxLength: 14 }),
        fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(null, 'a', 'a.b'),
        fc.boolean(),
        fc.constantFrom(undefined, 1),
        async (events, query, branch, includeActive, radius) => {
          const id = `s${n++}`;
          await repo.save(Session.create({ id, userId: 'u' }));
          // Written as the library writes them, so the postings come from the triggers under test.
          await repo.appendEvents(
            id,
            events.map((e, i) =>
              SessionEvent.create({
                sessionId: id,
                id: `e${i}`,
                message: Messages.user(e.text),
                metadata: e.synthetic ? { synthetic: true } : {},
                ...(e.branch === null ? {} : { branch: e.branch }),
              }),
            ),
          );
          await db
            .pool()
            .query(`UPDATE ${t.events} SET archived = (id = ANY($2)) WHERE session_id = $1`, [
              id,
              events.flatMap((e, i) => (e.archived ? [`e${i}`] : [])),
            ]);
          const options = { includeActive, branch, limit: 50 };
          const reference = await ranked(t, id, query.join(' '), options, undefined, radius);
          const bounded = await ranked(t, id, query.join(' '), options, events.length, radius);
          expect(bounded).to.deep.equal(reference);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a word in more events than the bound: only the bound of its shortest events compete, and they are found', async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    // Twelve events naming the walrus, the k-th with k filler words: shorter is better for one word.
    const filler = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
    const order = [7, 2, 11, 0, 5, 9, 1, 4, 10, 3, 8, 6];
    await repo.appendEvents(
      's',
      order.map((k) => user('s', `w${k}`, ['walrus', ...filler.slice(0, k)].join(' '))),
    );
    // Archived in place, as compaction archives them: the postings hold archived events.
    await db.pool().query(`UPDATE ${t.events} SET archived = TRUE WHERE session_id = 's'`);
    const all = await ranked(t, 's', 'walrus', { limit: 50 }, undefined);
    expect(all).to.have.length(12);
    const bounded = await ranked(t, 's', 'walrus', { limit: 50 }, 5);
    expect(bounded.map((row) => row.split(' ')[0])).to.deep.equal(['w0', 'w1', 'w2', 'w3', 'w4']);
    // The repository reads through the postings too: its best hits are the reference's.
    const hits = await repo.searchEvents('s', 'walrus', { limit: 3 });
    expect(hits.map((h) => h.event.id)).to.deep.equal(['w0', 'w1', 'w2']);
  });

  it('every write path keeps the postings equal to the words of the stored events, and an erased session leaves none', async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    for (const id of ['s', 'gone', 'erased']) {
      await repo.save(Session.create({ id, userId: id === 'erased' ? 'v' : 'u' }));
      await repo.appendEvents(id, [
        user(id, 'e0', 'walrus lantern'),
        user(id, 'e1', 'zebra harbour keeper'),
        user(id, 'e2', 'fig'),
      ]);
    }
    await db.pool().query(`UPDATE ${t.events} SET archived = TRUE WHERE session_id <> 's'`);
    await repo.appendEvent(user('s', 'e3', 'orbit walrus'));
    const [e0, e1, e2, e3] = await repo.findEvents('s');
    // Compaction archives e0 and e1 in place and re-inserts the rest; a redaction rewrites archived e1's words;
    // retention purges e0.
    expect(await repo.compactEvents('s', [e0!, e1!], [e2!, e3!], 4)).to.equal(true);
    const redacted = SessionEvent.create({ sessionId: 's', id: 'e1', message: Messages.user('[redacted] keeper') });
    expect(await repo.rewriteEvents('s', [redacted], 5)).to.equal(true);
    expect(await stalePostings(t)).to.equal(0);
    expect(await repo.purgeArchivedEvents('s', { keepLast: 1, limit: 10 })).to.deep.equal(['e0']);
    await repo.delete('gone');
    expect(await repo.eraseSession('erased', { tombstone: null })).to.not.equal(null);
    expect(await stalePostings(t)).to.equal(0);
    const { rows } = await db
      .pool()
      .query<{ session_id: string; lexeme: string }>(`SELECT DISTINCT session_id, lexeme FROM ${t.eventTerms} ORDER BY 1, 2`);
    expect(rows.map((r) => `${r.session_id}:${r.lexeme}`)).to.deep.equal(['s:keeper', 's:redacted']);
  });
});
