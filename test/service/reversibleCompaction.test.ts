/**
 * Reversible compaction (JP RFD-064 overlay), explicit ranges and fork, through the service on every
 * repository backend: the same scenarios run on memory, SQLite, PostgreSQL and Redis.
 */
import { expect } from 'chai';
import {
  CompactionResult,
  DefaultSessionService,
  EventFilter,
  IllegalStateError,
  InvalidArgumentError,
  Messages,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
  type CompactionRequest,
} from 'session-compaction';
import { allBackends, type BuiltInRepository } from '../support/backends.js';
import { CharEstimator, expectRejects } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const always = () => true;
const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
/** What a prompt is built from: id, message, metadata, branch, in order. */
const snapshot = (events: readonly SessionEvent[]) =>
  events.map((e) => ({ id: e.id, message: e.message, metadata: e.metadata, branch: e.branch, archived: e.archived }));

const summarizer = (text = 'summary') =>
  new RecursiveSummarizationCompactionStrategy({
    chatClient: new ScriptedChatClient([text]),
    maxEventsToKeep: 2,
    overlapSize: 0,
    tokenCountEstimator: est,
    logger: silentLogger,
  });
const slidingWindow = (maxEvents = 2) =>
  new SlidingWindowCompactionStrategy({ maxEvents, cutWithinTurn: 'never', tokenCountEstimator: est });

async function conversation(service: DefaultSessionService, turns: number, userId = 'alice') {
  const { id } = await service.create({ userId });
  await service.appendMessage(id, Messages.system('Be brief.'));
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  return id;
}

const active = (service: DefaultSessionService, id: string) => service.getEvents(id, EventFilter.active());

