// What SQLite's bounded session search (a common word: only events holding a rarer one are ranked) costs and
// changes, side by side with the unbounded statement it replaced, on the same file in the same run. For each
// archive size a session is loaded the way a conversation gets there (`fillArchive`), then every question is
// asked of both, alternating which goes first: wall time of each, and whether the hits are the same (same events
// in the same order; the share of the unbounded hits' events and texts found). With LoCoMo at hand, each of its
// conversations is also archived whole in a file of its own and every question compared (their real sizes).
// A session spanning fewer than BOUNDED_SEARCH_SPAN seqs is never bounded: there both columns run one statement.
//
//   node --import tsx benchmarks/sqlite-search-bound.ts [--sizes 1000,10000,100000] [--queries 200] [--limit 40]
//
// Text: LoCoMo turns and questions ($RECORDED_DIR or $LOCOMO), else a seeded synthetic chat. Writes
// docs/benchmarks/sqlite-search-bound.md and prints it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DefaultSessionService, Session, SessionEvent, SqliteSessionRepository, createDefaultLogger } from 'session-compaction';
import { arg } from './support/args.js';
import { chatCorpus } from './support/chatCorpus.js';
import { fillArchive } from './support/fillArchive.js';
import { loadLocomo } from './src/loaders/loadLocomo.js';
import { toMessage } from './src/recorded/toMessage.js';

const SIZES = arg('sizes', '1000,10000,100000').split(',').map(Number);
const QUERIES = Number(arg('queries', '200'));
const LIMIT = Number(arg('limit', '40'));
const LOCOMO = process.env.LOCOMO ?? path.resolve(process.env.RECORDED_DIR ?? '.', 'locomo/locomo10.json');
const logger = createDefaultLogger({ silent: true });
const { source, turns, questions } = chatCorpus(LOCOMO);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sqlite-search-bound-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

interface Hit {
  id: string;
  text: string | null;
}

/** The same file searched with the bound off (`boundedSearchEvents: Infinity`): the statement before the bound. */
function unboundedRepository(file: string): SqliteSessionRepository {
  return new SqliteSessionRepository({ path: file, logger, synchronous: 'NORMAL', boundedSearchEvents: Infinity });
}

async function hitsOf(repository: SqliteSessionRepository, sessionId: string, query: string): Promise<Hit[]> {
  return (await repository.searchEvents(sessionId, query, { limit: LIMIT })).map((h) => ({ id: h.event.id, text: h.event.text }));
}

interface Agreement {
  questions: number;
  identical: number;
  events: number;
  texts: number;
}

function agree(a: Agreement, bounded: readonly Hit[], exact: readonly Hit[]): void {
  a.questions++;
  if (bounded.map((h) => h.id).join('\n') === exact.map((h) => h.id).join('\n')) a.identical++;
  const ids = new Set(bounded.map((h) => h.id));
  a.events += exact.length === 0 ? 1 : exact.filter((h) => ids.has(h.id)).length / exact.length;
  const exactTexts = new Set(exact.map((h) => h.text));
  const boundedTexts = new Set(bounded.map((h) => h.text));
  a.texts += exactTexts.size === 0 ? 1 : [...exactTexts].filter((x) => boundedTexts.has(x)).length / exactTexts.size;
}

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;

interface SizeRow {
  size: number;
  bounded: number[];
  exact: number[];
  agreement: Agreement;
}

async function measureSize(size: number): Promise<SizeRow> {
  const file = path.join(tmp, `size-${size}.db`);
  const repository = new SqliteSessionRepository({ path: file, logger, synchronous: 'NORMAL' });
  const service = new DefaultSessionService(repository, { logger });
  process.stderr.write(`loading ${size.toLocaleString('en')} archived events…\n`);
  await fillArchive(service, repository, 's', size, 20, turns);
  const plain = unboundedRepository(file);
  const row: SizeRow = { size, bounded: [], exact: [], agreement: { questions: 0, identical: 0, events: 0, texts: 0 } };
  const asked = questions.slice(0, QUERIES);
  for (const q of asked.slice(0, 10)) {
    await hitsOf(repository, 's', q);
    await hitsOf(plain, 's', q);
  }
  for (const [i, q] of asked.entries()) {
    if (i % 50 === 0) process.stderr.write(`  ${size.toLocaleString('en')} events: question ${i + 1} of ${asked.length}\n`);
    let bounded: Hit[] = [];
    let exact: Hit[] = [];
    const runBounded = async () => {
      const s = performance.now();
      bounded = await hitsOf(repository, 's', q);
      row.bounded.push(performance.now() - s);
    };
    const runExact = async () => {
      const s = performance.now();
      exact = await hitsOf(plain, 's', q);
      row.exact.push(performance.now() - s);
    };
    if (i % 2 === 0) {
      await runBounded();
      await runExact();
    } else {
      await runExact();
      await runBounded();
    }
    agree(row.agreement, bounded, exact);
  }
  await plain.close();
  await repository.close();
  row.bounded.sort((a, b) => a - b);
  row.exact.sort((a, b) => a - b);
  return row;
}

