import { SessionEvent, type TokenCountEstimator } from 'session-compaction';
import { estimateEventTokens } from 'session-compaction/spi';
import type { HistoryItem } from '../registry/ContenderRegistry.js';
import type { RecordedProbe, RecordedSession } from '../recorded/RecordedSession.js';
import { toMessage, withoutSpeaker } from '../recorded/toMessage.js';

/** When a probe is asked: at the end of the session, or N model calls after its last evidence event. */
export type ProbeTiming = 'end' | number;

/**
 * A recorded session ready to replay: its events built once (ids `e<index>`, so token estimates are
 * memoised across every contender), the model-call points, and when each probe is asked.
 */
export class PreparedSession {
  readonly events: SessionEvent[];
  readonly history: HistoryItem[];
  /**
   * Model calls, as the number of events sent so far: one before each assistant reply (after a user or
   * tool event) and one after the last event (the next call, where end-of-session probes are asked).
   */
  readonly callPoints: number[];
  /** Per call point index: the probes asked there. */
  readonly probesAt: Map<number, RecordedProbe[]>;
  /** Tokens of the uncompacted history at each call point. */
  readonly fullTokens: number[];
  /** When each call is made: the time of the last event before it (ms since the epoch), never decreasing. */
  readonly callTimes: number[];
  /** Tokens of the recorded reply to each call (the assistant events at the call point); 0 for the last. */
  readonly replyTokens: number[];
  /** Probes with no evidence cannot be scored for retention. */
  readonly unscoredProbes: number;

  constructor(
    readonly dataset: string,
    readonly recorded: RecordedSession,
    readonly replayId: string,
    estimator: TokenCountEstimator,
    probeTiming: ProbeTiming = 'end',
    /** False: every event one second after the previous, whatever time the recording gives it. */
    recordedTimes = true,
    /** False: user and assistant events carry no participant `name`, whatever speaker the recording gives them. */
    participantNames = true,
  ) {
    const base = Date.parse('2024-01-01T00:00:00Z');
    this.events = recorded.events.map((e, i) => {
      const parsed = recordedTimes && e.timestamp !== undefined ? Date.parse(e.timestamp) : Number.NaN;
      return SessionEvent.create({
        sessionId: replayId,
        id: `e${i}`,
        message: toMessage(participantNames ? e : withoutSpeaker(e)),
        // Recordings without times get one second per event, so time-based triggers still see an order.
        timestamp: new Date(Number.isNaN(parsed) ? base + i * 1000 : parsed),
      });
    });
    this.history = this.events.map((e, index) => ({ index, message: e.message, tokens: estimateEventTokens(e, estimator) }));
    const points: number[] = [];
    recorded.events.forEach((e, i) => {
      if (e.role === 'assistant' && i > 0 && recorded.events[i - 1]!.role !== 'assistant') points.push(i);
    });
    points.push(recorded.events.length);
    this.callPoints = points;
    const prefix: number[] = [0];
    for (const h of this.history) prefix.push(prefix[prefix.length - 1]! + h.tokens);
    this.fullTokens = points.map((p) => prefix[p]!);
    // Recorded clocks can step back (a resumed agent run): the replay's clock never does.
    let clock = -Infinity;
    this.callTimes = points.map((p) => (clock = Math.max(clock, this.events[Math.max(0, p - 1)]!.timestamp.getTime())));
    this.replyTokens = points.map((p) => {
      let tokens = 0;
      for (let i = p; i < this.history.length && this.history[i]!.message.type === 'assistant'; i++)
        tokens += this.history[i]!.tokens;
      return tokens;
    });
    this.probesAt = new Map();
    let unscored = 0;
    for (const probe of recorded.probes ?? []) {
      if (probe.evidenceEventIndexes.length === 0) {
        unscored++;
        continue;
      }
      const k = this.askPoint(probe, probeTiming);
      const list = this.probesAt.get(k) ?? [];
      list.push(probe);
      this.probesAt.set(k, list);
    }
    this.unscoredProbes = unscored;
  }

  private askPoint(probe: RecordedProbe, timing: ProbeTiming): number {
    const last = this.callPoints.length - 1;
    if (timing === 'end') return last;
    const lastEvidence = Math.max(...probe.evidenceEventIndexes);
    // The first call that has seen the evidence, then `timing` calls later.
    const first = this.callPoints.findIndex((p) => p > lastEvidence);
    return Math.min(last, (first < 0 ? last : first) + timing);
  }

  get scoredProbes(): number {
    let n = 0;
    for (const list of this.probesAt.values()) n += list.length;
    return n;
  }
}
