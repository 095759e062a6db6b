import { InvalidArgumentError } from 'session-compaction';
import type { RecordedDataset, RecordedEvent, RecordedProbe, RecordedSession } from '../recorded/RecordedSession.js';
import { asArray, asRecord, readJson } from './readJson.js';

export interface LocomoLoadOptions {
  /**
   * Put a `system` event `DATE: <session date>` before each sub-session, as LoCoMo's own QA prompt does.
   * Off by default: strategies that always keep system events would then keep every date header.
   */
  dateHeaders?: boolean;
  /**
   * Start each turn's text with its speaker's name (`Caroline: …`), as LoCoMo's own QA prompt renders turns.
   * The questions name the speakers ("What did Caroline research?"); with user/assistant roles alone, neither a
   * model nor a search over the log can tell who said what. Off by default (it changes every token count).
   */
  speakerNames?: boolean;
}

const CATEGORIES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** `"1:56 pm on 8 May, 2023"` → `"2023-05-08T13:56:00"` (LoCoMo's dates carry no timezone). */
export function parseLocomoDate(text: string): string | undefined {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (m === null) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) return undefined;
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'pm') hour += 12;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${m[6]}-${pad(month + 1)}-${pad(Number(m[4]))}T${pad(hour)}:${m[2]}:00`;
}

/**
 * Splits one LoCoMo evidence string into normalised dia ids: split on `;`, `,` or on
 * whitespace before a `D`, then repair `D:11:26` and `D30:05`. Unparseable parts are dropped.
 */
export function normaliseLocomoEvidence(evidence: string): string[] {
  const out: string[] = [];
  for (const part of evidence.split(/[;,]|\s+(?=D)/)) {
    const m = /^D:?(\d+):0*(\d+)$/.exec(part.trim());
    if (m !== null) out.push(`D${Number(m[1])}:${Number(m[2])}`);
  }
  return out;
}

/** LoCoMo (`locomo10.json`): one neutral session per conversation, QA items as probes. */
export function loadLocomo(path: string, options: LocomoLoadOptions = {}): RecordedDataset {
  const root = asArray(readJson(path), `${path}: LoCoMo root`);
  const sessions = root.map((raw, i) => convertConversation(asRecord(raw, `${path}[${i}]`), options, `${path}[${i}]`));
  return {
    name: 'locomo',
    source: 'LoCoMo (snap-research/LoCoMo, CC BY-NC 4.0; Maharana et al., ACL 2024)',
    sessions,
  };
}

function convertConversation(sample: Record<string, unknown>, options: LocomoLoadOptions, where: string): RecordedSession {
  const sessionId = String(sample.sample_id);
  const conversation = asRecord(sample.conversation, `${where}.conversation`);
  const speakerA = conversation.speaker_a;
  const numbers = Object.keys(conversation)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conversation[m[0]]))
    .map((m) => Number(m[1]))
    // Numeric order: string order would put session_10 before session_2.
    .sort((a, b) => a - b);
  const events: RecordedEvent[] = [];
  // Built while flattening, never computed: any inserted event (a date header) moves later indexes.
  const indexOfDiaId = new Map<string, number>();
  for (const n of numbers) {
    const dateText = conversation[`session_${n}_date_time`];
    const timestamp = typeof dateText === 'string' ? parseLocomoDate(dateText) : undefined;
    if (options.dateHeaders === true && typeof dateText === 'string') {
      events.push({ role: 'system', content: `DATE: ${dateText}`, ...(timestamp !== undefined ? { timestamp } : {}) });
    }
    for (const rawTurn of asArray(conversation[`session_${n}`], `${where}.conversation.session_${n}`)) {
      const turn = asRecord(rawTurn, `${where}.conversation.session_${n}[]`);
      const speaker = String(turn.speaker);
      let content = (options.speakerNames === true ? `${speaker}: ` : '') + String(turn.text ?? '');
      if (typeof turn.blip_caption === 'string' && turn.blip_caption !== '') content += ` [shares image: ${turn.blip_caption}]`;
      const event: RecordedEvent = { role: speaker === speakerA ? 'user' : 'assistant', content, name: speaker };
      if (timestamp !== undefined) event.timestamp = timestamp;
      if (typeof turn.dia_id === 'string') indexOfDiaId.set(turn.dia_id, events.length);
      events.push(event);
    }
  }
  if (events.length === 0) throw new InvalidArgumentError(`${where}: LoCoMo conversation ${sessionId} has no turns`);
  const probes: RecordedProbe[] = asArray(sample.qa ?? [], `${where}.qa`).map((rawQa) => {
    const qa = asRecord(rawQa, `${where}.qa[]`);
    const category = Number(qa.category);
    const indexes = new Set<number>();
    for (const evidence of asArray(qa.evidence ?? [], `${where}.qa[].evidence`)) {
      for (const id of normaliseLocomoEvidence(String(evidence))) {
        const index = indexOfDiaId.get(id);
        if (index !== undefined) indexes.add(index);
      }
    }
    const probe: RecordedProbe = {
      question: String(qa.question),
      answer: category === 5 ? 'Not mentioned in the conversation' : String(qa.answer),
      evidenceEventIndexes: [...indexes].sort((a, b) => a - b),
      category: CATEGORIES[category] ?? String(qa.category),
    };
    if (category === 5 && qa.adversarial_answer !== undefined) probe.distractor = String(qa.adversarial_answer);
    return probe;
  });
  return { sessionId, events, probes, meta: { speakers: [speakerA, conversation.speaker_b] } };
}
