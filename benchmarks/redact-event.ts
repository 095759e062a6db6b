// What `redactEvent` of one event costs in a long log, with the store reading only the event's scope
// (RedactionScopeRepository) and, side by side in the same run, with the whole log read (the path before
// issue 26, and what a repository without the capability still gets).
//
//   node --expose-gc --conditions=session-compaction-source --import tsx benchmarks/redact-event.ts [--events 200000]
//
// Seeds one SQLite file with one session of --events events, then redacts one early event through each path
// (a fresh event each time) and reports the time and the heap growth across the call. Writes
// benchmarks/results/redact-event.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDefaultLogger,
  DefaultSessionService,
  Messages,
  Session,
  SessionEvent,
  SqliteSessionRepository,
  type SessionRepository,
} from 'session-compaction';
import { arg } from './support/args.js';

const EVENTS = Number(arg('events', '200000'));
const OUT = fileURLToPath(new URL('./results/redact-event.json', import.meta.url));
const logger = createDefaultLogger({ silent: true });
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** The same store without findRedactionScope: the service reads the whole log. */
function wholeLogOnly(repo: SqliteSessionRepository): SessionRepository {
  return new Proxy(repo, {
    get(target, prop, receiver) {
      if (prop === 'findRedactionScope') return undefined;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function redact(repo: SessionRepository, id: string, eventId: string) {
  const service = new DefaultSessionService(repo, { logger });
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  await service.redactEvent(id, eventId, { reason: 'benchmark' });
  const ms = Math.round(performance.now() - t0);
  const heapMb = Math.round((process.memoryUsage().heapUsed - heapBefore) / 1e5) / 10;
  return { ms, heapMb };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'redact-event-'));
try {
  const repo = new SqliteSessionRepository({ path: path.join(dir, 'store.db'), synchronous: 'NORMAL', logger });
  const id = 'long';
  await repo.save(Session.create({ id, userId: 'bench' }));
  const events = Array.from({ length: EVENTS }, (_, i) =>
    SessionEvent.create({
      sessionId: id,
      id: `e${i}`,
      message: i % 2 === 0 ? Messages.user(`question ${i} about the deployment`) : Messages.assistant(`answer ${i}: done`),
    }),
  );
  for (let i = 0; i < events.length; i += 10_000) await repo.appendEvents(id, events.slice(i, i + 10_000));
  const scoped = await redact(repo, id, 'e10');
  const whole = await redact(wholeLogOnly(repo), id, 'e12');
  const result = {
    date: new Date().toISOString(),
    events: EVENTS,
    backend: 'sqlite (file, synchronous NORMAL)',
    scoped,
    wholeLog: whole,
  };
  console.log(JSON.stringify(result));
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  await repo.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
