import { metrics, trace } from '@opentelemetry/api';
import { expect } from 'chai';
import {
  DefaultSessionService,
  InMemorySessionRepository,
  Messages,
  SlidingWindowCompactionStrategy,
  TurnCountTrigger,
} from 'session-compaction';
import { instruments } from '../../src/telemetry/telemetry.js';
import { silent } from '../chat/support/harness.js';

describe('telemetry without an OpenTelemetry SDK', function () {
  before(() => {
    trace.disable();
    metrics.disable();
  });

  it('compaction works, spans do not record and metric instruments are no-ops', async function () {
    const service = new DefaultSessionService(new InMemorySessionRepository(), { logger: silent });
    const session = await service.create({ userId: 'u' });
    for (let i = 0; i < 6; i++) {
      await service.appendMessage(session.id, Messages.user(`q${i}`));
      await service.appendMessage(session.id, Messages.assistant(`a${i}`));
    }
    const result = await service.compact(
      session.id,
      new TurnCountTrigger(2),
      new SlidingWindowCompactionStrategy({ maxEvents: 4 }),
    );
    expect(result.archivedEvents).to.have.length(8);
    expect(trace.getTracer('x').startSpan('probe').isRecording()).to.equal(false);
    expect(instruments().active).to.equal(false);
  });
});
