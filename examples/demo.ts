// `npm start`: compacts one recorded conversation (a τ-bench airline support chat, shipped in data/) with
// every trigger × mechanical strategy and prints what each combination does to the active window.
// In your own project, import from 'session-compaction' instead of '../src/index.js'.
import 'reflect-metadata';
import { Container } from 'inversify';
import {
  CompactionRequest,
  CompositeCompactionTrigger,
  EventFilter,
  SlidingWindowCompactionStrategy,
  TokenCountCompactionStrategy,
  TokenCountTrigger,
  TurnCountTrigger,
  TurnWindowCompactionStrategy,
  TYPES,
  createSessionCompactionModule,
  type CompactionStrategy,
  type CompactionTrigger,
  type SessionService,
  type TokenCountEstimator,
} from 'session-compaction';
import { countTurns, estimateEventsTokens } from 'session-compaction/spi';
import { loadRecordedSample, toMessage, type RecordedSession } from './recordedSample.js';

interface Named<T> {
  label: string;
  value: T;
}

const TRIGGERS: Named<CompactionTrigger>[] = [
  { label: 'TurnCount(>6 turns)', value: new TurnCountTrigger(6) },
  { label: 'TokenCount(>=5000)', value: new TokenCountTrigger({ threshold: 5000 }) },
  { label: 'TokenCount(>=20000)', value: new TokenCountTrigger({ threshold: 20_000 }) },
  {
    label: 'anyOf(Turn>20, Tok>=5000)',
    value: CompositeCompactionTrigger.anyOf(new TurnCountTrigger(20), new TokenCountTrigger({ threshold: 5000 })),
  },
];

const STRATEGIES: Named<CompactionStrategy>[] = [
  { label: 'SlidingWindow(12 events)', value: new SlidingWindowCompactionStrategy({ maxEvents: 12 }) },
  { label: 'TurnWindow(3 turns)', value: new TurnWindowCompactionStrategy({ maxTurns: 3 }) },
  { label: 'TokenCount(3000 tokens)', value: new TokenCountCompactionStrategy({ maxTokens: 3000 }) },
];

interface Row {
  strategy: string;
  trigger: string;
  fired: boolean;
  eventsBefore: number;
  eventsAfter: number;
  turnsBefore: number;
  turnsAfter: number;
  tokensBefore: number;
  tokensAfter: number;
  archived: number;
  systemKept: boolean;
  allRetrievable: boolean;
}

async function runCombination(
  service: SessionService,
  estimator: TokenCountEstimator,
  recorded: RecordedSession,
  strategy: Named<CompactionStrategy>,
  trigger: Named<CompactionTrigger>,
): Promise<Row> {
  // A fresh session per combination, so that each row starts from the full conversation.
  const session = await service.create({ userId: String(recorded.meta?.userId ?? 'demo-user') });
  const appendedIds: string[] = [];
  for (const event of recorded.events) {
    // The agent's instructions are pinned, as an application would: no strategy may archive them.
    const options = event.type === 'system' ? { pinned: true } : {};
    appendedIds.push((await service.appendMessage(session.id, toMessage(event), options)).id);
  }

  const before = await service.getEvents(session.id, EventFilter.active());
  // Asked separately only to show it in the table: compact() evaluates the trigger itself.
  const fired = await trigger.value.shouldCompact(CompactionRequest.of(session, before));
  const result = await service.compact(session.id, trigger.value, strategy.value);
  const after = await service.getEvents(session.id, EventFilter.active());
  const everything = await service.getEvents(session.id, EventFilter.all());
  const everyId = new Set(everything.map((e) => e.id));

  return {
    strategy: strategy.label,
    trigger: trigger.label,
    fired,
    eventsBefore: before.length,
    eventsAfter: after.length,
    turnsBefore: countTurns(before),
    turnsAfter: countTurns(after),
    tokensBefore: estimateEventsTokens(before, estimator),
    tokensAfter: estimateEventsTokens(after, estimator),
    archived: result.archivedEvents.length,
    systemKept: after.some((e) => e.messageType === 'system'),
    // Every appended event, exactly once (the archive comes first in the log, so order may change).
    allRetrievable: everything.length === appendedIds.length && appendedIds.every((id) => everyId.has(id)),
  };
}

