/**
 * Data lifecycle through the public service API, on any backend: tombstones, erasure (delete, eraseUser),
 * redaction with summary regeneration, retention, and isolation of users on every read path.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  Bm25Retriever,
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  IllegalStateError,
  InvalidArgumentError,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  Session,
  SessionEvent,
  type Retriever,
  ContextAssembler,
  EmbeddingRetriever,
  SessionMemory,
  RepositoryRetriever,
  createDefaultLogger,
} from 'session-compaction';
import { ConversationSearchTool, CrossSessionSearchTool, encodeEvent, isSearchableRepository } from 'session-compaction/spi';
import OpenAI from 'openai';
import { startFakeOpenAIServer } from '../support/fakeOpenAIServer.js';
import { NO_RESULTS } from '../../src/chat/recallSupport.js';
import { json, runCli } from '../cli/support/runCli.js';
import { snapshotOf, type LifecycleTestRepository } from '../repository/lifecycleContract.js';
import { rejection } from '../support/rejection.js';

export interface LifecycleBackend {
  name: string;
  /** A repository on the suite's store; several calls in one test share the store. */
  open(): Promise<LifecycleTestRepository>;
  /** Where the admin CLI finds the same store (absent for the in-memory backend). */
  cli?: { url: string; prefix: string };
}

