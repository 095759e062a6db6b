// Data lifecycle in one file: redaction, erasure with tombstones, retention. docs/data-lifecycle.md explains
// each step. Runs on SQLite in memory: npx tsx examples/data-lifecycle.ts
// In your project: import { ... } from 'session-compaction'.
import {
  DefaultSessionService,
  EventFilter,
  ExtractiveSummarizer,
  Messages,
  RecursiveSummarizationCompactionStrategy,
  SqliteSessionRepository,
} from 'session-compaction';

const DAY = 24 * 60 * 60 * 1000;
// A movable clock, so that the example can let 100 days pass.
let now = Date.now();
const repository = new SqliteSessionRepository({ path: ':memory:', secureDelete: true });
const sessions = new DefaultSessionService(repository, { now: () => new Date(now) });

// 1. A conversation in which the user pastes a secret; compaction archives it under a summary that
//    quotes it (the extractive summariser copies sentences verbatim).
await sessions.create({ userId: 'alice', id: 'alice-deploy' });
const said = [
  'My staging password is Hunter2-XYZZY, keep it for the deploy.',
  'Noted, I will use it for the deploy.',
  'Which branch do we deploy from?',
  'We deploy from release/2031.04.',
];
for (const [i, text] of said.entries()) {
  await sessions.appendMessage('alice-deploy', i % 2 === 0 ? Messages.user(text) : Messages.assistant(text), { id: `m${i}` });
}
const summarise = new RecursiveSummarizationCompactionStrategy({
  chatClient: new ExtractiveSummarizer(),
  maxEventsToKeep: 2,
  overlapSize: 0,
});
await sessions.compact('alice-deploy', () => true, summarise);

// 2. Redact it: the event keeps its id and position, the summary that quoted it is marked tainted, and
//    purgeDerived rewrites that summary now (otherwise the next compaction would).
const redaction = await sessions.redactEvent('alice-deploy', 'm0', { reason: 'user pasted a password' });
const purged = await sessions.purgeDerived('alice-deploy', 'm0', { chatClient: new ExtractiveSummarizer() });
const log = JSON.stringify(await sessions.getEvents('alice-deploy', EventFilter.all()));
console.log(
  `redacted ${redaction.redactedEventIds.join(', ')}; summaries rewritten: ${purged.regeneratedSummaryIds.length};`,
  `secret still stored: ${log.includes('XYZZY')}`,
);
// → redacted m0; summaries rewritten: 1; secret still stored: false

// 3. Delete a session: the report counts what went, and a tombstone keeps the id from being taken again.
await sessions.create({ userId: 'bob', id: 'bob-chat' });
await sessions.appendMessage('bob-chat', Messages.user('Hello'));
const deleted = await sessions.delete('bob-chat');
const retaken = await sessions.create({ userId: 'mallory', id: 'bob-chat' }).catch((e: Error) => e.message);
console.log(`deleted ${deleted.sessions} session, ${deleted.activeEvents} event; recreating it: ${String(retaken)}`);
// → deleted 1 session, 1 event; recreating it: Session bob-chat was deleted at … cannot be created again …

// 4. Retention, 100 days later: archived events older than 90 days go (the summaries that cover them stay),
//    sessions idle for more than 30 days are erased with a tombstone. Run it from a cron job.
await sessions.create({ userId: 'carol', id: 'carol-old' });
await sessions.appendMessage('carol-old', Messages.user('An old question'));
now += 100 * DAY;
await sessions.appendMessage('alice-deploy', Messages.user('Deploy went fine, thanks.'));
const retention = await sessions.applyRetention(
  { archivedEventsOlderThanMs: 90 * DAY, sessionsIdleLongerThanMs: 30 * DAY },
  { batchSize: 500, onProgress: (p) => void p /* e.g. log p.sessionsScanned, p.archivedEventsRemoved */ },
);
console.log(
  `retention: ${retention.sessionsScanned} sessions scanned, ${retention.archivedEventsRemoved} archived events removed,`,
  `${retention.sessionsErased} idle session erased (${retention.erased.sessionIds.join(', ')})`,
);
// → retention: 2 sessions scanned, 2 archived events removed, 1 idle session erased (carol-old)

// 5. A user's erasure request: every session, event, summary and index entry of the user, in one call.
const erasure = await sessions.eraseUser('alice');
console.log(
  `erased ${erasure.sessions} session of alice: ${erasure.activeEvents} active + ${erasure.archivedEvents} archived events,`,
  `${erasure.summaries} summary events, ${erasure.tombstones} tombstone; left: ${(await sessions.findByUserId('alice')).length}`,
);
// → erased 1 session of alice: 3 active + 0 archived events, 2 summary events, 1 tombstone; left: 0

await repository.close();
