/**
 * Bad-input differential suite (issue 4): hostile ids, texts, metadata and keyword searches must behave in a
 * durable repository exactly as in the in-memory one. Every scenario replays the same operations on both and
 * compares the results. `badInputDifferential('PostgreSQL', () => new PostgresSessionRepository({ ... }))`.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import {
  EventFilter,
  InMemorySessionRepository,
  Messages,
  Session,
  SessionEvent,
  type EventFilterOptions,
  type SessionRepository,
} from 'session-compaction';

/** Characters whose quoting, LIKE or case-folding behaviour differs between stores. NUL and lone surrogates excluded. */
const HOSTILE = [
  'a',
  'A',
  'b',
  'K',
  'k',
  'K',
  's',
  'S',
  'ß',
  'i',
  'I',
  'İ',
  'ı',
  '\u0307',
  'σ',
  'Σ',
  'ς',
  'ǅ',
  'ǆ',
  'é',
  'e',
  '\u0301',
  '%',
  '_',
  '\\',
  "'",
  '"',
  '.',
  ' ',
  '{',
  '}',
  ':',
  '*',
  '?',
  '[',
  ']',
  '日',
  '🎉',
  '\n',
  '\t',
  '$1',
  '--',
  ';',
];

const HOSTILE_TEXTS = [
  '100% sure',
  'a_b',
  'ab',
  'a\\b',
  'a\\%b',
  'O\'Reilly said "hi"; DROP TABLE x; --',
  'İstanbul',
  'ΣΊΣΥΦΟΣ',
  'Straße',
  'ǅemal',
  'Kelvin: 5 K',
  'naïve café',
  'emoji 🎉 日本語',
  '$1 $2 ?',
  '{hash}:tag',
];

const HOSTILE_KEYWORDS = [
  '%',
  '_',
  '\\',
  "'",
  '"',
  '%_',
  'a_b',
  'a%',
  'i̇',
  'i',
  'ς',
  'σ',
  'ss',
  'ß',
  'k',
  'ǆ',
  'é',
  ';',
  '{',
  '$1',
  ' ',
];

/** A substring by code points: keywords of lone surrogate halves are a separate scenario. */
const codePoints = (s: string, from: number, to: number) => Array.from(s).slice(from, to).join('');

interface Pair {
  memory: SessionRepository;
  store: SessionRepository;
}

async function both<T>(p: Pair, op: (r: SessionRepository) => Promise<T>): Promise<[T, T]> {
  return [await op(p.memory), await op(p.store)];
}

const ids = (events: readonly SessionEvent[]) => events.map((e) => `${e.id}${e.archived ? '(archived)' : ''}`);