for (const backend of allBackends()) {
  describe(`reversible compaction, ranges and fork on ${backend.name}`, function () {
    this.timeout(60_000);
    let repository: BuiltInRepository;
    let service: DefaultSessionService;
    before(async function () {
      await backend.setup(this);
      repository = backend.repository();
    });
    after(async () => backend.teardown());
    beforeEach(() => {
      service = new DefaultSessionService(repository, { logger: silentLogger, tokenCountEstimator: est });
    });

    describe('compaction records', function () {
      it('records a committed compaction: id, archived ids, added summary ids, strategy, source, versions, time', async function () {
        const id = await conversation(service, 4);
        const before = await active(service, id);
        const version = await service.getEventVersion(id);
        let completedId: string | undefined;
        service.events.on('compactionCompleted', (e) => void (completedId = e.compactionId));
        const result = await service.compact(id, always, summarizer());
        const [record, ...rest] = await service.listCompactions(id);
        expect(rest).to.deep.equal([]);
        expect(record!.id).to.equal(completedId);
        expect(record!.sessionId).to.equal(id);
        expect(record!.strategy).to.equal('RecursiveSummarizationCompactionStrategy');
        expect(record!.trigger).to.equal('always');
        expect(record!.compactionSource).to.equal('recursive-summarization');
        expect(record!.versionBefore).to.equal(version);
        expect(record!.versionAfter).to.equal(version + 1);
        expect(record!.windowBefore).to.deep.equal(ids(before));
        expect(record!.windowAfter).to.deep.equal(ids(result.compactedEvents));
        expect(record!.archivedEventIds).to.deep.equal(ids(result.archivedEvents));
        expect(record!.addedEventIds).to.deep.equal(ids(result.compactedEvents.filter((e) => e.isSynthetic())));
        expect(record!.removedEvents).to.deep.equal([]);
        expect(record!.range).to.equal(null);
        expect(record!.revertedAt).to.equal(null);
        expect(record!.createdAt).to.be.instanceOf(Date);
      });

      it('names the trigger that fired: its class, or a function trigger as "function"', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, new TurnCountTrigger(2), slidingWindow());
        for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
        await service.compact(id, () => true, slidingWindow());
        const [latest, first] = await service.listCompactions(id);
        expect(first!.trigger).to.equal('TurnCountTrigger');
        expect(latest!.trigger).to.equal('function');
      });

      it('keeps the summary a later compaction superseded (and removed from the log) in that compaction record', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer('first'));
        const firstSummary = (await active(service, id)).filter((e) => e.isSynthetic());
        for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
        await service.compact(id, always, summarizer('second'));
        const [latest, first] = await service.listCompactions(id);
        expect(snapshot(latest!.removedEvents)).to.deep.equal(snapshot(firstSummary));
        expect(first!.versionAfter).to.be.lessThan(latest!.versionAfter);
        const log = await service.getEvents(id);
        expect(log.some((e) => e.id === firstSummary[0]!.id)).to.equal(false);
      });

      it('records nothing when the compaction loses its CAS to a concurrent append', async function () {
        const id = await conversation(service, 4);
        const racing = async (request: CompactionRequest) => {
          await service.appendMessage(id, Messages.user('sneaked in'));
          return slidingWindow().compact(request);
        };
        const result = await service.compact(id, always, racing);
        expect(result.isNoop()).to.equal(true);
        expect(await service.listCompactions(id)).to.deep.equal([]);
      });

      it('refuses listing another user’s compactions; a missing session is "Session not found"', async function () {
        const id = await conversation(service, 2);
        await expectRejects(service.listCompactions(id, { userId: 'mallory' }), IllegalStateError, 'Access denied');
        await expectRejects(
          service.listCompactions('no-such-session'),
          InvalidArgumentError,
          'Session not found: no-such-session',
        );
      });

      it('deleting the session erases its compaction records', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer());
        expect(await repository.listCompactions(id)).to.have.length(1);
        await service.delete(id);
        expect(await repository.listCompactions(id)).to.deep.equal([]);
      });

      it('retention that purges the archived events of a compaction drops its record', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer());
        const report = await service.applyRetention({ maxArchivedEventsPerSession: 0 });
        expect(report.archivedEventsRemoved).to.be.greaterThan(0);
        expect(await service.listCompactions(id)).to.deep.equal([]);
      });
    });

    describe('revertCompaction', function () {
      it('restores the exact active window (ids, order, content) and removes the summaries it added', async function () {
        const id = await conversation(service, 5);
        const before = await active(service, id);
        const version = await service.getEventVersion(id);
        await service.compact(id, always, summarizer());
        const [record] = await service.listCompactions(id);
        const reverted = await service.revertCompaction(id, record!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot(before));
        expect(snapshot(reverted.events)).to.deep.equal(snapshot(before));
        expect(reverted.version).to.equal(version + 2);
        expect(await service.getEventVersion(id)).to.equal(version + 2);
        expect(reverted.restoredEventIds).to.deep.equal(record!.archivedEventIds);
        expect(reverted.removedEventIds).to.deep.equal(record!.addedEventIds);
        const log = await service.getEvents(id);
        expect(log.filter((e) => e.isSynthetic())).to.deep.equal([]);
        expect(log.filter((e) => e.isArchived())).to.deep.equal([]);
        const [marked] = await service.listCompactions(id);
        expect(marked!.revertedAt).to.be.instanceOf(Date);
      });

      it('restores the summary a compaction superseded, and the masked originals of a masking compaction', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer('first'));
        for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
        await service.appendMessage(
          id,
          Messages.assistant(null, { toolCalls: [{ id: 'c1', type: 'function', name: 'grep', arguments: '{}' }] }),
        );
        await service.appendMessage(id, Messages.tool([{ id: 'c1', name: 'grep', responseData: 'x'.repeat(400) }]));
        await service.appendMessage(id, Messages.assistant('grep found it'));
        await service.appendMessage(id, Messages.user('and now?'));
        const before = await active(service, id);
        await service.compact(id, always, summarizer('second'));
        await service.revertCompaction(id, (await service.listCompactions(id))[0]!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot(before));

        await service.compact(id, always, new ObservationMaskingCompactionStrategy({ maxChars: 80, tokenCountEstimator: est }));
        expect(snapshot(await active(service, id))).to.not.deep.equal(snapshot(before));
        await service.revertCompaction(id, (await service.listCompactions(id))[0]!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot(before));
      });

      it('keeps events appended after the compaction after the restored window, in their order', async function () {
        const id = await conversation(service, 4);
        const before = await active(service, id);
        await service.compact(id, always, slidingWindow());
        const later = [
          await service.appendMessage(id, Messages.user('after 1')),
          await service.appendMessage(id, Messages.assistant('after 2')),
        ];
        await service.revertCompaction(id, (await service.listCompactions(id))[0]!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot([...before, ...later]));
      });

      it('under concurrent appends: every append lands once, after the restored window, in append order', async function () {
        const id = await conversation(service, 4);
        const before = await active(service, id);
        await service.compact(id, always, summarizer());
        const compactionId = (await service.listCompactions(id))[0]!.id;
        // One writer appending in sequence while the revert runs: its order is the order to keep.
        const appender = (async () => {
          const out: SessionEvent[] = [];
          for (let i = 0; i < 12; i++) out.push(await service.appendMessage(id, Messages.user(`concurrent ${i}`)));
          return out;
        })();
        const [, appended] = await Promise.all([service.revertCompaction(id, compactionId), appender]);
        const window = await active(service, id);
        expect(snapshot(window.slice(0, before.length))).to.deep.equal(snapshot(before));
        expect(ids(window.slice(before.length))).to.deep.equal(ids(appended));
        expect(window.filter((e) => e.isSynthetic())).to.deep.equal([]);
      });

      it('an older compaction cannot be reverted while a later one stands (the error names it); in order, both revert', async function () {
        const id = await conversation(service, 5);
        const original = await active(service, id);
        await service.compact(id, always, summarizer('first'));
        const afterFirst = await active(service, id);
        for (let i = 0; i < 4; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
        const beforeSecond = await active(service, id);
        await service.compact(id, always, summarizer('second'));
        const [second, first] = await service.listCompactions(id);
        await expectRejects(service.revertCompaction(id, first!.id), IllegalStateError, `later compaction ${second!.id} stands`);
        await service.revertCompaction(id, second!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot(beforeSecond));
        await service.revertCompaction(id, first!.id);
        const appended = beforeSecond.slice(afterFirst.length);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot([...original, ...appended]));
      });

      it('refuses a reverted compaction, an unknown one and another user’s session, changing nothing', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer());
        const compactionId = (await service.listCompactions(id))[0]!.id;
        await expectRejects(
          service.revertCompaction(id, compactionId, { userId: 'mallory' }),
          IllegalStateError,
          'Access denied',
        );
        await service.revertCompaction(id, compactionId, { userId: 'alice' });
        const version = await service.getEventVersion(id);
        await expectRejects(service.revertCompaction(id, compactionId), IllegalStateError, 'already reverted');
        await expectRejects(service.revertCompaction(id, 'nope'), InvalidArgumentError, 'Compaction not found: nope');
        expect(await service.getEventVersion(id)).to.equal(version);
      });

      it('a restored superseded summary written from since-redacted content is regenerated before it is returned', async function () {
        const { id } = await service.create({ userId: 'alice' });
        const secret = await service.appendMessage(id, Messages.user('my password is hunter2'));
        await service.appendMessage(id, Messages.assistant('noted'));
        for (let i = 0; i < 3; i++) {
          await service.appendMessage(id, Messages.user(`question ${i}`));
          await service.appendMessage(id, Messages.assistant(`answer ${i}`));
        }
        await service.compact(id, always, summarizer('the password is hunter2'));
        for (let i = 0; i < 3; i++) await service.appendMessage(id, Messages.user(`more ${i}`));
        await service.compact(id, always, summarizer('second summary'));
        await service.redactEvent(id, secret.id, { reason: 'user request' });
        const reverted = await service.revertCompaction(id, (await service.listCompactions(id))[0]!.id);
        const texts = (await active(service, id)).map((e) => e.text ?? '');
        expect(texts.join(' ')).to.not.include('hunter2');
        expect(reverted.events.map((e) => e.text ?? '').join(' ')).to.not.include('hunter2');
      });

      it('a lost CAS at the repository changes nothing and records no revert', async function () {
        const id = await conversation(service, 4);
        await service.compact(id, always, summarizer());
        const [record] = await service.listCompactions(id);
        const version = await service.getEventVersion(id);
        const log = await service.getEvents(id);
        const stale = await repository.revertCompactionEvents(id, record!.id, [], version - 1, new Date());
        expect(stale).to.equal(false);
        expect(snapshot(await service.getEvents(id))).to.deep.equal(snapshot(log));
        expect(await service.getEventVersion(id)).to.equal(version);
        expect((await service.listCompactions(id))[0]!.revertedAt).to.equal(null);
      });
    });

    describe('explicit ranges', function () {
      it('{ fromEventId, toEventId }: the strategy sees only the range (widened to whole turns); the rest is untouched', async function () {
        const id = await conversation(service, 6);
        const window = await active(service, id);
        // question 1 .. answer 3: positions 3..8 (the system message is the preamble).
        const from = window[3]!;
        const to = window[7]!; // question 3: widened to the end of its turn (answer 3)
        let seen: readonly SessionEvent[] = [];
        const summariseAll = async (request: CompactionRequest) => {
          seen = request.events;
          const summary = SessionEvent.create({
            sessionId: id,
            message: Messages.assistant('range summary'),
            metadata: { synthetic: true, compactionSource: 'test-range' },
          });
          return new CompactionResult([summary], request.events, 0);
        };
        const result = await service.compact(id, always, summariseAll, { range: { fromEventId: from.id, toEventId: to.id } });
        expect(ids(seen)).to.deep.equal(ids(window.slice(3, 9)));
        const after = await active(service, id);
        expect(ids(after)).to.deep.equal([...ids(window.slice(0, 3)), after[3]!.id, ...ids(window.slice(9))]);
        expect(after[3]!.text).to.equal('range summary');
        expect(ids(result.compactedEvents)).to.deep.equal(ids(after));
        const [record] = await service.listCompactions(id);
        expect(record!.range).to.deep.equal({ fromEventId: window[3]!.id, toEventId: window[8]!.id });
        await service.revertCompaction(id, record!.id);
        expect(snapshot(await active(service, id))).to.deep.equal(snapshot(window));
      });

      it('previewCompaction with a range shows what compact with that range commits, writing nothing', async function () {
        const id = await conversation(service, 6);
        const window = await active(service, id);
        const range = { fromEventId: window[3]!.id, toEventId: window[8]!.id };
        const version = await service.getEventVersion(id);
        const preview = await service.previewCompaction(id, always, slidingWindow(2), { range });
        expect(await service.getEventVersion(id)).to.equal(version);
        expect(await service.listCompactions(id)).to.deep.equal([]);
        const result = await service.compact(id, always, slidingWindow(2), { range });
        expect(ids(preview.result.compactedEvents)).to.deep.equal(ids(result.compactedEvents));
        expect(ids(preview.result.archivedEvents)).to.deep.equal(ids(window.slice(3, 7)));
        expect(ids(result.compactedEvents)).to.deep.equal([...ids(window.slice(0, 3)), ...ids(window.slice(7))]);
      });

      it('previewCompaction and compactionCompleted report the range as resolved (widened to whole turns)', async function () {
        const id = await conversation(service, 6);
        const window = await active(service, id);
        // From an answer (widened back to its question) to a question (widened on to its answer).
        const range = { fromEventId: window[4]!.id, toEventId: window[7]!.id };
        const resolved = { fromEventId: window[3]!.id, toEventId: window[8]!.id };
        const preview = await service.previewCompaction(id, always, slidingWindow(2), { range });
        expect(preview.range).to.deep.equal(resolved);
        let completed: unknown;
        service.events.on('compactionCompleted', (e) => void (completed = e.range));
        await service.compact(id, always, slidingWindow(2), { range });
        expect(completed).to.deep.equal(resolved);
      });

      it('previewCompaction reports range null for a time range that selects no event, and no range without one', async function () {
        const id = await conversation(service, 3);
        const future = new Date(Date.now() + 60 * 60 * 1000);
        const empty = await service.previewCompaction(id, always, slidingWindow(2), { range: { since: future } });
        expect(empty.range).to.equal(null);
        expect(empty.result.archivedEvents).to.deep.equal([]);
        const whole = await service.previewCompaction(id, always, slidingWindow(2));
        expect(whole).to.not.have.property('range');
      });

      it('previewCompaction refuses an unknown id even when the trigger does not fire', async function () {
        const id = await conversation(service, 3);
        await expectRejects(
          service.previewCompaction(id, () => false, slidingWindow(), { range: { fromEventId: 'ghost' } }),
          InvalidArgumentError,
          'Event not found in the active window: ghost',
        );
      });

      it("snap 'tool-pair' keeps a tool call with its result inside one long turn", async function () {
        const { id } = await service.create({ userId: 'alice' });
        await service.appendMessage(id, Messages.user('the task'));
        const steps: SessionEvent[] = [];
        for (let i = 0; i < 4; i++) {
          steps.push(
            await service.appendMessage(
              id,
              Messages.assistant(null, { toolCalls: [{ id: `c${i}`, type: 'function', name: 'run', arguments: `{"i":${i}}` }] }),
            ),
          );
          steps.push(await service.appendMessage(id, Messages.tool([{ id: `c${i}`, name: 'run', responseData: `out ${i}` }])));
        }
        let seen: readonly SessionEvent[] = [];
        const spy = async (request: CompactionRequest) => {
          seen = request.events;
          return CompactionResult.noop(request.events);
        };
        // From a tool result (widened back to its call) to a tool call (widened to its result).
        await service.compact(id, always, spy, {
          range: { fromEventId: steps[1]!.id, toEventId: steps[4]!.id, snap: 'tool-pair' },
        });
        expect(ids(seen)).to.deep.equal(ids(steps.slice(0, 6)));
      });

      it('{ olderThanMs } selects the events older than the duration; an empty time range is a no-op', async function () {
        let clock = Date.parse('2026-01-01T00:00:00Z');
        const timed = new DefaultSessionService(repository, {
          logger: silentLogger,
          tokenCountEstimator: est,
          now: () => new Date(clock),
        });
        const { id } = await timed.create({ userId: 'alice' });
        for (let i = 0; i < 6; i++) {
          await timed.appendMessage(id, Messages.user(`q${i}`));
          await timed.appendMessage(id, Messages.assistant(`a${i}`));
          clock += 60 * 60 * 1000;
        }
        const window = await active(timed, id);
        let seen: readonly SessionEvent[] = [];
        const spy = async (request: CompactionRequest) => {
          seen = request.events;
          return CompactionResult.noop(request.events);
        };
        // Now is 6h after q0; older than 3h: q0..a2 (turns 0-2).
        await timed.compact(id, always, spy, { range: { olderThanMs: 3 * 60 * 60 * 1000 } });
        expect(ids(seen)).to.deep.equal(ids(window.slice(0, 6)));
        seen = [];
        const result = await timed.compact(id, always, spy, { range: { olderThanMs: 24 * 60 * 60 * 1000 } });
        expect(seen).to.deep.equal([]);
        expect(result.isNoop()).to.equal(true);
      });

      it('unknown ids, an archived id and from after to are InvalidArgumentError, before the trigger runs', async function () {
        const id = await conversation(service, 4);
        const window = await active(service, id);
        let triggered = false;
        const trigger = () => (triggered = true);
        await expectRejects(
          service.compact(id, trigger, slidingWindow(), { range: { fromEventId: 'ghost' } }),
          InvalidArgumentError,
          'Event not found in the active window: ghost',
        );
        await expectRejects(
          service.compact(id, trigger, slidingWindow(), { range: { fromEventId: window[5]!.id, toEventId: window[2]!.id } }),
          InvalidArgumentError,
          `fromEventId ${window[5]!.id} comes after toEventId ${window[2]!.id}`,
        );
        await expectRejects(
          service.compact(id, trigger, slidingWindow(), { range: { fromEventId: window[1]!.id, olderThanMs: 5 } }),
          InvalidArgumentError,
          'event ids or times, not both',
        );
        await service.compact(id, always, slidingWindow());
        const archived = (await service.getEvents(id)).find((e) => e.isArchived())!;
        await expectRejects(
          service.compact(id, trigger, slidingWindow(), { range: { toEventId: archived.id } }),
          InvalidArgumentError,
          `Event not found in the active window: ${archived.id}`,
        );
        expect(triggered).to.equal(false);
      });
    });

    describe('forkSession', function () {
      it('copies the whole log (archived state, summaries, pins, metadata) into a new session; the source is untouched', async function () {
        const id = await conversation(service, 4);
        await service.appendMessage(id, Messages.user('remember this'), { pinned: true });
        await service.compact(id, always, summarizer());
        await service.updateMetadata(id, () => ({ topic: 'forks' }));
        const sourceLog = await service.getEvents(id);
        const sourceVersion = await service.getEventVersion(id);
        const fork = await service.forkSession(id, { userId: 'alice' });
        expect(fork.id).to.not.equal(id);
        expect(fork.userId).to.equal('alice');
        expect(fork.metadata.topic).to.equal('forks');
        expect(fork.metadata.forkedFrom).to.deep.include({
          sessionId: id,
          atEventId: sourceLog.at(-1)!.id,
          version: sourceVersion,
          purgeGeneration: 0,
        });
        expect(snapshot(await service.getEvents(fork.id))).to.deep.equal(snapshot(sourceLog));
        expect(snapshot(await service.getEvents(id))).to.deep.equal(snapshot(sourceLog));
        expect(await service.getEventVersion(id)).to.equal(sourceVersion);
        // The fork lives on its own: an append there is not in the source.
        await service.appendMessage(fork.id, Messages.user('only in the fork'));
        expect(await service.getEvents(id)).to.have.length(sourceLog.length);
      });

      it('atEventId: copies up to and including that event', async function () {
        const id = await conversation(service, 4);
        const log = await service.getEvents(id);
        const fork = await service.forkSession(id, { atEventId: log[4]!.id });
        expect(snapshot(await service.getEvents(fork.id))).to.deep.equal(snapshot(log.slice(0, 5)));
      });

      it('atEventId of an archived event: the conversation up to it, uncompacted', async function () {
        const id = await conversation(service, 4);
        const log = await service.getEvents(id);
        await service.compact(id, always, summarizer());
        const fork = await service.forkSession(id, { atEventId: log[3]!.id });
        const copied = await service.getEvents(fork.id);
        expect(ids(copied)).to.deep.equal(ids(log.slice(0, 4)));
        expect(copied.every((e) => !e.isArchived())).to.equal(true);
      });

      it('refuses another user (nothing created), an unknown event and a missing session', async function () {
        const id = await conversation(service, 2);
        await expectRejects(service.forkSession(id, { userId: 'mallory' }), IllegalStateError, 'Access denied');
        expect(await service.findByUserId('mallory')).to.deep.equal([]);
        await expectRejects(service.forkSession(id, { atEventId: 'ghost' }), InvalidArgumentError, 'Event not found: ghost');
        await expectRejects(service.forkSession('no-such-session'), InvalidArgumentError, 'Session not found: no-such-session');
        await expectRejects(service.forkSession(id, { id }), IllegalStateError, `Session already exists: ${id}`);
      });
    });
  });
}
