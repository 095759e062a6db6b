import { InvalidArgumentError } from 'session-compaction';
import { RECORDED_ROLES, type RecordedDataset, type RecordedSession } from './RecordedSession.js';

/** How many problems one error message lists before "and N more". */
const MAX_LISTED = 10;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `"${value.length > 40 ? value.slice(0, 40) + '…' : value}"` : typeof value;
}

/**
 * Checks a parsed JSON document against the neutral format and returns it typed. Every problem is
 * reported with its JSON path (`sessions[3].events[12].role`), so a user converting their own logs can
 * fix them all in one pass. Accepts a dataset object or a bare array of sessions.
 */
export function validateRecordedDataset(value: unknown, defaultName = 'custom'): RecordedDataset {
  const problems: string[] = [];
  const fail = (path: string, expected: string, got: unknown) =>
    problems.push(`${path} must be ${expected} (got ${describe(got)})`);

  let name = defaultName;
  let source: string | undefined;
  let sessions: unknown;
  let root = '';
  if (Array.isArray(value)) {
    sessions = value;
  } else if (isObject(value)) {
    if (value.name !== undefined) {
      if (typeof value.name === 'string' && value.name.trim() !== '') name = value.name;
      else fail('name', 'a non-empty string', value.name);
    }
    if (value.source !== undefined) {
      if (typeof value.source === 'string') source = value.source;
      else fail('source', 'a string', value.source);
    }
    sessions = value.sessions;
    root = 'sessions';
  } else {
    throw new InvalidArgumentError(
      `recorded data must be an object {name?, sessions: [...]} or an array of sessions (got ${describe(value)})`,
    );
  }
  if (!Array.isArray(sessions)) {
    throw new InvalidArgumentError(`recorded data: ${root || 'root'} must be an array of sessions (got ${describe(sessions)})`);
  }

  const seen = new Set<string>();
  sessions.forEach((s: unknown, si) => {
    const sp = `${root}[${si}]`;
    if (!isObject(s)) return fail(sp, 'an object', s);
    if (typeof s.sessionId !== 'string' || s.sessionId.trim() === '') fail(`${sp}.sessionId`, 'a non-empty string', s.sessionId);
    else if (seen.has(s.sessionId)) problems.push(`${sp}.sessionId "${s.sessionId}" is a duplicate`);
    else seen.add(s.sessionId);
    if (s.meta !== undefined && !isObject(s.meta)) fail(`${sp}.meta`, 'an object', s.meta);
    if (!Array.isArray(s.events)) return fail(`${sp}.events`, 'an array', s.events);
    const events = s.events as unknown[];
    events.forEach((e, ei) => {
      const ep = `${sp}.events[${ei}]`;
      if (!isObject(e)) return fail(ep, 'an object', e);
      if (!(RECORDED_ROLES as readonly unknown[]).includes(e.role))
        fail(`${ep}.role`, `one of ${RECORDED_ROLES.join(', ')}`, e.role);
      if (typeof e.content !== 'string') fail(`${ep}.content`, 'a string', e.content);
      if (e.name !== undefined && typeof e.name !== 'string') fail(`${ep}.name`, 'a string', e.name);
      if (e.timestamp !== undefined && (typeof e.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp))))
        fail(`${ep}.timestamp`, 'an ISO-8601 date string', e.timestamp);
      if (e.toolCalls !== undefined) {
        if (e.role !== 'assistant') problems.push(`${ep}.toolCalls is only allowed on assistant events`);
        if (!Array.isArray(e.toolCalls)) fail(`${ep}.toolCalls`, 'an array', e.toolCalls);
        else
          e.toolCalls.forEach((c: unknown, ci) => {
            const cp = `${ep}.toolCalls[${ci}]`;
            if (!isObject(c)) return fail(cp, 'an object', c);
            for (const key of ['id', 'name', 'arguments'] as const)
              if (typeof c[key] !== 'string' || (key !== 'arguments' && c[key] === ''))
                fail(`${cp}.${key}`, 'a non-empty string', c[key]);
          });
      }
      if (e.role === 'tool' && (typeof e.toolCallId !== 'string' || e.toolCallId === ''))
        fail(`${ep}.toolCallId`, 'a non-empty string on tool events', e.toolCallId);
    });
    if (s.probes === undefined) return;
    if (!Array.isArray(s.probes)) return fail(`${sp}.probes`, 'an array', s.probes);
    (s.probes as unknown[]).forEach((p, pi) => {
      const pp = `${sp}.probes[${pi}]`;
      if (!isObject(p)) return fail(pp, 'an object', p);
      if (typeof p.question !== 'string') fail(`${pp}.question`, 'a string', p.question);
      if (typeof p.answer !== 'string') fail(`${pp}.answer`, 'a string', p.answer);
      if (p.category !== undefined && typeof p.category !== 'string') fail(`${pp}.category`, 'a string', p.category);
      if (p.distractor !== undefined && typeof p.distractor !== 'string') fail(`${pp}.distractor`, 'a string', p.distractor);
      if (!Array.isArray(p.evidenceEventIndexes))
        return fail(`${pp}.evidenceEventIndexes`, 'an array of event indexes', p.evidenceEventIndexes);
      (p.evidenceEventIndexes as unknown[]).forEach((ix, k) => {
        if (typeof ix !== 'number' || !Number.isInteger(ix) || ix < 0 || ix >= events.length)
          fail(`${pp}.evidenceEventIndexes[${k}]`, `an integer in [0, ${events.length - 1}]`, ix);
      });
    });
  });

  if (problems.length > 0) {
    const listed = problems.slice(0, MAX_LISTED).join('; ');
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : '';
    throw new InvalidArgumentError(`invalid recorded data "${name}": ${listed}${more}`);
  }
  const dataset: RecordedDataset = { name, sessions: sessions as RecordedSession[] };
  if (source !== undefined) dataset.source = source;
  return dataset;
}
