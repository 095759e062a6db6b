import { formatEvent, SessionEvent, type TokenCountEstimator } from 'session-compaction';
import { coveredIds, METADATA_MASKED_FROM, countTurns, estimateEventTokens } from 'session-compaction/spi';
import type { SessionSnapshot } from './sessionSnapshot.js';

/** Where the tokens of a window go. */
export interface TokenAnatomy {
  system: number;
  summaries: number;
  user: number;
  assistant: number;
  toolResults: number;
  /** Masked copies of tool results (observation masking). */
  masked: number;
  total: number;
}

export interface SummaryView {
  eventId: string;
  /** The strategy that wrote it (`compactionSource`). */
  source: string | null;
  tokens: number;
  /** How many original events it stands for, and the first and last of them. */
  covers: number;
  firstCoveredId: string | null;
  lastCoveredId: string | null;
}

export interface EventView {
  index: number;
  id: string;
  archived: boolean;
  type: string;
  synthetic: boolean;
  branch: string | null;
  tokens: number;
  timestamp: string;
  /** The formatted text, shortened; absent when content is hidden. */
  preview?: string;
}

export interface SessionView {
  id: string;
  userId: string;
  createdAt: string;
  expiresAt: string | null;
  metadata: Record<string, unknown>;
  version: number;
  events: { total: number; active: number; archived: number; synthetic: number; activeTurns: number };
  tokens: { active: TokenAnatomy; archived: number };
  summaries: SummaryView[];
  log: EventView[];
}

const PREVIEW_CHARS = 100;

function anatomy(events: readonly SessionEvent[], estimator: TokenCountEstimator): TokenAnatomy {
  const a: TokenAnatomy = { system: 0, summaries: 0, user: 0, assistant: 0, toolResults: 0, masked: 0, total: 0 };
  for (const e of events) {
    const tokens = estimateEventTokens(e, estimator);
    a.total += tokens;
    if (e.isSynthetic()) a.summaries += tokens;
    else if (typeof e.metadata[METADATA_MASKED_FROM] === 'string') a.masked += tokens;
    else if (e.messageType === 'system') a.system += tokens;
    else if (e.messageType === 'user') a.user += tokens;
    else if (e.messageType === 'assistant') a.assistant += tokens;
    else a.toolResults += tokens;
  }
  return a;
}

/** What `show` prints: the active window against the archive, summaries and what they cover, token anatomy. */
export function inspectSession(snapshot: SessionSnapshot, estimator: TokenCountEstimator, withContent: boolean): SessionView {
  const { session, events } = snapshot;
  const active = events.filter((e) => !e.isArchived());
  const archived = events.filter((e) => e.isArchived());
  const summaries: SummaryView[] = active
    .filter((e) => e.isSynthetic() && e.messageType !== 'user')
    .map((e) => {
      const ids = coveredIds(e);
      const source = e.metadata[SessionEvent.METADATA_COMPACTION_SOURCE];
      return {
        eventId: e.id,
        source: typeof source === 'string' ? source : null,
        tokens: estimateEventTokens(e, estimator),
        covers: ids.length,
        firstCoveredId: ids[0] ?? null,
        lastCoveredId: ids[ids.length - 1] ?? null,
      };
    });
  return {
    id: session.id,
    userId: session.userId,
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.expiresAt === null ? null : session.expiresAt.toISOString(),
    metadata: { ...session.metadata },
    version: snapshot.version,
    events: {
      total: events.length,
      active: active.length,
      archived: archived.length,
      synthetic: events.filter((e) => e.isSynthetic()).length,
      activeTurns: countTurns(active),
    },
    tokens: { active: anatomy(active, estimator), archived: anatomy(archived, estimator).total },
    summaries,
    log: events.map((e, index) => {
      const view: EventView = {
        index,
        id: e.id,
        archived: e.archived,
        type: e.messageType,
        synthetic: e.isSynthetic(),
        branch: e.branch,
        tokens: estimateEventTokens(e, estimator),
        timestamp: e.timestamp.toISOString(),
      };
      if (withContent) {
        const text = formatEvent(e).replace(/\s+/g, ' ');
        view.preview = text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
      }
      return view;
    }),
  };
}
