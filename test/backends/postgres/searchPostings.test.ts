import { expect } from 'chai';
import fc from 'fast-check';
import { Messages, PostgresSessionRepository, Session, SessionEvent, createDefaultLogger } from 'session-compaction';
import { buildSearchQuery, type PostingsSearch } from '../../../src/backends/postgres/search.js';
import {
  SEARCHABLE_POSTINGS_SCHEMA_VERSION,
  postgresTables,
  type PostgresTables,
} from '../../../src/backends/postgres/schema.js';
import { resolveEventSearchOptions, searchWords } from '../../../src/repository/eventSearch.js';
import { freshPostgresPrefix, migratePostgresBelow, postgresPoolFixture } from '../../support/postgres.js';

const logger = createDefaultLogger({ silent: true });
// A hyphenated word is a lexeme and its parts (stop words among them): the any-word query holds the parts too.
const VOCABULARY = [
  'walrus',
  'zebra',
  'harbour',
  'lantern',
  'the',
  'what',
  'keeper',
  'orbit',
  'fig',
  'sea-lion',
  'lion',
  'end-of-the-pier',
];
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
    postings: PostingsSearch | undefined,
    radius?: number,
  ): Promise<string[]> {
    const o = resolveEventSearchOptions(options);
    const q = buildSearchQuery(t, sessionId, searchWords(query), 'english_stem', o, radius, postings);
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

  /**
   * Postings that differ from the words of the searchable archived events' tsvectors (on no branch, no shadow
   * prompt), in either direction.
   */
  async function stalePostings(t: PostgresTables): Promise<number> {
    const expected = `SELECT e.session_id, w.lexeme, length(e.text_tsv) AS dl, e.seq
      FROM ${t.events} e, unnest(tsvector_to_array(e.text_tsv)) AS w(lexeme)
      WHERE e.archived AND e.branch IS NULL AND NOT (e.synthetic AND e.message_type = 'user')`;
    const stored = `SELECT session_id, lexeme, dl, seq FROM ${t.eventTerms}`;
    const { rows } = await db
      .pool()
      .query<{ n: string }>(
        `SELECT count(*) AS n FROM ((${expected} EXCEPT ${stored}) UNION ALL (${stored} EXCEPT ${expected})) d`,
      );
    return Number(rows[0]!.n);
  }

  it('when no query word has more postings than the bound, scores and order equal the statement that visits every match, read either way', async function () {
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
          const perWord = events.length;
          const candidates = await ranked(t, id, query.join(' '), options, { perWord, searchableOnly: false }, radius);
          expect(candidates).to.deep.equal(reference);
          const scored = await ranked(t, id, query.join(' '), options, { perWord, searchableOnly: true }, radius);
          expect(scored).to.deep.equal(reference);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("a hyphenated question word's parts count events as the statement that visits every match counts them", async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    // 'end-of-the-pier' is searched as its parts too, stop words among them: the third event matches the
    // question only through 'the', is no hit, and still counts in N and the average length.
    await repo.appendEvents('s', [
      user('s', 'e0', 'end-of-the-pier show'),
      user('s', 'e1', 'walrus pier'),
      user('s', 'e2', 'the lantern keeper of lights'),
    ]);
    await db.pool().query(`UPDATE ${t.events} SET archived = TRUE WHERE session_id = 's'`);
    const reference = await ranked(t, 's', 'end-of-the-pier', { limit: 10 }, undefined);
    expect(reference.map((row) => row.split(' ')[0])).to.deep.equal(['e0', 'e1']);
    const scored = await ranked(t, 's', 'end-of-the-pier', { limit: 10 }, { perWord: 10, searchableOnly: true });
    expect(scored).to.deep.equal(reference);
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
    for (const searchableOnly of [false, true]) {
      const bounded = await ranked(t, 's', 'walrus', { limit: 50 }, { perWord: 5, searchableOnly });
      expect(bounded.map((row) => row.split(' ')[0])).to.deep.equal(['w0', 'w1', 'w2', 'w3', 'w4']);
    }
    // The repository reads through the postings too: its best hits are the reference's.
    const hits = await repo.searchEvents('s', 'walrus', { limit: 3 });
    expect(hits.map((h) => h.event.id)).to.deep.equal(['w0', 'w1', 'w2']);
    // Scored from the postings, which hold no owner: the session's owner is still checked.
    expect(await repo.searchEvents('s', 'walrus', { limit: 3, userId: 'intruder' })).to.deep.equal([]);
    expect(await repo.searchEvents('s', 'walrus', { limit: 3, userId: 'u' })).to.have.length(3);
  });

  it("scored from the postings, a best hit's word past that word's bound still counts for it", async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    // Both hits name the zebra and have three words; only the later one also names the walrus, whose four
    // one-word events fill its bound of three. Without completing, the two tie and log order puts 'before' first.
    await repo.appendEvents('s', [
      user('s', 'before', 'zebra harbour keeper'),
      user('s', 'both', 'zebra walrus lantern'),
      ...[0, 1, 2, 3].map((i) => user('s', `w${i}`, 'walrus')),
    ]);
    await db.pool().query(`UPDATE ${t.events} SET archived = TRUE WHERE session_id = 's'`);
    const reference = await ranked(t, 's', 'zebra walrus', { limit: 2 }, undefined);
    expect(reference.map((row) => row.split(' ')[0])).to.deep.equal(['both', 'before']);
    const scored = await ranked(t, 's', 'zebra walrus', { limit: 2 }, { perWord: 3, searchableOnly: true });
    expect(scored.map((row) => row.split(' ')[0])).to.deep.equal(['both', 'before']);
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
  it('shadow prompts and branched events have no postings, whichever write puts them there or takes them off', async function () {
    const p = prefix();
    const t = postgresTables(p);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    const event = (id: string, text: string, o: { synthetic?: boolean; branch?: string } = {}) =>
      SessionEvent.create({
        sessionId: 's',
        id,
        message: Messages.user(text),
        metadata: o.synthetic === true ? { synthetic: true } : {},
        ...(o.branch === undefined ? {} : { branch: o.branch }),
      });
    await repo.appendEvents('s', [
      event('plain', 'walrus lantern'),
      event('shadow', 'walrus summary', { synthetic: true }),
      event('side', 'walrus orbit', { branch: 'a' }),
      event('kept', 'walrus keeper'),
    ]);
    const [plain, shadow, side, kept] = await repo.findEvents('s');
    expect(await repo.compactEvents('s', [plain!, shadow!, side!], [kept!], 4)).to.equal(true);
    expect(await stalePostings(t)).to.equal(0);
    const posted = async () =>
      (
        await db
          .pool()
          .query<{ id: string }>(`SELECT DISTINCT e.id FROM ${t.eventTerms} p JOIN ${t.events} e ON e.seq = p.seq ORDER BY 1`)
      ).rows.map((r) => r.id);
    expect(await posted()).to.deep.equal(['plain']);
    // A rewrite moves the plain event onto a branch, the branched one back to the main line, and the shadow
    // prompt's synthetic flag off: the postings follow each.
    expect(
      await repo.rewriteEvents(
        's',
        [event('plain', 'walrus lantern', { branch: 'b' }), event('side', 'walrus orbit'), event('shadow', 'walrus summary')],
        5,
      ),
    ).to.equal(true);
    expect(await stalePostings(t)).to.equal(0);
    expect(await posted()).to.deep.equal(['shadow', 'side']);
    const hits = await repo.searchEvents('s', 'walrus', { limit: 10 });
    expect(hits.map((h) => h.event.id).sort()).to.deep.equal(['shadow', 'side']);
    // A branch search still finds its branch's events, through the GIN index.
    const onBranch = await repo.searchEvents('s', 'walrus', { limit: 10, branch: 'b' });
    expect(onBranch.map((h) => h.event.id).sort()).to.deep.equal(['plain', 'shadow', 'side']);
  });

  it('a store at the previous schema searches through its postings as candidates, and the migration keeps only the searchable ones', async function () {
    const p = prefix();
    const t = postgresTables(p);
    await migratePostgresBelow(db.pool(), p, SEARCHABLE_POSTINGS_SCHEMA_VERSION);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger, initializeSchema: false });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvents('s', [
      user('s', 'plain', 'walrus lantern'),
      SessionEvent.create({ sessionId: 's', id: 'shadow', message: Messages.user('walrus'), metadata: { synthetic: true } }),
      SessionEvent.create({ sessionId: 's', id: 'side', message: Messages.user('walrus'), branch: 'a' }),
      user('s', 'kept', 'walrus keeper'),
    ]);
    await db.pool().query(`UPDATE ${t.events} SET archived = (id <> 'kept') WHERE session_id = 's'`);
    // The previous schema's postings hold every archived event; scoring from them would return the shadow
    // prompt (the shortest event naming the walrus) and the branched event.
    const { rows } = await db.pool().query<{ n: string }>(`SELECT count(DISTINCT seq) AS n FROM ${t.eventTerms}`);
    expect(Number(rows[0]!.n)).to.equal(3);
    const before = await repo.searchEvents('s', 'walrus', { limit: 10 });
    expect(before.map((h) => h.event.id)).to.deep.equal(['plain']);
    expect(await repo.migrate()).to.deep.equal([SEARCHABLE_POSTINGS_SCHEMA_VERSION]);
    expect(await stalePostings(t)).to.equal(0);
    const after = await repo.searchEvents('s', 'walrus', { limit: 10 });
    expect(after.map((h) => `${h.event.id} ${h.score}`)).to.deep.equal(before.map((h) => `${h.event.id} ${h.score}`));
  });

  it('a schema applied by hand, with no migrations table, is searched through its postings as candidates', async function () {
    const p = prefix();
    const t = postgresTables(p);
    await new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger }).migrate();
    // What a DBA applying schemaStatus()'s statements without recording them leaves: the tables, no record.
    await db.pool().query(`DROP TABLE ${t.migrations}`);
    const repo = new PostgresSessionRepository({ pool: db.pool(), prefix: p, logger, initializeSchema: false });
    await repo.save(Session.create({ id: 's', userId: 'u' }));
    await repo.appendEvents('s', [
      user('s', 'plain', 'walrus lantern'),
      SessionEvent.create({ sessionId: 's', id: 'side', message: Messages.user('walrus'), branch: 'a' }),
      user('s', 'kept', 'walrus keeper'),
    ]);
    await db.pool().query(`UPDATE ${t.events} SET archived = (id <> 'kept') WHERE session_id = 's'`);
    expect((await repo.searchEvents('s', 'walrus', { limit: 10 })).map((h) => h.event.id)).to.deep.equal(['plain']);
    expect((await repo.searchEvents('s', 'walrus', { limit: 10, branch: 'a' })).map((h) => h.event.id)).to.have.members([
      'plain',
      'side',
    ]);
  });
});
