import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  CompactionResult,
  IllegalStateError,
  InvalidArgumentError,
  Messages,
  type RetrievalRequest,
  type RetrievedEvent,
  type Retriever,
  type SessionService,
} from 'session-compaction';
import { accessDeniedMessage } from 'session-compaction/spi';

/** A backend under test: writes go through `service`, reads through `retriever`. */
export interface RankingBackend {
  service: SessionService;
  retriever: Retriever;
  close(): Promise<void>;
}

/** Ids no other test (or parallel run) uses, so every scenario owns its sessions on a shared store. */
const fresh = (label: string) => `${label}-${randomBytes(5).toString('hex')}`;

interface Line {
  text: string;
  branch?: string;
}

/** Creates a session, appends the lines (user/assistant alternating), then archives all but the last `keepActive`. */
async function conversation(
  service: SessionService,
  userId: string,
  lines: readonly (string | Line)[],
  keepActive: number,
): Promise<{ sessionId: string; ids: string[] }> {
  const session = await service.create({ userId, id: fresh('s') });
  const ids: string[] = [];
  for (const [i, line] of lines.entries()) {
    const { text, branch } = typeof line === 'string' ? { text: line, branch: undefined } : line;
    const message = i % 2 === 0 ? Messages.user(text) : Messages.assistant(text);
    ids.push((await service.appendMessage(session.id, message, { branch: branch ?? null })).id);
  }
  await service.compact(
    session.id,
    () => true,
    async (request) =>
      new CompactionResult(
        request.events.slice(request.events.length - keepActive),
        request.events.slice(0, request.events.length - keepActive),
        0,
      ),
  );
  return { sessionId: session.id, ids };
}

const PERSONAL = [
  'I adopted a golden retriever puppy last spring and named him Biscuit.',
  'Biscuit is a lovely name for a golden retriever.',
  'My sister Marta teaches chemistry at a high school in Lisbon.',
  'Teaching chemistry sounds rewarding.',
  'The quarterly budget review moved to the third of March.',
  'Noted: the budget meeting is on March 3rd.',
  'We booked a cabin near Lake Tahoe for the winter holidays.',
  'Tahoe in winter is beautiful; bring snow chains.',
  'What should I cook tonight?',
  'How about a mushroom risotto with parmesan?',
];

const texts = (hits: readonly RetrievedEvent[]) => hits.map((h) => h.event.text);

/**
 * The ranking contract every retriever backend meets: relevance, limits, the active window, branches,
 * user and session scope, and queries full of search-syntax characters.
 */