interface ConversationRow {
  events: number;
  agreement: Agreement;
}

/** Each LoCoMo conversation archived whole in its own file; every question of it compared. */
async function measureConversations(): Promise<ConversationRow[]> {
  if (!existsSync(LOCOMO)) return [];
  const rows: ConversationRow[] = [];
  for (const [i, conversation] of loadLocomo(LOCOMO).sessions.entries()) {
    process.stderr.write(`LoCoMo conversation ${i + 1}…\n`);
    const file = path.join(tmp, `conversation-${i}.db`);
    const repository = new SqliteSessionRepository({ path: file, logger, synchronous: 'NORMAL' });
    await repository.save(Session.create({ id: 'c', userId: 'u' }));
    const events = conversation.events.map((e, k) => SessionEvent.create({ sessionId: 'c', id: `e${k}`, message: toMessage(e) }));
    await repository.appendEvents('c', events);
    await repository.compactEvents('c', events, [], events.length);
    const plain = unboundedRepository(file);
    const row: ConversationRow = { events: events.length, agreement: { questions: 0, identical: 0, events: 0, texts: 0 } };
    for (const probe of conversation.probes ?? []) {
      if (probe.distractor !== undefined) continue;
      agree(row.agreement, await hitsOf(repository, 'c', probe.question), await hitsOf(plain, 'c', probe.question));
    }
    await plain.close();
    await repository.close();
    rows.push(row);
  }
  return rows;
}

const loadAtStart = os.loadavg()[0]!;
const sizes: SizeRow[] = [];
for (const size of SIZES) sizes.push(await measureSize(size));
const conversations = await measureConversations();

const lines = [
  '# SQLite: the bounded session search beside the unbounded statement',
  '',
  `Generated by \`node --import tsx benchmarks/sqlite-search-bound.ts\` on ${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'cpu'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}. Text: ${source}.`,
  `Load average (1 min) at the start: ${loadAtStart.toFixed(1)} (wall times on a shared machine). ${QUERIES} questions, ${LIMIT} hits each, the two searches alternated question by question on the same file (WAL, synchronous NORMAL).`,
  '',
  '| archived events | bounded p50 (ms) | p95 (ms) | unbounded p50 (ms) | p95 (ms) | identical hits | unbounded hits found: events | texts |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...sizes.map(
    (r) =>
      `| ${r.size.toLocaleString('en')} | ${ms(quantile(r.bounded, 0.5))} | ${ms(quantile(r.bounded, 0.95))} | ${ms(quantile(r.exact, 0.5))} | ${ms(quantile(r.exact, 0.95))} | ${r.agreement.identical} of ${r.agreement.questions} | ${pct(r.agreement.events, r.agreement.questions)} | ${pct(r.agreement.texts, r.agreement.questions)} |`,
  ),
];
if (conversations.length > 0) {
  const total = conversations.reduce((a, c) => a + c.agreement.questions, 0);
  const same = conversations.reduce((a, c) => a + c.agreement.identical, 0);
  lines.push(
    '',
    `LoCoMo's conversations, each archived whole in a file of its own: ${same.toLocaleString('en')} of ${total.toLocaleString('en')} questions with identical hits.`,
    '',
    '| conversation | events | questions | identical hits |',
    '|---:|---:|---:|---:|',
    ...conversations.map((c, i) => `| ${i + 1} | ${c.events} | ${c.agreement.questions} | ${c.agreement.identical} |`),
  );
}
const out = lines.join('\n') + '\n';
const dir = path.resolve('docs/benchmarks');
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'sqlite-search-bound.md'), out);
process.stdout.write(out);
