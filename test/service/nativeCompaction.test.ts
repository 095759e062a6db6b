/**
 * Provider-native compaction events through the service on every repository backend: the opaque payload
 * round-trips byte for byte, the coverage ledger counts the native summary like any summary, a revert
 * restores the originals, and redaction and erasure remove the payload.
 */
import { expect } from 'chai';
import {
  DefaultSessionService,
  EventFilter,
  Messages,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  type NativeCompactor,
  type SessionEvent,
} from 'session-compaction';
import {
  METADATA_NATIVE_COMPACTION,
  nativeCompactionPayload,
  nativeCompactionRecord,
  type NativeCompactionInput,
  type NativeCompactionOutput,
} from 'session-compaction/spi';
import { allBackends, type BuiltInRepository } from '../support/backends.js';
import { CharEstimator } from '../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../summarization/support.js';

const est = new CharEstimator();
const always = () => true;
const PROVIDER = 'test-provider';

/**
 * A payload no database may normalise: keys out of alphabetical order (PostgreSQL's jsonb sorts them),
 * escapes, non-BMP characters, a line separator, numbers jsonb would rewrite, nested arrays.
 */
const PAYLOAD_TEXT =
  '[{"type":"message","role":"user","content":[{"type":"input_text","text":"héllo \\"x\\" \\u2028 🚀"}]},' +
  '{"z":1,"type":"compaction","id":"cmp_1","encrypted_content":"gAAAA+/==\\n\\t","a":[1.5e300,-0,10.0],"nested":{"b":null,"a":true}}]';

class PayloadCompactor implements NativeCompactor {
  readonly provider = PROVIDER;
  readonly inputs: NativeCompactionInput[] = [];
  async compact(input: NativeCompactionInput): Promise<NativeCompactionOutput> {
    this.inputs.push(input);
    return { payload: JSON.parse(PAYLOAD_TEXT) as unknown, text: null, usage: null };
  }
}

const strategy = () =>
  new NativeCompactionStrategy({
    compactor: new PayloadCompactor(),
    fallback: new RecursiveSummarizationCompactionStrategy({
      chatClient: new ScriptedChatClient(['the library summary']),
      maxEventsToKeep: 2,
      overlapSize: 0,
      tokenCountEstimator: est,
      logger: silentLogger,
    }),
    logger: silentLogger,
  });

async function conversation(service: DefaultSessionService, turns: number) {
  const { id } = await service.create({ userId: 'alice' });
  for (let i = 0; i < turns; i++) {
    await service.appendMessage(id, Messages.user(`question ${i}`));
    await service.appendMessage(id, Messages.assistant(`answer ${i}`));
  }
  return id;
}

const nativeSummaries = (events: readonly SessionEvent[]) =>
  events.filter((e) => e.messageType === 'assistant' && e.metadata[METADATA_NATIVE_COMPACTION] !== undefined);

for (const backend of allBackends()) {
  describe(`native compaction events on ${backend.name}`, function () {
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

    it('stores the opaque payload and reads it back byte for byte', async function () {
      const id = await conversation(service, 4);
      await service.compact(id, always, strategy());
      const [summary, ...others] = nativeSummaries(await repository.findEvents(id, EventFilter.active()));
      expect(others).to.deep.equal([]);
      // The stored text is exactly what the provider returned, re-serialised only once, on the way in.
      expect(nativeCompactionRecord(summary!)!.payload).to.equal(JSON.stringify(JSON.parse(PAYLOAD_TEXT)));
      expect(JSON.stringify(nativeCompactionPayload(summary!, PROVIDER))).to.equal(JSON.stringify(JSON.parse(PAYLOAD_TEXT)));
      expect(summary!.text).to.equal('the library summary');
    });

    it('the coverage ledger verifies with a native summary in the window', async function () {
      const id = await conversation(service, 4);
      await service.compact(id, always, strategy());
      const report = await service.verifyCoverage(id);
      expect(report.ok).to.equal(true);
      expect(report.summarized).to.have.length(6);
      expect(report.uncovered).to.deep.equal([]);
    });

    it('reverting the native compaction restores the originals and removes the native summary', async function () {
      const id = await conversation(service, 4);
      const before = (await service.getEvents(id, EventFilter.active())).map((e) => e.id);
      await service.compact(id, always, strategy());
      const [record] = await service.listCompactions(id);
      const reverted = await service.revertCompaction(id, record!.id);
      expect(reverted.events.map((e) => e.id)).to.deep.equal(before);
      const log = await service.getEvents(id, EventFilter.all());
      expect(nativeSummaries(log)).to.deep.equal([]);
      expect((await service.verifyCoverage(id)).ok).to.equal(true);
    });

    it('redacting a covered event removes the native payload; the summary falls back to its text', async function () {
      const id = await conversation(service, 4);
      await service.compact(id, always, strategy());
      const archived = (await service.getEvents(id, EventFilter.all())).find((e) => e.isArchived() && e.text === 'question 0')!;
      const report = await service.redactEvent(id, archived.id, { reason: 'user request' });
      expect(report.taintedSummaryIds).to.have.length(1);
      const log = await repository.findEvents(id, EventFilter.all());
      expect(nativeSummaries(log)).to.deep.equal([]);
      const summary = log.find((e) => e.id === report.taintedSummaryIds[0])!;
      expect(nativeCompactionPayload(summary, PROVIDER)).to.equal(undefined);
      expect(JSON.stringify(log.map((e) => e.metadata))).not.to.include('encrypted_content');
      await service.purgeDerived(id);
      const regenerated = (await repository.findEvents(id, EventFilter.all())).find((e) => e.id === summary.id)!;
      expect(regenerated.text).not.to.include('question 0');
      expect((await service.verifyCoverage(id)).ok).to.equal(true);
    });

    it('redacting the native summary itself removes its payload', async function () {
      const id = await conversation(service, 4);
      await service.compact(id, always, strategy());
      const [summary] = nativeSummaries(await service.getEvents(id, EventFilter.active()));
      await service.redactEvent(id, summary!.id, { reason: 'user request' });
      const log = await repository.findEvents(id, EventFilter.all());
      expect(JSON.stringify(log.map((e) => e.metadata))).not.to.include('encrypted_content');
      expect(log.find((e) => e.id === summary!.id)!.text).to.equal('[redacted]');
    });

    it('erasing the session removes the native payload with the log', async function () {
      const id = await conversation(service, 4);
      await service.compact(id, always, strategy());
      expect(nativeSummaries(await repository.findEvents(id, EventFilter.all()))).to.have.length(1);
      const report = await service.delete(id);
      expect(report.sessions).to.equal(1);
      expect(await repository.findById(id)).to.equal(null);
      const left = await repository.findEvents(id, EventFilter.all()).catch(() => []);
      expect(left).to.deep.equal([]);
    });
  });
}