type Align = 'left' | 'right';
interface Column {
  header: string;
  align: Align;
  cell: (row: Row) => string;
}

const COLUMNS: Column[] = [
  { header: 'strategy', align: 'left', cell: (r) => r.strategy },
  { header: 'trigger', align: 'left', cell: (r) => r.trigger },
  { header: 'fired', align: 'left', cell: (r) => (r.fired ? 'yes' : 'no') },
  { header: 'events', align: 'right', cell: (r) => `${r.eventsBefore} → ${r.eventsAfter}` },
  { header: 'turns', align: 'right', cell: (r) => `${r.turnsBefore} → ${r.turnsAfter}` },
  { header: 'tokens', align: 'right', cell: (r) => `${r.tokensBefore} → ${r.tokensAfter}` },
  { header: 'saved', align: 'right', cell: (r) => `${Math.round((100 * (r.tokensBefore - r.tokensAfter)) / r.tokensBefore)}%` },
  { header: 'archived', align: 'right', cell: (r) => String(r.archived) },
  { header: 'sys prompt kept', align: 'left', cell: (r) => (r.systemKept ? 'yes' : 'no') },
  { header: 'all retrievable', align: 'left', cell: (r) => (r.allRetrievable ? 'yes' : 'NO') },
];

function renderTable(rows: Row[]): string {
  const widths = COLUMNS.map((c) => Math.max(c.header.length, ...rows.map((r) => c.cell(r).length)));
  const pad = (text: string, i: number): string =>
    COLUMNS[i]!.align === 'left' ? text.padEnd(widths[i]!) : text.padStart(widths[i]!);
  const line = (cells: string[]): string => cells.map(pad).join('  ').trimEnd();
  const out = [line(COLUMNS.map((c) => c.header)), widths.map((w) => '─'.repeat(w)).join('  ')];
  let previous = '';
  for (const row of rows) {
    // A blank line between strategies keeps the 12 rows scannable.
    if (previous !== '' && row.strategy !== previous) out.push('');
    out.push(line(COLUMNS.map((c) => c.cell(row))));
    previous = row.strategy;
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  const sample = loadRecordedSample();
  const recorded = sample.sessions[0]!;

  const container = new Container();
  await container.load(createSessionCompactionModule({ repository: 'memory' }));
  const service = container.get<SessionService>(TYPES.SessionService);
  const estimator = container.get<TokenCountEstimator>(TYPES.TokenCountEstimator);

  const rows: Row[] = [];
  for (const strategy of STRATEGIES) {
    for (const trigger of TRIGGERS) rows.push(await runCombination(service, estimator, recorded, strategy, trigger));
  }

  const first = rows[0]!;
  const toolEvents = recorded.events.filter((e) => e.type === 'tool').length;
  console.log(`session-compaction demo — one recorded conversation, every trigger × mechanical strategy\n`);
  console.log(`Conversation: ${recorded.id} (τ-bench airline, GPT-4o agent + simulated customer)`);
  console.log(`  ${first.eventsBefore} events (${toolEvents} tool results), ${first.turnsBefore} turns,`);
  console.log(`  ${first.tokensBefore} tokens (o200k_base, every event rendered with formatEvent)`);
  console.log(`  source: ${sample.source}`);
  console.log(`  licence: ${sample.license} — see data/ATTRIBUTION.md\n`);
  console.log(renderTable(rows));
  console.log(`
events/turns/tokens: the active window (what you would send to the model) before → after compact().
fired: what the trigger answered; when it says no, compact() writes nothing.
archived: events moved to the archive by this call. Nothing is deleted: "all retrievable" checks that
getEvents(EventFilter.all()) still returns every appended event exactly once.
sys prompt kept: the system prompt is appended pinned ({ pinned: true }), so every strategy keeps it. Unpinned,
SlidingWindow and TokenCount cut by position and would archive it with the oldest turns.`);
}

await main();