let counter = 0;
const uid = (p: string) => `${p}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
const DAY = 24 * 60 * 60 * 1000;
const logger = createDefaultLogger({ level: 'error' });
const SECRET = 'Hunter2-XYZZY-4417';

/** Runs the admin CLI's `export --user` against the backend's store; returns the JSON Lines it wrote. */
async function exportUser(
  cli: { url: string; prefix: string },
  userId: string,
): Promise<{ summary: Record<string, unknown>; lines: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'lifecycle-export-'));
  try {
    const out = join(dir, 'export.jsonl');
    const run = await runCli('export', '--url', cli.url, '--prefix', cli.prefix, '--user', userId, '--out', out, '--json');
    expect(run.code, run.stderr).to.equal(0);
    return { summary: json(run), lines: readFileSync(out, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A deterministic bag-of-words embedding: enough to rank, no model. */
async function embed(texts: string[]): Promise<number[][]> {
  return texts.map((t) => {
    const v = new Array<number>(64).fill(0);
    for (const w of t.toLowerCase().split(/[^a-z0-9-]+/)) {
      if (w === '') continue;
      let h = 7;
      for (let i = 0; i < w.length; i++) h = (h * 31 + w.charCodeAt(i)) >>> 0;
      v[h % 63]! += 1;
    }
    v[63] = 0.01;
    return v;
  });
}

/**
 * The repository, with each named method waiting for `open` before it runs (the first call signals
 * `reached`): a write held back until another caller has done its part.
 */
function gateWrites<R extends object>(repository: R, methods: readonly string[], open: Promise<void>, reached: () => void): R {
  return new Proxy(repository, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property === 'string' && methods.includes(property)) {
        return async (...args: unknown[]) => {
          reached();
          await open;
          return method.apply(target, args);
        };
      }
      return method.bind(target);
    },
  });
}

export function lifecycleServiceContract(backend: LifecycleBackend): void {
  describe(`SessionService data lifecycle: ${backend.name}`, function () {
    this.timeout(30_000);
    let repo: LifecycleTestRepository;
    let clock: number;
    let service: DefaultSessionService;
    const opened: Array<{ close(): void }> = [];

    beforeEach(async function () {
      repo = await backend.open();
      clock = Date.now();
      service = new DefaultSessionService(repo, { logger, now: () => new Date(clock) });
    });
    afterEach(async function () {
      for (const r of opened.splice(0)) r.close();
      await repo?.close?.();
    });

    async function conversation(userId: string, texts: readonly string[], id = uid('s')): Promise<string> {
      await service.create({ userId, id });
      for (const [i, text] of texts.entries()) {
        await service.appendMessage(id, i % 2 === 0 ? Messages.user(text) : Messages.assistant(text), { id: `ev-${i}` });
      }
      return id;
    }
    const chat = [
      'Please book the risotto place for Friday at 19:30.',
      'Booked Trattoria Verde for Friday 19:30.',
      'Also remind me to call the plumber about the leaking valve.',
      'Reminder set: call the plumber on Thursday.',
    ];
    const everything = async (id: string) =>
      JSON.stringify((await service.getEvents(id, EventFilter.all())).map((e) => encodeEvent(e)));

    describe('delete and tombstones', function () {
      it('delete reports what it removed and the id cannot be created again by anyone', async function () {
        const id = await conversation('alice', chat);
        const report = await service.delete(id);
        expect(report).to.deep.include({ sessions: 1, sessionIds: [id], activeEvents: 4, archivedEvents: 0, tombstones: 1 });
        for (const userId of ['alice', 'mallory']) {
          const error = await rejection(service.create({ userId, id }));
          expect(error).to.be.instanceOf(IllegalStateError);
          expect(error.message).to.include(`Session ${id} was deleted at`).and.include('cannot be created again');
        }
        expect(await service.findById(id)).to.equal(null);
      });

      it('the original owner may recreate the id with allowRecreate; anyone else may not', async function () {
        const id = await conversation('alice', chat);
        await service.delete(id);
        expect(await rejection(service.create({ userId: 'mallory', id, allowRecreate: true }))).to.be.instanceOf(
          IllegalStateError,
        );
        const again = await service.create({ userId: 'alice', id, allowRecreate: true });
        expect(again.userId).to.equal('alice');
        expect(await service.getEvents(id)).to.deep.equal([]);
      });

      it('a late append and a late compaction are refused with a message that says the session was deleted', async function () {
        const id = await conversation('alice', chat);
        await service.delete(id);
        const append = await rejection(service.appendMessage(id, Messages.user('late')));
        expect(append).to.be.instanceOf(InvalidArgumentError);
        expect(append.message).to.include(`Session not found: ${id} (deleted at`);
        const compact = await rejection(
          service.compact(
            id,
            () => true,
            new RecursiveSummarizationCompactionStrategy({ chatClient: new ExtractiveSummarizer() }),
          ),
        );
        expect(compact.message).to.include(`Session not found: ${id} (deleted at`);
        expect(await service.findById(id)).to.equal(null);
      });

      it('an in-flight compaction whose session is deleted meanwhile commits nothing', async function () {
        const id = await conversation('alice', [...chat, ...chat, ...chat]);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const slow = { call: async () => (await gate, 'a summary') };
        const running = service.compact(
          id,
          () => true,
          new RecursiveSummarizationCompactionStrategy({ chatClient: slow, maxEventsToKeep: 2, overlapSize: 0 }),
        );
        await new Promise((r) => setTimeout(r, 50));
        await service.delete(id);
        release();
        expect((await rejection(running)).message).to.include(`Session not found: ${id}`);
        expect(await service.findById(id)).to.equal(null);
        expect(await service.getEvents(id)).to.deep.equal([]);
      });

      it('a tombstone stops blocking after tombstoneTtlMs, and retention removes expired ones', async function () {
        const short = new DefaultSessionService(repo, { logger, now: () => new Date(clock), tombstoneTtlMs: 60_000 });
        const id = uid('s');
        await short.create({ userId: 'alice', id });
        await short.delete(id);
        expect(await rejection(short.create({ userId: 'mallory', id }))).to.be.instanceOf(IllegalStateError);
        clock += 61_000;
        expect((await short.create({ userId: 'mallory', id })).userId).to.equal('mallory');
        const other = uid('s');
        await short.create({ userId: 'alice', id: other });
        await short.delete(other);
        clock += 61_000;
        const report = await short.applyRetention({ maxArchivedEventsPerSession: 1_000_000 });
        expect(report.tombstonesExpired).to.be.at.least(1);
        expect(await repo.findTombstone(other)).to.equal(null);
      });

      it('with tombstoneTtlMs 0 a deleted id is free at once', async function () {
        const free = new DefaultSessionService(repo, { logger, tombstoneTtlMs: 0 });
        const id = uid('s');
        await free.create({ userId: 'alice', id });
        expect((await free.delete(id)).tombstones).to.equal(0);
        expect((await free.create({ userId: 'bob', id })).userId).to.equal('bob');
      });

      it('deleteExpiredSessions tombstones what it deletes', async function () {
        const id = uid('s');
        await service.create({ userId: 'alice', id, timeToLiveMs: 1000 });
        clock += 2000;
        expect(await service.deleteExpiredSessions(new Date(clock))).to.be.at.least(1);
        expect(await rejection(service.create({ userId: 'mallory', id }))).to.be.instanceOf(IllegalStateError);
      });
    });

    describe('eraseUser', function () {
      const ALICE = uid('alice');
      const BOB = uid('bob');
      it('removes everything of the user from every read path and leaves the other user byte-for-byte unchanged', async function () {
        const aliceIds = [await conversation(ALICE, chat), await conversation(ALICE, chat)];
        const bobIds = [await conversation(BOB, chat), await conversation(BOB, chat)];
        await service.compact(
          aliceIds[0]!,
          () => true,
          new RecursiveSummarizationCompactionStrategy({
            chatClient: new ExtractiveSummarizer(),
            maxEventsToKeep: 2,
            overlapSize: 0,
          }),
        );
        const bm25 = new Bm25Retriever({ sessionService: service });
        const vectors = new EmbeddingRetriever({ sessionService: service, embed });
        opened.push(bm25, vectors);
        // Warm the in-process caches: they must forget alice on erasure, not only stop answering.
        for (const id of aliceIds) {
          expect(await bm25.retrieve({ sessionId: id, userId: ALICE, query: 'plumber', includeActive: true })).to.not.be.empty;
          expect(await vectors.retrieve({ sessionId: id, userId: ALICE, query: 'plumber', includeActive: true })).to.not.be.empty;
        }
        const bobBefore = await snapshotOf(repo, bobIds);

        const report = await service.eraseUser(ALICE);
        expect(report.sessions).to.equal(2);
        expect(report.sessionIds.sort()).to.deep.equal([...aliceIds].sort());
        expect(report.activeEvents + report.archivedEvents).to.equal(8);
        expect(report.summaries).to.equal(2);
        expect(report.tombstones).to.equal(2);
        expect(report.derived['bm25-index']).to.be.greaterThan(0);
        expect(report.derived.embeddings).to.be.greaterThan(0);

        expect(await service.findByUserId(ALICE)).to.deep.equal([]);
        const tools = {
          conversation: new ConversationSearchTool({ sessionService: service }),
          cross: new CrossSessionSearchTool({ sessionService: service }),
        };
        const repositoryRetriever = new RepositoryRetriever({ repository: repo, sessionService: service });
        for (const id of aliceIds) {
          expect(await service.findById(id)).to.equal(null);
          expect(await service.getEvents(id)).to.deep.equal([]);
          expect(await service.getMessages(id)).to.deep.equal([]);
          expect(
            await tools.conversation.execute({ innerThought: '', query: 'plumber' }, { sessionId: id, userId: ALICE }),
          ).to.equal(NO_RESULTS);
          expect(await tools.cross.execute({ innerThought: '', query: 'plumber' }, { sessionId: id, userId: ALICE })).to.equal(
            NO_RESULTS,
          );
          for (const r of [bm25, vectors, repositoryRetriever] as Retriever[]) {
            expect(
              await r.retrieve({ sessionId: id, userId: ALICE, query: 'plumber', scope: 'user', includeActive: true }),
            ).to.deep.equal([]);
          }
          if (isSearchableRepository(repo)) {
            expect(await repo.searchEvents(id, 'plumber', { includeActive: true, scope: 'user', userId: ALICE })).to.deep.equal(
              [],
            );
          }
        }
        expect(bm25.indexedSessionIds().filter((id) => aliceIds.includes(id))).to.deep.equal([]);
        expect(await snapshotOf(repo, bobIds)).to.equal(bobBefore);
        if (backend.cli !== undefined) {
          const exported = await exportUser(backend.cli, ALICE);
          expect(exported.summary).to.include({ sessions: 0, events: 0 });
          expect(exported.lines).to.not.include('plumber');
        }
      });

      it('after eraseUser, the ContextAssembler and SessionMemory refuse the erased ids instead of quoting or reviving them', async function () {
        const user = uid('carol');
        const id = await conversation(user, chat);
        await service.compact(
          id,
          () => true,
          new RecursiveSummarizationCompactionStrategy({
            chatClient: new ExtractiveSummarizer(),
            maxEventsToKeep: 2,
            overlapSize: 0,
          }),
        );
        const bm25 = new Bm25Retriever({ sessionService: service });
        opened.push(bm25);
        const assembler = new ContextAssembler({ sessionService: service, retriever: bm25 });
        expect((await assembler.assemble({ sessionId: id, maxTokens: 4000, query: 'risotto' })).recalled).to.not.be.empty;
        const server = await startFakeOpenAIServer();
        opened.push({ close: () => void server.close() });
        const memory = new SessionMemory({
          sessionService: service,
          client: new OpenAI({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 }),
          model: 'chat-model',
          calibrate: false,
          logger,
          recall: { retriever: bm25 },
        });

        await service.eraseUser(user);

        const assembled = await rejection(assembler.assemble({ sessionId: id, maxTokens: 4000, query: 'plumber' }));
        expect(assembled.message).to.equal(`Session not found: ${id}`);
        const turn = await rejection(
          memory.call({ sessionId: id, userId: user, messages: [{ role: 'user', content: 'plumber?' }] }),
        );
        expect(turn.message).to.include(`Session ${id} was deleted`);
        expect(server.requests, 'no model call for an erased session').to.deep.equal([]);
        expect(await service.findById(id)).to.equal(null);
        expect(await service.getEvents(id)).to.deep.equal([]);
      });

      it('is empty for a user without sessions', async function () {
        const report = await service.eraseUser(uid('nobody'));
        expect(report).to.deep.include({ sessions: 0, activeEvents: 0, archivedEvents: 0, tombstones: 0 });
      });

      it('a fork that read the source before eraseUser and writes after it is refused: the erasure check holds', async function () {
        const user = uid('erased');
        const id = await conversation(user, chat);
        // The fork's first write (whichever the service uses) waits until the erasure has finished.
        let release!: () => void;
        const erased = new Promise<void>((resolve) => (release = resolve));
        let reached!: () => void;
        const paused = new Promise<void>((resolve) => (reached = resolve));
        const forking = new DefaultSessionService(gateWrites(repo, ['forkSession', 'saveIfAbsent'], erased, reached), {
          logger,
          now: () => new Date(clock),
        });
        const fork = rejection(forking.forkSession(id));
        await paused;
        const report = await service.eraseUser(user);
        expect(report.sessionIds).to.deep.equal([id]);
        release();
        const error = await fork;
        expect(error).to.be.instanceOf(InvalidArgumentError);
        expect(error.message).to.equal(`Session not found: ${id}`);
        expect(await service.findByUserId(user), 'nothing of the erased user reappears').to.deep.equal([]);
      });

      it('while eraseUser runs, a new session, a fork or a copy for the user is refused inside the store; afterwards a new session is allowed', async function () {
        const user = uid('erasing');
        const first = await conversation(user, chat);
        const second = await conversation(user, chat);
        // The eraser stops before erasing its first session: the user is marked, nothing is erased yet.
        let release!: () => void;
        const go = new Promise<void>((resolve) => (release = resolve));
        let reached!: () => void;
        const paused = new Promise<void>((resolve) => (reached = resolve));
        const eraser = new DefaultSessionService(gateWrites(repo, ['eraseSession'], go, reached), { logger });
        const erasing = eraser.eraseUser(user);
        await paused;
        const created = await rejection(service.create({ userId: user }));
        expect(created).to.be.instanceOf(IllegalStateError);
        expect(created.message).to.include("its user's data is being erased");
        expect(await rejection(service.create({ userId: user, id: uid('chosen') }))).to.be.instanceOf(IllegalStateError);
        expect(await rejection(service.forkSession(first))).to.be.instanceOf(IllegalStateError);
        // What copy and import do: save a session of the user under an id the target does not have.
        expect(await rejection(repo.save(Session.create({ id: uid('copied'), userId: user })))).to.be.instanceOf(
          IllegalStateError,
        );
        // Other users are not affected.
        expect(await service.create({ userId: uid('other') })).to.be.an('object');
        release();
        const report = await erasing;
        expect(report.sessionIds.sort()).to.deep.equal([first, second].sort());
        expect(await service.findByUserId(user)).to.deep.equal([]);
        const later = await service.create({ userId: user });
        expect((await service.findByUserId(user)).map((s) => s.id)).to.deep.equal([later.id]);
      });
    });

    describe('isolation by construction', function () {
      const ALICE = uid('alice');
      const BOB = uid('bob');
      it('two users with identical content: no public read path returns one user’s data to the other', async function () {
        const aliceId = await conversation(ALICE, chat);
        const bobId = await conversation(BOB, chat);
        const mine = (sessionId: string) => sessionId === aliceId;
        const tools = {
          conversation: new ConversationSearchTool({ sessionService: service }),
          cross: new CrossSessionSearchTool({ sessionService: service }),
        };
        const bm25 = new Bm25Retriever({ sessionService: service });
        const vectors = new EmbeddingRetriever({ sessionService: service, embed });
        opened.push(bm25, vectors);
        const retrievers = [bm25, vectors, new RepositoryRetriever({ repository: repo, sessionService: service })] as Retriever[];

        expect((await service.findByUserId(ALICE)).every((s) => s.userId === ALICE)).to.equal(true);
        expect((await service.getEvents(aliceId)).every((e) => mine(e.sessionId))).to.equal(true);
        const own = JSON.parse(
          await tools.conversation.execute({ innerThought: '', query: 'plumber' }, { sessionId: aliceId, userId: ALICE }),
        ) as unknown[];
        expect(own).to.have.length(2);
        // Alice naming bob's session gets nothing from it.
        const foreign = await rejection(
          tools.conversation.execute({ innerThought: '', query: 'plumber' }, { sessionId: bobId, userId: ALICE }).then((out) => {
            if (out !== NO_RESULTS) throw new Error(`leaked: ${out}`);
            throw new Error('refused');
          }),
        );
        expect(foreign.message).to.not.include('leaked');
        const cross = JSON.parse(
          await tools.cross.execute({ innerThought: '', query: 'plumber,risotto' }, { sessionId: aliceId, userId: ALICE }),
        ) as Array<{ sessionId: string }>;
        expect(cross.length).to.be.greaterThan(0);
        expect(cross.every((h) => h.sessionId !== bobId)).to.equal(true);
        for (const r of retrievers) {
          const hits = await r.retrieve({
            sessionId: aliceId,
            userId: ALICE,
            query: 'plumber risotto',
            scope: 'user',
            includeActive: true,
          });
          expect(hits.length).to.be.greaterThan(0);
          expect(hits.every((h) => mine(h.event.sessionId))).to.equal(true);
          const asked = await r
            .retrieve({ sessionId: bobId, userId: ALICE, query: 'plumber', includeActive: true })
            .catch((e: Error) => e);
          expect(asked instanceof Error ? [] : asked).to.deep.equal([]);
        }
        if (isSearchableRepository(repo)) {
          const hits = await repo.searchEvents(aliceId, 'plumber', { includeActive: true, scope: 'user', userId: ALICE });
          expect(hits.every((h) => mine(h.event.sessionId))).to.equal(true);
          expect(await repo.searchEvents(bobId, 'plumber', { includeActive: true, userId: ALICE })).to.deep.equal([]);
        }
        if (backend.cli !== undefined) {
          const out = await exportUser(backend.cli, ALICE);
          expect(out.lines).to.include(aliceId);
          expect(out.lines).to.not.include(bobId);
        }
      });
      it('both ways, with compacted logs: every user-facing read path, the ContextAssembler and SessionMemory quote only the caller’s own data', async function () {
        // Identical conversations, plus one marker per user that every query below also matches: a marker
        // of the other user anywhere in a result is a leak.
        const users = [uid('alice'), uid('bob')] as const;
        const marker = (u: string) => `badge-${u.split('-')[0]}-7731`;
        const ids = new Map<string, string>();
        const strategy = new RecursiveSummarizationCompactionStrategy({
          chatClient: new ExtractiveSummarizer(),
          maxEventsToKeep: 2,
          overlapSize: 0,
        });
        for (const u of users) {
          const id = await conversation(u, [`My plumber badge is ${marker(u)}.`, 'Noted the plumber badge.', ...chat]);
          await service.compact(id, () => true, strategy);
          ids.set(u, id);
        }
        const bm25 = new Bm25Retriever({ sessionService: service });
        const vectors = new EmbeddingRetriever({ sessionService: service, embed });
        opened.push(bm25, vectors);
        const retrievers = [bm25, vectors, new RepositoryRetriever({ repository: repo, sessionService: service })] as Retriever[];
        const tools = {
          conversation: new ConversationSearchTool({ sessionService: service }),
          cross: new CrossSessionSearchTool({ sessionService: service }),
        };
        const server = await startFakeOpenAIServer();
        opened.push({ close: () => void server.close() });
        server.respondWith(() => ({ content: 'The plumber badge is noted.' }));
        const memory = new SessionMemory({
          sessionService: service,
          client: new OpenAI({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 }),
          model: 'chat-model',
          calibrate: false,
          logger,
          recall: { retriever: bm25 },
        });
        const assembler = new ContextAssembler({ sessionService: service, retriever: bm25 });
        const query = 'plumber badge 7731';
        // The tools match keywords as substrings (comma-separated for the cross-session one).
        const keyword = '7731';

        for (const [me, other] of [users, [...users].reverse()] as const) {
          const mine = ids.get(me)!;
          const theirs = ids.get(other)!;
          const leak = (value: unknown) => {
            const text = typeof value === 'string' ? value : JSON.stringify(value);
            expect(text, `${me} sees ${other}’s data`).to.not.include(marker(other)).and.not.include(theirs);
          };
          const owned = (sessionIds: readonly string[]) => expect(sessionIds.every((s) => s === mine)).to.equal(true);

          const sessions = await service.findByUserId(me);
          expect(sessions.map((s) => s.id)).to.deep.equal([mine]);
          owned((await service.getEvents(mine)).map((e) => e.sessionId));
          leak(await service.getMessages(mine));
          for (const r of retrievers) {
            for (const scope of ['session', 'user'] as const) {
              const hits = await r.retrieve({ sessionId: mine, userId: me, query, scope, includeActive: true });
              expect(hits.length, `${scope} recall finds the caller’s own data`).to.be.greaterThan(0);
              owned(hits.map((h) => h.event.sessionId));
              leak(hits.map((h) => encodeEvent(h.event)));
            }
            const asked = await r
              .retrieve({ sessionId: theirs, userId: me, query, scope: 'user', includeActive: true })
              .catch((e: Error) => e);
            expect(asked instanceof Error ? asked.message : asked).to.satisfy((v: unknown) =>
              typeof v === 'string' ? v.includes('Access denied') : Array.isArray(v) && v.length === 0,
            );
          }
          if (isSearchableRepository(repo)) {
            const hits = await repo.searchEvents(mine, query, { includeActive: true, scope: 'user', userId: me });
            owned(hits.map((h) => h.event.sessionId));
            expect(await repo.searchEvents(theirs, query, { includeActive: true, scope: 'user', userId: me })).to.deep.equal([]);
          }
          const own = await tools.conversation.execute({ innerThought: '', query: keyword }, { sessionId: mine, userId: me });
          expect(own).to.include(marker(me));
          leak(own);
          const cross = await tools.cross.execute(
            { innerThought: '', query: `plumber,${keyword}` },
            { sessionId: mine, userId: me },
          );
          expect(cross).to.include(marker(me));
          leak(cross);
          const foreign = await tools.conversation
            .execute({ innerThought: '', query: keyword }, { sessionId: theirs, userId: me })
            .catch((e: Error) => e.message);
          expect(foreign === NO_RESULTS || foreign.includes('Access denied'), `tool on ${other}’s session: ${foreign}`).to.equal(
            true,
          );

          const context = await assembler.assemble({ sessionId: mine, maxTokens: 4000, query });
          expect(context.recalled.length).to.be.greaterThan(0);
          owned([...context.recalled, ...context.activeEvents].map((e) => e.sessionId));
          leak(context.messages);

          const before = server.requests.length;
          const reply = await memory.call({ sessionId: mine, userId: me, messages: [{ role: 'user', content: query }] });
          expect(reply.recalled ?? []).to.not.be.empty;
          expect(server.requests.length).to.equal(before + 1);
          const prompt = JSON.stringify(server.requests.at(-1)!.messages);
          expect(prompt).to.include(marker(me));
          leak(prompt);
          const theirLog = await everything(theirs);
          const refused = await rejection(
            memory.call({ sessionId: theirs, userId: me, messages: [{ role: 'user', content: query }] }),
          );
          expect(refused.message).to.include('Access denied');
          expect(server.requests.length, 'no model call for a foreign session').to.equal(before + 1);
          expect(await everything(theirs), 'a refused call writes nothing').to.equal(theirLog);

          if (backend.cli !== undefined) {
            const exported = await exportUser(backend.cli, me);
            expect(exported.lines).to.include(marker(me));
            leak(exported.lines);
          }
        }
      });
    });

    describe('redaction', function () {
      const secretChat = [
        `My staging password is ${SECRET}, please keep it for the deploy on 2031-04-02.`,
        'Noted: I will use it for the deploy.',
        'Which branch do we deploy from?',
        'We deploy from release/2031.04.',
        'And who approves it?',
        'Maria approves production deploys.',
      ];
      const summarize = () =>
        new RecursiveSummarizationCompactionStrategy({
          chatClient: new ExtractiveSummarizer(),
          maxEventsToKeep: 2,
          overlapSize: 0,
        });

      async function compactedWithSecret(): Promise<string> {
        const id = await conversation('alice', secretChat);
        const result = await service.compact(id, () => true, summarize());
        expect(result.archivedEvents.map((e) => e.id)).to.include('ev-0');
        // The premise: the extractive summariser quoted the secret verbatim.
        expect(await everything(id)).to.include(SECRET);
        const summary = (await service.getEvents(id, EventFilter.active())).find(
          (e) => e.isSynthetic() && e.messageType === 'assistant',
        );
        expect(summary?.text).to.include(SECRET);
        return id;
      }

      async function expectGone(id: string, retrievers: readonly Retriever[]): Promise<void> {
        expect(await everything(id)).to.not.include(SECRET);
        expect(await everything(id)).to.not.include('XYZZY');
        expect(await service.getEvents(id, EventFilter.of({ keyword: 'xyzzy' }))).to.deep.equal([]);
        const tool = new ConversationSearchTool({ sessionService: service });
        expect(await tool.execute({ innerThought: '', query: 'XYZZY' }, { sessionId: id, userId: 'alice' })).to.equal(NO_RESULTS);
        for (const r of retrievers) {
          const hits = await r.retrieve({ sessionId: id, userId: 'alice', query: `password ${SECRET}`, includeActive: true });
          expect(hits.map((h) => JSON.stringify(encodeEvent(h.event))).join('')).to.not.include('XYZZY');
        }
        if (isSearchableRepository(repo)) {
          expect(await repo.searchEvents(id, SECRET, { includeActive: true })).to.deep.equal([]);
          expect(await repo.searchEvents(id, 'xyzzy', { includeActive: true })).to.deep.equal([]);
        }
      }

      it('a secret redacted from an archived event is gone from every event, summary, index and recall result after purgeDerived', async function () {
        const id = await compactedWithSecret();
        const bm25 = new Bm25Retriever({ sessionService: service });
        const vectors = new EmbeddingRetriever({ sessionService: service, embed });
        opened.push(bm25, vectors);
        const retrievers = [bm25, vectors, new RepositoryRetriever({ repository: repo, sessionService: service })] as Retriever[];
        for (const r of retrievers.slice(0, 2)) {
          const found = await r.retrieve({ sessionId: id, userId: 'alice', query: SECRET, includeActive: true });
          expect(found.length).to.be.greaterThan(0);
        }
        const version = await repo.getEventVersion(id);

        const report = await service.redactEvent(id, 'ev-0', { reason: 'user pasted a password' });
        expect(report.redactedEventIds).to.deep.equal(['ev-0']);
        expect(report.taintedSummaryIds).to.have.length(1);
        expect(await repo.getEventVersion(id)).to.equal(version + 1);
        const redacted = (await service.getEvents(id)).find((e) => e.id === 'ev-0')!;
        expect(redacted.text).to.equal('[redacted]');
        expect(redacted.archived).to.equal(true);
        expect(redacted.metadata.redaction).to.deep.include({ reason: 'user pasted a password' });
        expect((await service.getEvents(id)).map((e) => e.id).indexOf('ev-0')).to.equal(0);
        const ledger = await service.verifyCoverage(id);
        expect(ledger.redacted).to.deep.equal(['ev-0']);
        expect(ledger.tainted).to.deep.equal(report.taintedSummaryIds);
        // Tainted, not yet regenerated: the summary still quotes it.
        expect(await everything(id)).to.include(SECRET);

        const purged = await service.purgeDerived(id, 'ev-0', { chatClient: new ExtractiveSummarizer() });
        expect(purged).to.deep.equal({ sessionId: id, regeneratedSummaryIds: report.taintedSummaryIds, method: 'model' });
        await expectGone(id, retrievers);
        const after = await service.verifyCoverage(id);
        expect(after.tainted).to.deep.equal([]);
        expect(after.ok).to.equal(true);
        const summary = (await service.getEvents(id)).find((e) => e.id === report.taintedSummaryIds[0])!;
        expect(summary.metadata.summaryMethod).to.equal('regenerated');
        expect(summary.metadata.taintedBy).to.equal(undefined);
      });

      it('the next compaction regenerates a tainted summary before summarising on top of it', async function () {
        const id = await compactedWithSecret();
        const bm25 = new Bm25Retriever({ sessionService: service });
        const vectors = new EmbeddingRetriever({ sessionService: service, embed });
        opened.push(bm25, vectors);
        // Warm caches: they must drop the secret when the log changes, not only when built afresh.
        for (const r of [bm25, vectors]) {
          expect(await r.retrieve({ sessionId: id, userId: 'alice', query: SECRET, includeActive: true })).to.not.be.empty;
        }
        await service.redactEvent(id, 'ev-0', { reason: 'user request', replacement: '[removed at the user’s request]' });
        await service.appendMessage(id, Messages.user('Also schedule the retro for Monday.'));
        await service.appendMessage(id, Messages.assistant('Retro scheduled for Monday.'));
        await service.compact(id, () => true, summarize());
        await expectGone(id, [bm25, vectors, new RepositoryRetriever({ repository: repo, sessionService: service })]);
        expect(await everything(id)).to.include('[removed at the user’s request]');
        expect((await service.verifyCoverage(id)).tainted).to.deep.equal([]);
      });

      it('redacting a tool result keeps the call pairing and redacts its masked copies too', async function () {
        const id = uid('s');
        await service.create({ userId: 'alice', id });
        await service.appendMessage(id, Messages.user('read the env file'), { id: 'u1' });
        await service.appendMessage(
          id,
          Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'read_file', '{"path":".env"}')] }),
          { id: 'a1' },
        );
        await service.appendMessage(
          id,
          Messages.tool([Messages.toolResponse('c1', 'read_file', `API_KEY=${SECRET}\n${'x'.repeat(600)}`)]),
          { id: 't1' },
        );
        await service.appendMessage(id, Messages.assistant('The file holds one API key.'), { id: 'a2' });
        const { ObservationMaskingCompactionStrategy } = await import('../../src/index.js');
        await service.compact(id, () => true, new ObservationMaskingCompactionStrategy({ maxChars: 120 }));
        const copy = (await service.getEvents(id, EventFilter.active())).find((e) => e.metadata.maskedFrom === 't1')!;
        expect(JSON.stringify(copy.message)).to.include('API_KEY');

        const report = await service.redactEvent(id, copy.id, { reason: 'secret in tool output' });
        expect(report.redactedEventIds.sort()).to.deep.equal([copy.id, 't1'].sort());
        for (const e of await service.getEvents(id)) {
          if (e.message.type !== 'tool') continue;
          expect(e.message.responses).to.deep.equal([{ id: 'c1', name: 'read_file', responseData: '[redacted]' }]);
        }
        expect(await everything(id)).to.not.include(SECRET);
      });

      it('refuses a missing event, a missing session and a blank reason', async function () {
        const id = await conversation('alice', chat);
        expect((await rejection(service.redactEvent(id, 'nope', { reason: 'x' }))).message).to.equal('Event not found: nope');
        expect((await rejection(service.redactEvent('missing-session', 'ev-0', { reason: 'x' }))).message).to.equal(
          'Session not found: missing-session',
        );
        expect((await rejection(service.redactEvent(id, 'ev-0', { reason: ' ' }))).message).to.equal(
          'reason must not be null or empty',
        );
      });
    });

    describe('retention', function () {
      /** A session whose first `archived` events were archived and stamped `ageDays` old, with a summary. */
      async function withArchive(userId: string, archived: number, ageDays: number, active = 2): Promise<string> {
        const id = uid('s');
        const old = new Date(clock - ageDays * DAY);
        // Created back then, so that only its events can make it recent.
        await new DefaultSessionService(repo, { logger, now: () => old }).create({ userId, id });
        for (let i = 0; i < archived + active; i++) {
          const message = i % 2 === 0 ? Messages.user(`question ${i}`) : Messages.assistant(`answer ${i}`);
          await service.appendMessage(id, message, { id: `ev-${i}`, timestamp: i < archived ? old : new Date(clock) });
        }
        const events = await service.getEvents(id);
        const meta = { synthetic: true, compactionSource: 'test', coveredEventIds: events.slice(0, archived).map((e) => e.id) };
        const pair = [
          SessionEvent.create({ sessionId: id, message: Messages.user('Summarize'), metadata: meta, timestamp: old }),
          SessionEvent.create({ sessionId: id, message: Messages.assistant('summary'), metadata: meta, timestamp: old }),
        ];
        const version = await repo.getEventVersion(id);
        expect(await repo.compactEvents(id, events.slice(0, archived), [...pair, ...events.slice(archived)], version)).to.equal(
          true,
        );
        return id;
      }

      it('removes archived events older than the limit in batches; summaries and the active window stay; a rerun removes nothing', async function () {
        const old = await withArchive('alice', 30, 100);
        const recent = await withArchive('alice', 10, 1);
        const before = { old: await repo.getEventVersion(old), recentSnapshot: await snapshotOf(repo, [recent]) };
        const progress: number[] = [];
        const report = await service.applyRetention(
          { archivedEventsOlderThanMs: 90 * DAY },
          { batchSize: 7, onProgress: (p) => progress.push(p.archivedEventsRemoved) },
        );
        expect(report.archivedEventsRemoved).to.be.at.least(30);
        expect(report.aborted).to.equal(false);
        expect(progress).to.include.members([7, 14, 21, 28, 30]);
        const left = await service.getEvents(old);
        expect(left.filter((e) => e.archived)).to.deep.equal([]);
        expect(left.map((e) => e.text)).to.deep.equal(['Summarize', 'summary', 'question 30', 'answer 31']);
        expect(await repo.getEventVersion(old)).to.equal(before.old);
        expect(await snapshotOf(repo, [recent])).to.equal(before.recentSnapshot);
        const rerun = await service.applyRetention({ archivedEventsOlderThanMs: 90 * DAY });
        expect(rerun.archivedEventsRemoved).to.equal(0);
      });

      it('keeps at most maxArchivedEventsPerSession archived events, the newest', async function () {
        const id = await withArchive('alice', 12, 1);
        await service.applyRetention({ maxArchivedEventsPerSession: 5 }, { batchSize: 4 });
        const archived = (await service.getEvents(id)).filter((e) => e.archived);
        expect(archived.map((e) => e.id)).to.deep.equal(['ev-7', 'ev-8', 'ev-9', 'ev-10', 'ev-11']);
      });

      it('erases idle sessions with a tombstone and keeps active ones', async function () {
        const idle = await withArchive('alice', 4, 40, 0);
        const busy = await withArchive('alice', 4, 40, 2);
        const erased: string[] = [];
        service.events.on('sessionErased', (e) => erased.push(`${e.reason}:${e.sessionId}`));
        const report = await service.applyRetention({ sessionsIdleLongerThanMs: 30 * DAY });
        expect(erased).to.include(`idle:${idle}`);
        expect(erased).to.not.include(`idle:${busy}`);
        expect(report.erased.sessionIds).to.include(idle);
        expect(await service.findById(idle)).to.equal(null);
        expect(await service.findById(busy)).to.not.equal(null);
        expect(await rejection(service.create({ userId: 'mallory', id: idle }))).to.be.instanceOf(IllegalStateError);
      });

      /**
       * Service A (with a warm Bm25Retriever) and service B on their own repositories over one store: two
       * processes. B's purge emits nothing A hears, and leaves the version alone.
       */
      async function warmIndexThenPurgeElsewhere(afterPurge: (other: DefaultSessionService, id: string) => Promise<void>) {
        const id = await withArchive('alice', 6, 100);
        const retriever = new Bm25Retriever({ sessionService: service });
        opened.push(retriever);
        const recalled = async () =>
          (await retriever.retrieve({ sessionId: id, query: 'question answer' })).map((h) => h.event.id);
        expect(await recalled()).to.include.members(['ev-0', 'ev-5']);
        const otherRepo = await backend.open();
        try {
          const other = new DefaultSessionService(otherRepo, { logger, now: () => new Date(clock) });
          const report = await other.applyRetention({ archivedEventsOlderThanMs: 90 * DAY });
          expect(report.archivedEventsRemoved).to.equal(6);
          await afterPurge(other, id);
        } finally {
          if (otherRepo !== repo) await otherRepo.close?.();
        }
        return recalled();
      }

      it('a recall index warm in another process stops returning the events a purge removed at its next search', async function () {
        const hits = await warmIndexThenPurgeElsewhere(async () => undefined);
        expect(hits.filter((h) => /^ev-[0-5]$/.test(h))).to.deep.equal([]);
      });

      it('… also when that process appended to the session after the purge (the version moved by the appends alone)', async function () {
        const hits = await warmIndexThenPurgeElsewhere(async (other, id) => {
          await other.appendMessage(id, Messages.user('question late'), { id: 'late-1' });
          await other.appendMessage(id, Messages.assistant('answer late'), { id: 'late-2' });
        });
        expect(hits.filter((h) => /^ev-[0-5]$/.test(h))).to.deep.equal([]);
      });

      it('runs while writers append: no acknowledged event is lost', async function () {
        const ids: string[] = [];
        for (let i = 0; i < 8; i++) ids.push(await withArchive(`user-${i}`, 20, 100));
        const acknowledged = new Map<string, string[]>(ids.map((id) => [id, []]));
        let stop = false;
        const writers = [0, 1, 2, 3].map(async (w) => {
          let n = 0;
          while (!stop) {
            const id = ids[(w + n) % ids.length]!;
            const e = await service.appendMessage(id, Messages.user(`writer ${w} #${n}`), { id: `w${w}-${n}` });
            acknowledged.get(id)!.push(e.id);
            n++;
          }
        });
        const report = await service.applyRetention(
          { archivedEventsOlderThanMs: 90 * DAY, sessionsIdleLongerThanMs: 30 * DAY },
          { batchSize: 3, concurrency: 2 },
        );
        stop = true;
        await Promise.all(writers);
        expect(report.archivedEventsRemoved).to.be.at.least(8 * 20);
        for (const id of ids) {
          const present = new Set((await service.getEvents(id)).map((e) => e.id));
          expect(acknowledged.get(id)!.filter((e) => !present.has(e))).to.deep.equal([]);
          expect(present.has('ev-20')).to.equal(true);
        }
      });

      it('stops between batches when its signal aborts, and a second run finishes the work', async function () {
        const id = await withArchive('alice', 20, 100);
        const controller = new AbortController();
        const first = await service.applyRetention(
          { archivedEventsOlderThanMs: 90 * DAY },
          { batchSize: 5, signal: controller.signal, onProgress: (p) => p.archivedEventsRemoved >= 5 && controller.abort() },
        );
        expect(first.aborted).to.equal(true);
        expect((await service.getEvents(id)).filter((e) => e.archived).length).to.be.greaterThan(0);
        await service.applyRetention({ archivedEventsOlderThanMs: 90 * DAY });
        expect((await service.getEvents(id)).filter((e) => e.archived)).to.deep.equal([]);
      });

      it('pauseMs waits after every batch, so that writers of other processes get the store', async function () {
        await withArchive('alice', 20, 100);
        const calls: number[] = [];
        const started = performance.now();
        const report = await service.applyRetention(
          { archivedEventsOlderThanMs: 90 * DAY },
          { batchSize: 5, pauseMs: 25, onProgress: () => calls.push(performance.now()) },
        );
        expect(report.archivedEventsRemoved).to.be.at.least(20);
        const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
        expect(Math.min(...gaps.slice(0, 3))).to.be.at.least(20);
        expect(performance.now() - started).to.be.at.least(report.batches * 20);
      });

      it('rejects an empty policy and bad options', async function () {
        expect((await rejection(service.applyRetention({}))).message).to.include('policy must set');
        expect((await rejection(service.applyRetention({ archivedEventsOlderThanMs: -1 }))).message).to.include(
          'archivedEventsOlderThanMs',
        );
        expect(
          (await rejection(service.applyRetention({ maxArchivedEventsPerSession: 1 }, { batchSize: 0 }))).message,
        ).to.include('batchSize');
        expect((await rejection(service.applyRetention({ maxArchivedEventsPerSession: 1 }, { pauseMs: -1 }))).message).to.include(
          'pauseMs must be a number >= 0',
        );
      });
    });
  });
}
