// SQLite repository figures: appends/s, findEvents(active()) and compactEvents latency, and whether
// compaction stays flat as archived history grows from 100 to 100,000 events.
//
//   npx tsx benchmarks/sqlite-archived-growth.ts [--archived 100,100000] [--iterations 300]
//
// Each session has a 20-event active window. One measured compaction = append 2 events, then
// compactEvents archiving the 2 oldest window events and retaining the other 20 — the steady state of a
// sliding window. Runs on a temp file, for synchronous=FULL (the default) and NORMAL. Prints Markdown tables.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { EventFilter, Messages, Session, SessionEvent, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import type { SqliteSessionRepositoryOptions } from 'session-compaction/sqlite';
import { arg } from './support/args.js';

const ARCHIVES = arg('archived', '100,100000').split(',').map(Number);
const ITERATIONS = Number(arg('iterations', '300'));
const WINDOW = 20;
const logger = createDefaultLogger({ silent: true });
const dir = mkdtempSync(path.join(os.tmpdir(), 'sqlite-bench-'));

const text = (i: number) => `message ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(8);
const ev = (sessionId: string, i: number) =>
  SessionEvent.create({
    sessionId,
    id: `e${i}`,
    message: i % 2 === 0 ? Messages.user(text(i)) : Messages.assistant(text(i)),
  });

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const ms = (v: number) => v.toFixed(3);

type Sync = NonNullable<SqliteSessionRepositoryOptions['synchronous']>;

async function appendRate(synchronous: Sync, count: number): Promise<number> {
  const repo = new SqliteSessionRepository({ path: path.join(dir, `append-${synchronous}.db`), synchronous, logger });
  await repo.save(Session.create({ id: 's', userId: 'u' }));
  const events = Array.from({ length: count }, (_, i) => ev('s', i));
  const t0 = performance.now();
  for (const e of events) await repo.appendEvent(e);
  const rate = count / ((performance.now() - t0) / 1000);
  await repo.close();
  return rate;
}

interface Row {
  archived: number;
  active: number[];
  compact: number[];
  all: number;
  keyword: number;
}

/** Builds a session with `archived` archived events and a 20-event window, quickly (NORMAL), then measures. */
async function measure(synchronous: Sync, archived: number): Promise<Row> {
  const file = path.join(dir, `growth-${synchronous}-${archived}.db`);
  const setup = new SqliteSessionRepository({ path: file, synchronous: 'NORMAL', logger });
  await setup.save(Session.create({ id: 's', userId: 'u' }));
  const events = Array.from({ length: archived + WINDOW }, (_, i) => ev('s', i));
  for (const e of events) await setup.appendEvent(e);
  await setup.compactEvents('s', events.slice(0, archived), events.slice(archived), await setup.getEventVersion('s'));
  await setup.close();

  const repo = new SqliteSessionRepository({ path: file, synchronous, logger });
  let window = events.slice(archived);
  let next = archived + WINDOW;
  const active: number[] = [];
  const compact: number[] = [];
  for (let it = 0; it < ITERATIONS; it++) {
    let t0 = performance.now();
    const read = await repo.findEvents('s', EventFilter.active());
    active.push(performance.now() - t0);
    if (read.length !== window.length) throw new Error(`window has ${read.length} events, expected ${window.length}`);

    for (let k = 0; k < 2; k++) {
      const e = ev('s', next++);
      await repo.appendEvent(e);
      window.push(e);
    }
    const version = await repo.getEventVersion('s');
    t0 = performance.now();
    const ok = await repo.compactEvents('s', window.slice(0, 2), window.slice(2), version);
    compact.push(performance.now() - t0);
    if (!ok) throw new Error('compaction lost its CAS with no concurrent writer');
    window = window.slice(2);
  }
  let t0 = performance.now();
  const all = await repo.findEvents('s', EventFilter.all());
  const allMs = performance.now() - t0;
  if (all.length !== next) throw new Error(`log has ${all.length} events, expected ${next}`);
  t0 = performance.now();
  await repo.findEvents('s', EventFilter.of({ keyword: 'MESSAGE 7' }));
  const keywordMs = performance.now() - t0;
  await repo.close();
  return { archived, active, compact, all: allMs, keyword: keywordMs };
}

async function main(): Promise<void> {
  console.log(`SQLite ${process.platform}/${process.arch}, ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}`);
  console.log(`iterations per row: ${ITERATIONS}; active window ${WINDOW} events; temp dir ${dir}\n`);
  for (const synchronous of ['FULL', 'NORMAL'] as const) {
    const rate = await appendRate(synchronous, synchronous === 'FULL' ? 3000 : 20000);
    console.log(`### synchronous=${synchronous}: ${Math.round(rate).toLocaleString('en')} sequential appends/s\n`);
    console.log(
      '| archived events | findEvents(active()) p50 / p95 ms | compactEvents p50 / p95 ms | findEvents(all()) ms | keyword over whole log ms |',
    );
    console.log('|---:|---:|---:|---:|---:|');
    const rows: Row[] = [];
    for (const archived of ARCHIVES) {
      const r = await measure(synchronous, archived);
      rows.push(r);
      console.log(
        `| ${archived.toLocaleString('en')} | ${ms(percentile(r.active, 50))} / ${ms(percentile(r.active, 95))} | ` +
          `${ms(percentile(r.compact, 50))} / ${ms(percentile(r.compact, 95))} | ${ms(r.all)} | ${ms(r.keyword)} |`,
      );
    }
    if (rows.length >= 2) {
      const ratio = percentile(rows[rows.length - 1]!.compact, 50) / percentile(rows[0]!.compact, 50);
      console.log(
        `\ncompactEvents p50 ratio ${rows[rows.length - 1]!.archived} vs ${rows[0]!.archived} archived: ${ratio.toFixed(2)}\n`,
      );
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
