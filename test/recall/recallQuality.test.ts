import { expect } from 'chai';
import {
  Bm25Retriever,
  ContextAssembler,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SessionEvent,
  SlidingWindowCompactionStrategy,
  type Message,
} from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';
import { EXCERPT_MARKER, matchingExcerpt, queryTerms } from '../../src/recall/matchingExcerpt.js';

const silent = { error() {}, warn() {}, info() {}, debug() {} };
const chars = new CharacterTokenCountEstimator();

describe('recall quality', function () {
  let service: DefaultSessionService;
  let retriever: Bm25Retriever;
  let assembler: ContextAssembler;
  let clock: number;

  beforeEach(function () {
    service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    retriever = new Bm25Retriever({ sessionService: service });
    assembler = new ContextAssembler({ sessionService: service, retriever, tokenCountEstimator: chars });
    clock = Date.parse('2023-05-08T13:56:00Z');
  });
  afterEach(function () {
    retriever.close();
  });

  async function append(id: string, ...messages: Message[]): Promise<SessionEvent[]> {
    if ((await service.findById(id)) === null) await service.create({ id, userId: 'alice' });
    const out: SessionEvent[] = [];
    for (const m of messages) {
      clock += 60_000;
      out.push(await service.appendMessage(id, m, { timestamp: new Date(clock) }));
    }
    return out;
  }

  /**
   * A superseded summary as the summarising strategies leave it: synthetic, naming the events it stands for,
   * archived (compaction keeps the active summary in the window; a merged or older one is archived).
   */
  async function appendSummary(id: string, text: string, covered: readonly string[]) {
    if ((await service.findById(id)) === null) await service.create({ id, userId: 'alice' });
    clock += 60_000;
    await service.appendEvent(
      SessionEvent.create({
        sessionId: id,
        message: Messages.assistant(text),
        timestamp: new Date(clock),
        archived: true,
        metadata: { [SessionEvent.METADATA_SYNTHETIC]: true, coveredEventIds: [...covered] },
      }),
    );
  }

  const filler = () => append('s', Messages.user('Work was busy this week.'), Messages.assistant('Take some rest.'));

  describe('summaries', function () {
    it('quotes the original turns, not an archived summary of them', async function () {
      const originals = await append('s', Messages.user('My locker code is 4417.'), Messages.assistant('Noted: locker 4417.'));
      await appendSummary(
        's',
        'User: My locker code is 4417. Assistant: Noted.',
        originals.map((e) => e.id),
      );
      await filler();
      await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      const ctx = await assembler.assemble({ sessionId: 's', maxTokens: 2000, query: 'locker code', recall: { neighbors: 0 } });
      expect(ctx.recalled.map((e) => e.text)).to.include('My locker code is 4417.');
      expect(ctx.recalled.some((e) => e.isSynthetic())).to.equal(false);
    });

    it('quotes a summary whose originals are gone from the log', async function () {
      await appendSummary('s', 'User: My locker code is 4417.', ['purged-1', 'purged-2']);
      await filler();
      await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      const ctx = await assembler.assemble({ sessionId: 's', maxTokens: 2000, query: 'locker code', recall: { neighbors: 0 } });
      expect(ctx.recalled.map((e) => e.text)).to.deep.equal(['User: My locker code is 4417.']);
    });
  });

  describe('long messages', function () {
    const lines = Array.from({ length: 60 }, (_, i) => `row ${i}: status nominal, nothing to report`);
    lines[41] = 'row 41: reservation ZFA04Y booked for Mia Li';
    const output = lines.join('\n');

    it('quotes the lines that match the request, with a marker where the rest is left out', function () {
      const excerpt = matchingExcerpt(output, queryTerms('Which reservation did Mia book?'), (t) => t.length <= 200)!;
      expect(excerpt).to.equal(`${EXCERPT_MARKER} row 41: reservation ZFA04Y booked for Mia Li ${EXCERPT_MARKER}`);
    });

    it('takes the lines holding the most query words first, in their order, within the budget', function () {
      const text = 'alpha one\nbeta two\nalpha beta three\ngamma four';
      expect(matchingExcerpt(text, queryTerms('alpha beta'), (t) => t.length <= 30)).to.equal(
        `${EXCERPT_MARKER} alpha beta three ${EXCERPT_MARKER}`,
      );
      expect(matchingExcerpt(text, queryTerms('alpha beta'), () => true)).to.equal(
        `alpha one beta two alpha beta three ${EXCERPT_MARKER}`,
      );
    });

    it('gives nothing when no line matches (the caller falls back to head and tail)', function () {
      expect(matchingExcerpt(output, queryTerms('weather forecast'), () => true)).to.equal(null);
    });

    it('recalls a tool output too long for the block by its matching lines', async function () {
      await append(
        's',
        Messages.user('Look up my reservations.'),
        Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'get_reservations', '{}')] }),
        Messages.tool([Messages.toolResponse('c1', 'get_reservations', output)]),
        Messages.assistant('Found them.'),
      );
      await filler();
      await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      const ctx = await assembler.assemble({
        sessionId: 's',
        maxTokens: 1600,
        query: 'Which reservation did Mia book?',
        recall: { neighbors: 0 },
      });
      const block = ctx.messages.find((m) => m.type === 'user' && m.text.includes('RECALLED'));
      expect(block?.type === 'user' && block.text).to.include('row 41: reservation ZFA04Y booked for Mia Li');
      expect(block?.type === 'user' && block.text).to.include(EXCERPT_MARKER);
      expect(ctx.tokens.total).to.be.at.most(1600);
    });
  });
});
