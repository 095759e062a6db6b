import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadMiniSweAgent } from '../../benchmarks/src/loaders/loadMiniSweAgent.js';
import { loadTauBench } from '../../benchmarks/src/loaders/loadTauBench.js';
import type { RecordedSession } from '../../benchmarks/src/recorded/RecordedSession.js';
import { toMessage } from '../../benchmarks/src/recorded/toMessage.js';
import { SessionEvent } from 'session-compaction';

/**
 * The full recordings are not in the repository: RECORDED_DIR names a recorded-data directory laid out as
 * docs/benchmarking.md ('The recorded sources') describes. Unset, the tests that need it skip, saying so.
 */
export const RECORDED_DIR: string | undefined = process.env.RECORDED_DIR ? resolve(process.env.RECORDED_DIR) : undefined;
export const recordedDataHint =
  RECORDED_DIR === undefined
    ? 'RECORDED_DIR is not set; see docs/benchmarking.md'
    : `not under RECORDED_DIR=${RECORDED_DIR}; see docs/benchmarking.md`;
const TAU_BENCH_FILE = join(RECORDED_DIR ?? '', 'tau-bench', 'gpt-4o-airline.json');
const MINI_SWE_DIR = join(RECORDED_DIR ?? '', 'mini-swe-agent-deepseek');

export const hasTauBench = () => RECORDED_DIR !== undefined && existsSync(TAU_BENCH_FILE);
export const hasMiniSwe = () => RECORDED_DIR !== undefined && existsSync(join(MINI_SWE_DIR, 'output'));

let tau: RecordedSession[] | undefined;
let mini: RecordedSession[] | undefined;
export const tauBenchSessions = () => (tau ??= loadTauBench(TAU_BENCH_FILE).sessions);
export const miniSweSessions = () => (mini ??= loadMiniSweAgent(MINI_SWE_DIR).sessions);

/** A recorded session as library events, ids `<sessionId>#<index>` so that every run counts the same. */
export function toEvents(session: RecordedSession, sessionId = session.sessionId): SessionEvent[] {
  const start = Date.parse('2024-01-01T00:00:00Z');
  return session.events.map((e, i) =>
    SessionEvent.create({
      sessionId,
      id: `${sessionId}#${i}`,
      message: toMessage(e),
      timestamp: e.timestamp !== undefined ? new Date(e.timestamp) : new Date(start + i * 1000),
    }),
  );
}
