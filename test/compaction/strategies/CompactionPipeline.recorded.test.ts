import { expect } from 'chai';
import {
  CompactionPipeline,
  CompactionRequest,
  ExtractiveSummarizer,
  ObservationMaskingCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  Session,
  createDefaultLogger,
  defaultTokenCountEstimator,
} from 'session-compaction';
import { estimateEventsTokens } from 'session-compaction/spi';
import type { RecordedSession } from '../../../src/bench/recorded/RecordedSession.js';
import { skipWithReason } from '../../support/services.js';
import { toolPairsIntact } from '../../support/beyondEvents.js';
import {
  hasMiniSwe,
  hasTauBench,
  miniSweSessions,
  tauBenchSessions,
  recordedDataHint,
  toEvents,
} from '../../support/recorded.js';

const BUDGET = 8000;
const estimator = defaultTokenCountEstimator();

/** The acceptance pipeline: observation masking, then a rolling summary, under an 8k-token budget. */
function maskThenSummarise(): CompactionPipeline {
  return new CompactionPipeline({
    stages: [
      new ObservationMaskingCompactionStrategy(),
      new RecursiveSummarizationCompactionStrategy({
        chatClient: new ExtractiveSummarizer({ maxTokens: 1000 }),
        maxEventsToKeep: 12,
        overlapSize: 2,
        // Summarising the whole long agent turn (the 'never' cut) is what brings these sessions under budget.
        cutWithinTurn: 'never',
        logger: createDefaultLogger({ silent: true }),
      }),
    ],
    maxTokens: BUDGET,
  });
}

async function checkAll(sessions: readonly RecordedSession[]) {
  const pipeline = maskThenSummarise();
  for (const recorded of sessions) {
    const events = toEvents(recorded);
    const request = CompactionRequest.of(Session.create({ id: recorded.sessionId, userId: 'bench' }), events);
    const run = await pipeline.run(request);
    const after = estimateEventsTokens(run.result.compactedEvents, estimator);
    expect(after, `${recorded.sessionId}: ${after} tokens after ${run.stages.length} stage(s)`).to.be.at.most(BUDGET);
    expect(toolPairsIntact(run.result.compactedEvents), recorded.sessionId).to.equal(true);
  }
}

describe('pipeline (mask → summarise) on the recorded conversations', function () {
  this.timeout(180_000);

  it('brings every τ-bench airline session under an 8k-token budget', async function () {
    if (!hasTauBench()) skipWithReason(this, `τ-bench recordings not found (${recordedDataHint})`);
    await checkAll(tauBenchSessions());
  });

  it('brings every mini-swe-agent session under an 8k-token budget', async function () {
    if (!hasMiniSwe()) skipWithReason(this, `mini-swe-agent recordings not found (${recordedDataHint})`);
    await checkAll(miniSweSessions());
  });
});
