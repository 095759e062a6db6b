import { expect } from 'chai';
import fc from 'fast-check';
import {
  Bm25Retriever,
  ContextAssembler,
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  TiktokenTokenCountEstimator,
  type Message,
  type TokenCountEstimator,
} from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import { RECALL_BLOCK_HEADER } from '../../src/recall/recallBlock.js';
import { hostile, prose } from '../tokens/tokenStrings.js';

const silent = { error() {}, warn() {}, info() {}, debug() {} };
const isBlock = (m: Message) => m.type === 'user' && m.text.startsWith(RECALL_BLOCK_HEADER);

/**
 * Texts that all match the query "walrus", some of whose quoted lines start apart from a line break (counted from
 * the lines' memoised counts) and some not: an entry indented as a header (`===`), a speaker's name starting with a slash,
 * continuation lines, Unicode line terminators, bare punctuation before a break.
 */
const text = fc
  .tuple(
    fc.oneof(prose, hostile, fc.constantFrom('=== walrus', 'a.\n/walrus', '\n\nwalrus', 'x\u2028 walrus', 'walrus /')),
    fc.constantFrom('walrus', ' walrus', 'walrus\n', '\nwalrus', 'walrus.', 'walrus?!'),
  )
  .map(([body, word]) => `${body} ${word}`);
const name = fc.option(fc.constantFrom('Caroline', '/ann', '/ann', 'Éa'), { nil: undefined });

describe('ContextAssembler: the recall block is counted exactly', function () {
  this.timeout(60_000);

  it('a line quoted by an earlier request is not tokenised again by the next (the counts are kept per estimator), unless it is long', async function () {
    const counted: string[] = [];
    const estimator: TokenCountEstimator = {
      estimate: (t: string) => {
        counted.push(t);
        return t.length;
      },
    };
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const retriever = new Bm25Retriever({ sessionService: service });
    try {
      await service.create({ id: 's', userId: 'u' });
      for (let i = 0; i < 12; i++) await service.appendMessage('s', Messages.user(`walrus number ${i} swam far`));
      // A line longer than the kept ones (1,000 characters) is counted again by each request.
      await service.appendMessage('s', Messages.user(`walrus ${'and sea '.repeat(150)}`));
      await service.appendMessage('s', Messages.user('the last words'));
      await service.appendMessage('s', Messages.user('really the last'));
      await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
      const assembler = new ContextAssembler({ sessionService: service, retriever, tokenCountEstimator: estimator });
      const ask = () => assembler.assemble({ sessionId: 's', maxTokens: 20_000, query: 'walrus' });
      // A quoted line's count: the line with its break (the block and its frame end with their closing line).
      const isLine = (t: string) => t.endsWith('\n') && t.includes('walrus');
      const first = await ask();
      expect(counted.filter(isLine)).to.not.be.empty;
      counted.length = 0;
      const second = await ask();
      expect(second.messages).to.deep.equal(first.messages);
      const again = counted.filter(isLine);
      expect(again).to.have.length(1);
      expect(again[0]).to.have.length.above(1_000).and.to.include('and sea and sea');
      // Another estimator keeps counts of its own.
      const other = new ContextAssembler({
        sessionService: service,
        retriever,
        tokenCountEstimator: { estimate: (t: string) => t.length },
      });
      expect((await other.assemble({ sessionId: 's', maxTokens: 20_000, query: 'walrus' })).messages).to.deep.equal(
        first.messages,
      );
    } finally {
      retriever.close();
    }
  });

  for (const encoding of ['o200k_base', 'cl100k_base', 'r50k_base'] as const) {
    it(`${encoding}: the block's tokens are the estimator's count of the block, within the budget`, async function () {
      const estimator: TokenCountEstimator = new TiktokenTokenCountEstimator({ encoding });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(text, name), { minLength: 4, maxLength: 30 }),
          fc.integer({ min: 300, max: 3_000 }),
          async (messages, maxTokens) => {
            const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
            const retriever = new Bm25Retriever({ sessionService: service });
            try {
              await service.create({ id: 's', userId: 'u' });
              let at = Date.parse('2023-05-08T13:56:00Z');
              for (const [t, n] of messages) {
                at += 20_000; // three per minute: some entries repeat the previous time and start with the speaker
                await service.appendMessage(
                  's',
                  { ...Messages.user(t), ...(n === undefined ? {} : { name: n }) },
                  { timestamp: new Date(at) },
                );
              }
              await service.compact('s', () => true, new SlidingWindowCompactionStrategy({ maxEvents: 2 }));
              const assembler = new ContextAssembler({ sessionService: service, retriever, tokenCountEstimator: estimator });
              const ctx = await assembler.assemble({ sessionId: 's', maxTokens, query: 'walrus' });
              const block = ctx.messages.find(isBlock);
              expect(ctx.tokens.recall).to.equal(block === undefined ? 0 : estimator.estimate(formatMessage(block)));
              expect(ctx.tokens.total).to.be.at.most(maxTokens);
            } finally {
              retriever.close();
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  }
});