export function rankingContract(
  name: string,
  open: () => Promise<RankingBackend>,
  /** Retrievers refuse another user's session with the access-denied error; a repository's searchEvents finds nothing. */
  foreignSession: 'refused' | 'empty' = 'refused',
  /**
   * Word-matching retrievers return every event sharing a word and rank rare shared words highest; a
   * similarity ranking (embeddings) is held to the rules, not to those rankings.
   */
  lexical = true,
): void {
  describe(`ranking contract: ${name}`, function () {
    let backend: RankingBackend;
    let service: SessionService;
    const retrieve = (request: RetrievalRequest) => backend.retriever.retrieve(request);
    // Word-ranking expectations exist only for lexical retrievers (not registered otherwise).
    const itLexical = (title: string, fn: Mocha.AsyncFunc): void => {
      if (lexical) it(title, fn);
    };

    before(async function () {
      backend = await open();
      service = backend.service;
    });
    after(async function () {
      await backend?.close();
    });

    it('ranks the event that holds the most specific words of the question first', async function () {
      const { sessionId, ids } = await conversation(service, fresh('u'), PERSONAL, 2);
      const hits = await retrieve({ sessionId, query: 'When is the quarterly budget review?' });
      expect(hits[0]?.event.id).to.equal(ids[4]);
      const scores = hits.map((h) => h.score);
      expect(scores).to.deep.equal([...scores].sort((a, b) => b - a));
    });

    itLexical('finds an event by a rare name in a longer question', async function () {
      const { sessionId, ids } = await conversation(service, fresh('u'), PERSONAL, 2);
      const hits = await retrieve({ sessionId, query: 'Where does Marta work, and what subject?' });
      expect(hits[0]?.event.id).to.equal(ids[2]);
    });

    itLexical("finds a participant's turns by the name they carry, not only by their text", async function () {
      const session = await service.create({ userId: fresh('u'), id: fresh('s') });
      const caroline = await service.appendMessage(
        session.id,
        Messages.user('I went to a support group yesterday.', { name: 'Caroline' }),
      );
      await service.appendMessage(session.id, Messages.assistant('I went to a pottery class yesterday.', { name: 'Melanie' }));
      await service.appendMessage(session.id, Messages.user('The weather was lovely.', { name: 'Melanie' }));
      const hits = await retrieve({ sessionId: session.id, query: 'Where did Caroline go?', includeActive: true });
      expect(hits.map((h) => h.event.id)).to.deep.equal([caroline.id]);
    });

    it('finds tool results and tool-call arguments, not only chat text', async function () {
      const session = await service.create({ userId: fresh('u'), id: fresh('s') });
      const call = await service.appendMessage(
        session.id,
        Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'grep_repo', '{"pattern":"FrobnicatorError"}')] }),
      );
      const result = await service.appendMessage(
        session.id,
        Messages.tool([Messages.toolResponse('c1', 'grep_repo', 'src/io.py:12 raise QuuxTimeout')]),
      );
      expect((await retrieve({ sessionId: session.id, query: 'FrobnicatorError', includeActive: true }))[0]?.event.id).to.equal(
        call.id,
      );
      expect((await retrieve({ sessionId: session.id, query: 'QuuxTimeout', includeActive: true }))[0]?.event.id).to.equal(
        result.id,
      );
    });

    it('never returns a shadow prompt (the synthetic user message opening a summary)', async function () {
      const session = await service.create({ userId: fresh('u'), id: fresh('s') });
      const synthetic = { synthetic: true, compactionSource: 'recursive-summarization' };
      await service.appendMessage(session.id, Messages.user('Summarize the conversation about the okapi.'), {
        metadata: synthetic,
      });
      const summary = await service.appendMessage(session.id, Messages.assistant('We talked about the okapi.'), {
        metadata: synthetic,
      });
      const hits = await retrieve({ sessionId: session.id, query: 'summarize okapi conversation', includeActive: true });
      expect(hits.map((h) => h.event.id)).to.deep.equal([summary.id]);
    });

    it('returns at most `limit` hits, and all matching ones under a larger limit', async function () {
      const { sessionId } = await conversation(service, fresh('u'), PERSONAL, 2);
      const query = 'Biscuit chemistry budget Tahoe';
      expect(await retrieve({ sessionId, query, limit: 2 })).to.have.length(2);
      const all = await retrieve({ sessionId, query, limit: 50 });
      if (lexical) expect(all.length).to.be.within(6, 8);
      else expect(all.length).to.be.within(2, 50);
      expect(await retrieve({ sessionId, query, limit: 1 })).to.have.length(1);
    });

    it('returns [] for an empty or blank query', async function () {
      const { sessionId } = await conversation(service, fresh('u'), PERSONAL, 2);
      expect(await retrieve({ sessionId, query: '' })).to.deep.equal([]);
      expect(await retrieve({ sessionId, query: '  \n\t ' })).to.deep.equal([]);
    });

    it('returns [] for a session that does not exist', async function () {
      expect(await retrieve({ sessionId: fresh('missing'), query: 'budget review' })).to.deep.equal([]);
    });

    it('searches the archive only by default; includeActive adds the active window', async function () {
      const { sessionId, ids } = await conversation(service, fresh('u'), PERSONAL, 2);
      expect(await retrieve({ sessionId, query: 'mushroom risotto parmesan' })).to.deep.equal([]);
      const hits = await retrieve({ sessionId, query: 'mushroom risotto parmesan', includeActive: true });
      expect(hits.map((h) => h.event.id)).to.deep.equal([ids[9]]);
      expect(hits[0]!.event.archived).to.equal(false);
    });

    it('never returns events the request branch cannot see', async function () {
      const { sessionId } = await conversation(
        service,
        fresh('u'),
        [
          'Nebula root: the launch codename is Nebula.',
          { text: 'Nebula on branch a: fuel estimates.', branch: 'a' },
          { text: 'Nebula on branch a.b: payload notes.', branch: 'a.b' },
          { text: 'Nebula on branch c: sibling notes.', branch: 'c' },
          { text: 'Nebula on branch ab: a name that only shares a prefix.', branch: 'ab' },
        ],
        0,
      );
      const seen = async (branch: string | null | undefined) =>
        texts(await retrieve({ sessionId, query: 'nebula', branch, limit: 50 })).sort();
      expect(await seen(undefined)).to.deep.equal(['Nebula root: the launch codename is Nebula.']);
      expect(await seen(null)).to.deep.equal(['Nebula root: the launch codename is Nebula.']);
      expect(await seen('a')).to.deep.equal([
        'Nebula on branch a: fuel estimates.',
        'Nebula root: the launch codename is Nebula.',
      ]);
      expect(await seen('a.b')).to.deep.equal([
        'Nebula on branch a.b: payload notes.',
        'Nebula on branch a: fuel estimates.',
        'Nebula root: the launch codename is Nebula.',
      ]);
      expect(await seen('c.d')).to.deep.equal([
        'Nebula on branch c: sibling notes.',
        'Nebula root: the launch codename is Nebula.',
      ]);
    });

    it("scope 'user' searches every session of the user and never another user's", async function () {
      const alice = fresh('alice');
      const bob = fresh('bob');
      const a1 = await conversation(service, alice, ['Alice archive: the zeppelin museum trip.', 'filler one'], 1);
      const a2 = await conversation(service, alice, ['Alice other session: zeppelin models.', 'zeppelin still active here'], 1);
      const b1 = await conversation(service, bob, ['Bob secret: zeppelin password is hunter2.', 'filler two'], 1);
      const hits = await retrieve({ sessionId: a1.sessionId, query: 'zeppelin', scope: 'user', userId: alice, limit: 50 });
      expect(hits.map((h) => h.event.sessionId).every((id) => id === a1.sessionId || id === a2.sessionId)).to.equal(true);
      expect(texts(hits).sort()).to.deep.equal([
        'Alice archive: the zeppelin museum trip.',
        'Alice other session: zeppelin models.',
        // Another session's active window is not in this prompt, so it is searched too.
        'zeppelin still active here',
      ]);
      const bobs = await retrieve({ sessionId: b1.sessionId, query: 'zeppelin', scope: 'user', userId: bob, limit: 50 });
      expect(texts(bobs)).to.deep.equal(['Bob secret: zeppelin password is hunter2.']);
    });

    it("scope 'session' (the default) never leaves the session, even for the same user", async function () {
      const alice = fresh('alice');
      const a1 = await conversation(service, alice, ['First: the zeppelin museum trip.', 'filler'], 1);
      await conversation(service, alice, ['Second: zeppelin models.', 'filler'], 1);
      const hits = await retrieve({ sessionId: a1.sessionId, query: 'zeppelin', userId: alice, limit: 50 });
      expect(hits.map((h) => h.event.sessionId)).to.deep.equal([a1.sessionId]);
    });

    it("never searches a session the request's user does not own, in either scope", async function () {
      const alice = fresh('alice');
      const mallory = fresh('mallory');
      const a1 = await conversation(service, alice, ['Alice: the vault code is 4711 zeppelin.', 'filler'], 1);
      await conversation(service, mallory, ['Mallory: zeppelin.', 'filler'], 1);
      for (const scope of ['session', 'user'] as const) {
        const request = { sessionId: a1.sessionId, query: 'zeppelin vault', userId: mallory, scope };
        if (foreignSession === 'empty') {
          expect(await retrieve(request)).to.deep.equal([]);
          continue;
        }
        let error: unknown;
        try {
          await retrieve(request);
        } catch (e) {
          error = e;
        }
        expect(error).to.be.instanceOf(IllegalStateError);
        expect((error as Error).message).to.equal(accessDeniedMessage(a1.sessionId, mallory));
      }
    });

    it("rejects scope 'user' without a userId", async function () {
      const { sessionId } = await conversation(service, fresh('u'), PERSONAL, 2);
      let error: unknown;
      try {
        await retrieve({ sessionId, query: 'budget', scope: 'user' });
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(InvalidArgumentError);
    });

    const SYNTAX = [
      '"',
      "'",
      '""',
      '%',
      '_',
      '*',
      '%_%',
      'NEAR',
      'NEAR(',
      'NEAR(a b, 2)',
      'a NEAR b',
      '-',
      '--',
      '(',
      ')',
      '()',
      ':',
      'text:',
      'col:budget',
      '^budget',
      'budget*',
      'AND',
      'OR',
      'NOT',
      'budget AND',
      'OR review',
      '!',
      '&',
      '|',
      '<->',
      "budget' OR '1'='1",
      '\\',
      '\u0000',
      '\uD800',
      '{budget}',
      '[review]',
    ];

    it('treats search-syntax characters in the query as plain text and never throws', async function () {
      const { sessionId } = await conversation(
        service,
        fresh('u'),
        [...PERSONAL, 'He said "quoted" -minus (paren) 50% a_b x*y c:d', 'ok'],
        1,
      );
      for (const query of SYNTAX) {
        const hits = await retrieve({ sessionId, query, includeActive: true });
        expect(hits, query).to.be.an('array');
      }
    });

    itLexical('still finds the words around search-syntax characters', async function () {
      const { sessionId, ids } = await conversation(service, fresh('u'), PERSONAL, 2);
      const hits = await retrieve({ sessionId, query: '"quarterly" AND (budget) OR NEAR(review*, 2) -col:x %_' });
      expect(hits[0]?.event.id).to.equal(ids[4]);
    });
  });
}
