import { expect } from 'chai';
import fc from 'fast-check';
import {
  AdditiveSummarizationCompactionStrategy,
  CompactionPipeline,
  ContentPolicyCompactionStrategy,
  DefaultSessionService,
  ExtractiveSummarizer,
  InMemorySessionRepository,
  Messages,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  createDefaultLogger,
  type CompactionStrategy,
  type CoverageReport,
} from 'session-compaction';
import { CharEstimator } from '../support/fixtures.js';

const logger = createDefaultLogger({ silent: true });
const est = new CharEstimator();
const summarizer = () => new ExtractiveSummarizer({ tokenCountEstimator: est, maxTokens: 200 });

type Op = { kind: 'turn'; tools: number; size: number; reasoning: boolean } | { kind: 'compact' };

const arbOps = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant<'turn'>('turn'),
      tools: fc.integer({ min: 0, max: 4 }),
      size: fc.integer({ min: 10, max: 1500 }),
      reasoning: fc.boolean(),
    }),
    fc.constant<Op>({ kind: 'compact' }),
  ),
  { minLength: 1, maxLength: 14 },
);

/** Plays `ops` against a fresh session (turns with tool calls, compactions) and returns the final ledger. */
async function play(strategy: () => CompactionStrategy, ops: readonly Op[]): Promise<CoverageReport> {
  const service = new DefaultSessionService(new InMemorySessionRepository(), { logger, tokenCountEstimator: est });
  const { id } = await service.create({ userId: 'u' });
  const s = strategy();
  let n = 0;
  for (const op of ops) {
    if (op.kind === 'compact') {
      await service.compact(id, () => true, s);
      continue;
    }
    await service.appendMessage(id, Messages.user(`task ${n}`));
    for (let t = 0; t < op.tools; t++) {
      const callId = `c${n}-${t}`;
      await service.appendMessage(
        id,
        Messages.assistant(null, {
          toolCalls: [Messages.toolCall(callId, 'bash', `{"n":${n}}`)],
          ...(op.reasoning ? { reasoning: 'r'.repeat(op.size) } : {}),
        }),
      );
      await service.appendMessage(
        id,
        Messages.tool([Messages.toolResponse(callId, 'bash', `out ${n}/${t} ` + 'o'.repeat(op.size))]),
      );
    }
    await service.appendMessage(id, Messages.assistant(`done ${n}`));
    n++;
  }
  await service.compact(id, () => true, s);
  return service.verifyCoverage(id);
}

const mask = () => new ObservationMaskingCompactionStrategy({ tokenCountEstimator: est });
const policy = () =>
  new ContentPolicyCompactionStrategy({
    tokenCountEstimator: est,
    keepLast: { steps: 2 },
    toolCalls: { request: 'strip', response: 'strip' },
  });

describe('coverage ledger (property tests)', function () {
  this.timeout(60_000);

  const lossless: [string, () => CompactionStrategy][] = [
    ['ObservationMaskingCompactionStrategy', mask],
    ['ContentPolicyCompactionStrategy', policy],
    [
      'CompactionPipeline(mask → content policy)',
      () => new CompactionPipeline({ stages: [mask(), policy()], maxTokens: 50, tokenCountEstimator: est }),
    ],
  ];
  for (const [name, strategy] of lossless) {
    it(`${name}: every original is in the context exactly once (verbatim or masked with its original archived)`, async function () {
      await fc.assert(
        fc.asyncProperty(arbOps, async (ops) => {
          const report = await play(strategy, ops);
          expect(report.duplicated, 'duplicated').to.deep.equal([]);
          expect(report.uncovered, 'uncovered').to.deep.equal([]);
        }),
        { numRuns: 40 },
      );
    });
  }

  const lossy: [string, () => CompactionStrategy][] = [
    [
      'CompactionPipeline(mask → token budget)',
      () =>
        new CompactionPipeline({
          stages: [
            mask(),
            new TokenCountCompactionStrategy({ maxTokens: 800, tokenCountEstimator: est, cutWithinTurn: 'tool-pair-safe' }),
          ],
          maxTokens: 800,
          tokenCountEstimator: est,
        }),
    ],
    [
      'SlidingWindowCompactionStrategy after masking',
      () =>
        new CompactionPipeline({
          stages: [
            mask(),
            new SlidingWindowCompactionStrategy({ maxEvents: 6, tokenCountEstimator: est, cutWithinTurn: 'tool-pair-safe' }),
          ],
          maxTokens: 1,
          tokenCountEstimator: est,
        }),
    ],
  ];
  for (const [name, strategy] of lossy) {
    it(`${name}: nothing is represented twice (mechanical cuts may drop, never duplicate)`, async function () {
      await fc.assert(
        fc.asyncProperty(arbOps, async (ops) => {
          expect((await play(strategy, ops)).duplicated).to.deep.equal([]);
        }),
        { numRuns: 40 },
      );
    });
  }

  const summarising: [string, () => CompactionStrategy][] = [
    [
      'RecursiveSummarizationCompactionStrategy',
      () =>
        new RecursiveSummarizationCompactionStrategy({
          chatClient: summarizer(),
          maxEventsToKeep: 4,
          overlapSize: 1,
          tokenCountEstimator: est,
        }),
    ],
    [
      'AdditiveSummarizationCompactionStrategy',
      () =>
        new AdditiveSummarizationCompactionStrategy({
          chatClient: summarizer(),
          keepTurns: 1,
          maxSummaryTokens: 400,
          tokenCountEstimator: est,
        }),
    ],
    [
      'CompactionPipeline(mask → recursive summary)',
      () =>
        new CompactionPipeline({
          stages: [
            mask(),
            new RecursiveSummarizationCompactionStrategy({
              chatClient: summarizer(),
              maxEventsToKeep: 4,
              overlapSize: 1,
              tokenCountEstimator: est,
            }),
          ],
          maxTokens: 1,
          tokenCountEstimator: est,
        }),
    ],
    [
      'CompactionPipeline(mask → additive summary)',
      () =>
        new CompactionPipeline({
          stages: [
            mask(),
            new AdditiveSummarizationCompactionStrategy({
              chatClient: summarizer(),
              keepTurns: 1,
              maxSummaryTokens: 400,
              tokenCountEstimator: est,
            }),
          ],
          maxTokens: 1,
          tokenCountEstimator: est,
        }),
    ],
  ];
  for (const [name, strategy] of summarising) {
    it(`${name}: every original is verbatim, masked, or covered by exactly one live summary`, async function () {
      await fc.assert(
        fc.asyncProperty(arbOps, async (ops) => {
          const report = await play(strategy, ops);
          expect(report.duplicated, 'duplicated').to.deep.equal([]);
          expect(report.uncovered, 'uncovered').to.deep.equal([]);
        }),
        { numRuns: 25 },
      );
    });
  }
});
