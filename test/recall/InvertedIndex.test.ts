import { expect } from 'chai';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { InvertedIndex } from '../../src/recall/InvertedIndex.js';
import { processSearchTerm } from '../../src/recall/searchTerms.js';
import { propertyParams } from '../support/arbitraries.js';

const BM25 = { k: 1.2, b: 0.4, d: 0.5 };

/** Few words, so that documents share terms; stop words, stems of one word, case and a number among them. */
const wordArb = fc.constantFrom(
  'the',
  'and',
  'Paint',
  'painted',
  'painting',
  'lake',
  'Caroline',
  'camping',
  'dog',
  'x',
  '2023',
  'May',
);
const separatorArb = fc.constantFrom(' ', ', ', '. ', '\n', ' — ', '!', ': ');
/** A text: words joined by separators, sometimes opening with one (an empty first token). */
const textArb = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(wordArb, separatorArb), { minLength: 0, maxLength: 12 }))
  .map(([lead, parts]) => (lead ? '"' : '') + parts.map(([w, s]) => w + s).join(''));

type Op = { add: string } | { remove: number };
const opsArb = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: textArb.map((add): Op => ({ add })) },
    { weight: 1, arbitrary: fc.nat().map((remove): Op => ({ remove })) },
  ),
  { minLength: 1, maxLength: 60 },
);

/**
 * The ranking the index replaced, in full: minisearch (the same options SessionIndex gave it) scores and sorts
 * every match; the accepted ones are ordered by score, then by rank (higher first), and cut at the limit.
 */
function reference(
  search: MiniSearch<{ id: string; text: string }>,
  query: string,
  limit: number,
  rank: (key: string) => number | null,
) {
  const hits: { key: string; score: number; rank: number }[] = [];
  for (const result of search.search(query)) {
    const r = rank(String(result.id));
    if (r !== null) hits.push({ key: String(result.id), score: result.score, rank: r });
  }
  hits.sort((a, b) => b.score - a.score || b.rank - a.rank);
  return hits.slice(0, limit).map(({ key, score }) => ({ key, score }));
}

/** Applies `ops` to both indexes; keys are "d<n>", n the order of addition (also the documents' rank). */
function build(ops: readonly Op[], floor = { postings: 2, documents: 2 }) {
  const index = new InvertedIndex(BM25, floor);
  const mini = new MiniSearch<{ id: string; text: string }>({
    fields: ['text'],
    storeFields: [],
    processTerm: processSearchTerm,
    searchOptions: { combineWith: 'OR', prefix: false, bm25: BM25 },
  });
  const live = new Map<string, string>();
  let added = 0;
  for (const op of ops) {
    if ('add' in op) {
      const key = `d${added++}`;
      index.add(key, op.add);
      mini.add({ id: key, text: op.add });
      live.set(key, op.add);
    } else if (live.size > 0) {
      const key = [...live.keys()][op.remove % live.size]!;
      index.remove(key, live.get(key)!);
      mini.remove({ id: key, text: live.get(key)! });
      live.delete(key);
    }
  }
  return { index, mini, live };
}

describe('InvertedIndex', function () {
  it('ranks exactly as minisearch did: the same hits, bit-identical scores, equal scores the higher rank first', function () {
    fc.assert(
      fc.property(
        opsArb,
        fc.array(wordArb, { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3 }),
        (ops, words, limit, modulo) => {
          const { index, mini } = build(ops);
          const query = words.join(' ');
          // Some documents refused, as `accept` refuses active events: the limit is filled from the rest.
          const rank = (key: string) => {
            const n = Number(key.slice(1));
            return n % modulo === 0 ? n : null;
          };
          expect(index.search(query, limit, rank)).to.deep.equal(reference(mini, query, limit, rank));
        },
      ),
      propertyParams(300),
    );
  });

  it('returns the ties at the limit by rank, whatever order they were added in', function () {
    const index = new InvertedIndex(BM25);
    for (const key of ['a', 'b', 'c', 'd']) index.add(key, 'lake trip');
    const ranks: Record<string, number> = { a: 2, b: 4, c: 1, d: 3 };
    expect(index.search('lake', 2, (key) => ranks[key]!).map((h) => h.key)).to.deep.equal(['b', 'd']);
  });

  it('stops finding a removed document at once and counts it out of the scores', function () {
    const index = new InvertedIndex(BM25);
    index.add('a', 'lake trip');
    index.add('b', 'lake dog');
    const before = index.search('lake', 5, () => 0)[0]!.score;
    index.remove('b', 'lake dog');
    const after = index.search('lake dog', 5, () => 0);
    expect(after.map((h) => h.key)).to.deep.equal(['a']);
    expect(after[0]!.score).to.not.equal(before);
  });

  it('holds at most twice the live entries plus the floor, however long documents come and go', function () {
    const floor = { postings: 50, documents: 10 };
    const index = new InvertedIndex(BM25, floor);
    const words = ['lake', 'dog', 'paint', 'camping', 'trip', 'river', 'book', 'song'];
    const text = (i: number) => `${words[i % 8]} ${words[(i * 3) % 8]} ${words[(i * 5 + 1) % 8]} n${i}`;
    for (let i = 0; i < 5000; i++) {
      index.add(`d${i}`, text(i));
      if (i >= 100) index.remove(`d${i - 100}`, text(i - 100));
      const { postings, livePostings, documents } = index.footprint;
      expect(postings).to.be.at.most(2 * livePostings + floor.postings + 1);
      expect(documents).to.be.at.most(2 * index.size + floor.documents + 1);
    }
    expect(index.search('lake', 3, (key) => Number(key.slice(1))).map((h) => h.key)).to.have.length(3);
  });

  it('finds nothing for a query of stop words only', function () {
    const index = new InvertedIndex(BM25);
    index.add('a', 'the lake and the dog');
    expect(index.search('the and', 5, () => 0)).to.deep.equal([]);
  });
});