export function badInputDifferential(name: string, factory: () => Promise<SessionRepository>): void {
  describe(`bad input behaves as in memory: ${name}`, function () {
    let pair: Pair;
    let run = 0;
    const sid = (base: string) => `${base}#${Date.now().toString(36)}-${run++}`;

    beforeEach(async function () {
      pair = { memory: new InMemorySessionRepository(), store: await factory() };
    });
    afterEach(async function () {
      await pair.store.close?.();
    });

    async function seed(sessionId: string, texts: readonly string[], branches: readonly (string | null)[] = []): Promise<void> {
      const session = Session.create({
        id: sessionId,
        userId: `user '%_\\ ${sessionId}`,
        metadata: { q: 'it\'s "x" %_\\ 日本' },
      });
      await both(pair, (r) => r.save(session));
      for (let i = 0; i < texts.length; i++) {
        const e = SessionEvent.create({
          sessionId,
          id: `ev '%_\\ ${i}`,
          message: Messages.user(texts[i]!),
          branch: branches[i % Math.max(branches.length, 1)] ?? null,
          metadata: { text: texts[i], quote: '\'"\\' },
        });
        await both(pair, (r) => r.appendEvent(e));
      }
    }

    async function expectSame(sessionId: string, options: EventFilterOptions): Promise<void> {
      const filter = EventFilter.of(options);
      const [m, s] = await both(pair, (r) => r.findEvents(sessionId, filter));
      expect(ids(s), JSON.stringify(options)).to.deep.equal(ids(m));
    }

    it('session and user ids with quotes, wildcards, backslashes, braces and unicode round-trip and index alike', async function () {
      const sessionIds = [sid("it's"), sid('100%'), sid('a_b'), sid('back\\slash'), sid('{tag}:x}'), sid('日本 🎉'), sid('"dq"')];
      for (const id of sessionIds) await seed(id, ['hello']);
      for (const id of sessionIds) {
        const [m, s] = await both(pair, (r) => r.findById(id));
        expect(s?.id).to.equal(m?.id);
        expect(s?.userId).to.equal(m?.userId);
        expect(s?.metadata).to.deep.equal(m?.metadata);
        const [mu, su] = await both(pair, (r) => r.findByUserId(m!.userId));
        expect(su.map((x) => x.id)).to.deep.equal(mu.map((x) => x.id));
        await expectSame(id, {});
      }
      // A wildcard in one id must never reach another session's events.
      const [m, s] = await both(pair, (r) => r.findEvents(sessionIds[1]!.replace('%', '_'), EventFilter.all()));
      expect(s).to.deep.equal(m);
    });

    it('keyword searches for %, _, \\, quotes and case-folding edge cases match the in-memory results', async function () {
      const id = sid('kw');
      await seed(id, HOSTILE_TEXTS);
      for (const keyword of HOSTILE_KEYWORDS) await expectSame(id, { keyword });
      await expectSame(id, { keywords: ['%', '_'], matchMode: 'any' });
      await expectSame(id, { keywords: ['a', '\\'], matchMode: 'all' });
      await expectSame(id, { keyword: '%', pattern: /\d/ });
      // Half of a surrogate pair matches the emoji in memory (UTF-16 code units): the store must agree.
      await expectSame(id, { keyword: '🎉'.slice(0, 1) });
      await expectSame(id, { keywords: ['🎉'.slice(1), 'straße'], matchMode: 'any' });
    });

    it('branch names with LIKE wildcards are compared literally', async function () {
      const id = sid('branch');
      await seed(id, ['r', 'p', 'u', 'x', 'y', 'z'], [null, 'o%', 'o%.x', 'o_', 'ox.x', 'o\\']);
      for (const branch of ['o%.x', 'ox.x', 'o_.x', 'oy.x', 'o\\.x', 'o%', '%', '_']) await expectSame(id, { branch });
    });

    it('a 1 MB text with wildcards round-trips and is found by a keyword at its end', async function () {
      const id = sid('big');
      const big = 'Ä%_\\'.repeat(256 * 1024) + 'needle';
      await seed(id, [big, 'small']);
      const [, s] = await both(pair, (r) => r.findEvents(id));
      expect(s[0]!.text).to.equal(big);
      await expectSame(id, { keyword: 'NEEDLE' });
      await expectSame(id, { keyword: 'ä%_\\ä' });
    });

    it('property: any text and keyword over hostile characters gives the in-memory result', async function () {
      this.timeout(120_000);
      const text = fc.array(fc.constantFrom(...HOSTILE), { minLength: 1, maxLength: 12 }).map((cs) => cs.join(''));
      await fc.assert(
        fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 6 }), text, fc.boolean(), async (texts, keyword, all) => {
          const id = sid('prop');
          await seed(id, texts);
          await expectSame(id, { keyword });
          await expectSame(id, { keywords: [keyword, codePoints(texts[0]!, 0, 2)], matchMode: all ? 'all' : 'any' });
          await expectSame(id, { keyword: codePoints(texts[texts.length - 1]!, 1, 4), lastN: 2 });
        }),
        { numRuns: 60 },
      );
    });
  });
}
