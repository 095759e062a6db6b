// The per-event token memo once it is full: `estimateEventTokens` over --events distinct events with the default
// estimator, --evictions of them past the memo's 100,000 slots (each evicts the oldest), and, side by side in the
// same run, the eviction pattern alone on a Map of the same size: the oldest key found with `keys().next()` afresh
// (what the memo did before: each call walks every slot deleted since the table was last rebuilt) and with one
// live iterator kept across evictions (what it does now).
//
//   npx tsx --conditions=session-compaction-source benchmarks/token-memo-eviction.ts [--evictions 30000] [--rounds 3]
//
// Prints one line per round and the load average.
import os from 'node:os';
import { Messages, SessionEvent, defaultTokenCountEstimator } from 'session-compaction';
import { estimateEventTokens } from 'session-compaction/spi';
import { numberArg } from './support/args.js';

const EVICTIONS = numberArg('evictions', '30000');
const ROUNDS = numberArg('rounds', '3');
/** EVENT_TOKEN_CACHE_SIZE of src/tokens/eventTokens.ts (not a public name). */
const MEMO_SIZE = 100_000;

/** ms to estimate EVICTIONS new events through a memo already full, with a fresh estimator (its own memo). */
function throughTheMemo(round: number): number {
  const estimator = defaultTokenCountEstimator();
  const event = (i: number) =>
    SessionEvent.create({ sessionId: `r${round}`, id: `e${i}`, message: Messages.user(`message ${i} about the plan`) });
  for (let i = 0; i < MEMO_SIZE; i++) estimateEventTokens(event(i), estimator);
  const started = performance.now();
  for (let i = MEMO_SIZE; i < MEMO_SIZE + EVICTIONS; i++) estimateEventTokens(event(i), estimator);
  return performance.now() - started;
}

/** ms for EVICTIONS evict-the-oldest-then-insert steps on a full Map, the oldest found afresh or by a kept iterator. */
function evictionAlone(keptIterator: boolean): number {
  const map = new Map<string, number>();
  for (let i = 0; i < MEMO_SIZE; i++) map.set(`k${i}`, i);
  let oldest = map.keys();
  const started = performance.now();
  for (let i = MEMO_SIZE; i < MEMO_SIZE + EVICTIONS; i++) {
    if (keptIterator) {
      let next = oldest.next();
      if (next.done === true) {
        oldest = map.keys();
        next = oldest.next();
      }
      map.delete(next.value as string);
    } else {
      map.delete(map.keys().next().value as string);
    }
    map.set(`k${i}`, i);
  }
  return performance.now() - started;
}

const ms = (n: number) => `${n.toFixed(0)} ms`;
console.log(`${EVICTIONS.toLocaleString('en-US')} evictions from a full memo of ${MEMO_SIZE.toLocaleString('en-US')} events`);
for (let round = 0; round < ROUNDS; round++) {
  console.log(
    `round ${round + 1}: estimateEventTokens ${ms(throughTheMemo(round))}; eviction alone: keys().next() afresh ` +
      `${ms(evictionAlone(false))}, kept iterator ${ms(evictionAlone(true))}`,
  );
}
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} on ${os.cpus().length} cores, Node ${process.version}`,
);
