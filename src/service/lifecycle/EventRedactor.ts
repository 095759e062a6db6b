import {
  coveredIds,
  METADATA_MASKED_FROM,
  METADATA_REDACTION,
  METADATA_TAINTED_BY,
  taintedBy,
} from '../../compaction/coverage.js';
import { originalIdOf } from '../../compaction/strategies/replaceInPlace.js';
import { withoutNativeCompaction } from '../../compaction/nativeCompaction.js';
import { METADATA_NATIVE } from '../../session/nativeMetadata.js';
import { requestSummary } from '../../compaction/strategies/summaryEvents.js';
import { IllegalStateError, InvalidArgumentError, requireText } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { isEventRewritingRepository } from '../../repository/EventRewritingRepository.js';
import { isRedactionScopeRepository } from '../../repository/RedactionScopeRepository.js';
import type { Message } from '../../session/Message.js';
import { formatEvent } from '../../session/formatEvent.js';
import { SessionEvent } from '../../session/SessionEvent.js';
import type { ChatClient } from '../../summarization/ChatClient.js';
import { mechanicalSummary } from '../../summarization/mechanicalSummary.js';
import { buildSummaryPrompt, DEFAULT_SUMMARY_SYSTEM_PROMPT, summarySystemPrompt } from '../../summarization/prompts.js';
import type { DataLifecycleContext } from './DataLifecycleContext.js';
import type { PurgeDerivedOptions, PurgeDerivedReport, RedactionReport, RedactOptions } from './reports.js';

export const DEFAULT_REDACTION_MARKER = '[redacted]';

/** Redactions and regenerations are cheap to redo (no model call is repeated), so a lost CAS is retried this often. */
const MAX_ATTEMPTS = 10;

/**
 * The message with its content replaced and its shape kept: the same role, the same tool call ids and names
 * (so every tool result still answers its call), arguments emptied, reasoning and the participant's name dropped
 * (a name says who wrote what was redacted: personal data as much as the text).
 */
export function redactMessage(message: Message, marker: string): Message {
  switch (message.type) {
    case 'user':
    case 'system':
      return { type: message.type, text: marker };
    case 'assistant': {
      const calls = message.toolCalls?.map((c) => ({ id: c.id, type: c.type, name: c.name, arguments: '{}' }));
      return {
        type: 'assistant',
        text: message.text === null && calls !== undefined ? null : marker,
        ...(calls !== undefined && calls.length > 0 ? { toolCalls: calls } : {}),
      };
    }
    case 'tool':
      return { type: 'tool', responses: message.responses.map((r) => ({ id: r.id, name: r.name, responseData: marker })) };
  }
}

/** A compaction product holding text derived from other events (the assistant half of a summary pair). */
function isSummaryText(e: SessionEvent): boolean {
  return e.isSynthetic() && e.messageType !== 'user' && typeof e.metadata[SessionEvent.METADATA_COMPACTION_SOURCE] === 'string';
}

/**
 * Redaction of one event (and its masked copies) in place, and regeneration of the summaries written from it.
 * A summary is tainted when its coverage includes the event, when it records no coverage, or — for an event
 * still in the active window — when it was written after the event (a summariser may have seen it as
 * upcoming context).
 */
export class EventRedactor {
  constructor(
    private readonly ctx: DataLifecycleContext,
    private readonly defaultClient: ChatClient | undefined,
  ) {}

  async redact(sessionId: string, eventId: string, options: RedactOptions): Promise<RedactionReport> {
    requireText(sessionId, 'sessionId');
    requireText(eventId, 'eventId');
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const reason = requireText(options.reason, 'reason');
    const marker = options.replacement === undefined ? DEFAULT_REDACTION_MARKER : requireText(options.replacement, 'replacement');
    const rewrite = this.requireRewrite();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { version, log } = await this.readRedactionScope(sessionId, eventId);
      const target = log.find((e) => e.id === eventId);
      if (target === undefined) throw new InvalidArgumentError(`Event not found: ${eventId}`);
      const rootId = originalIdOf(target);
      const family = log.filter((e) => e.id === rootId || e.metadata[METADATA_MASKED_FROM] === rootId);
      const record = { at: this.ctx.now().toISOString(), reason };
      const redacted = family.map((e) =>
        e.with({
          message: redactMessage(e.message, marker),
          metadata: { ...withoutPayloads(e.metadata), [METADATA_REDACTION]: record },
        }),
      );
      const familyIds = new Set(family.map((e) => e.id));
      const activeSince = family.filter((e) => !e.isArchived()).map((e) => e.timestamp.getTime());
      const tainted = log
        .filter((s) => isSummaryText(s) && !familyIds.has(s.id))
        .filter((s) => {
          const covered = coveredIds(s);
          if (covered.length === 0) return true;
          if (covered.some((id) => familyIds.has(id) || id === rootId)) return true;
          return activeSince.some((t) => s.timestamp.getTime() >= t);
        })
        // A provider's compaction of the range holds the content too, and cannot be regenerated without the
        // provider: it is removed now, so the summary falls back to its text (regenerated by purgeDerived).
        .map((s) =>
          s.with({
            metadata: { ...withoutNativeCompaction(s.metadata), [METADATA_TAINTED_BY]: [...new Set([...taintedBy(s), rootId])] },
          }),
        );
      if (await rewrite([...redacted, ...tainted], sessionId, version)) {
        const report = {
          sessionId,
          redactedEventIds: redacted.map((e) => e.id),
          taintedSummaryIds: tainted.map((e) => e.id),
        };
        this.ctx.emit('eventsRewritten', {
          sessionId,
          eventIds: [...report.redactedEventIds, ...report.taintedSummaryIds],
          reason: 'redaction',
        });
        this.ctx.logger.info('event redacted', { eventId, reason, ...report });
        return report;
      }
    }
    throw new IllegalStateError(`redaction of ${eventId} lost its version race ${MAX_ATTEMPTS} times; try again`);
  }

  /** True when one of these events is a summary awaiting regeneration. */
  hasTainted(events: readonly SessionEvent[]): boolean {
    return events.some((e) => isSummaryText(e) && taintedBy(e).length > 0);
  }

  /**
   * Rewrites every tainted summary of the session (only those tainted by `eventId`'s original, when given)
   * from the events it covers, which are redacted by now.
   */
  async regenerate(
    sessionId: string,
    eventId: string | undefined,
    options: PurgeDerivedOptions = {},
  ): Promise<PurgeDerivedReport> {
    const report = await this.tryRegenerate(sessionId, eventId, options);
    if (report !== null) return report;
    throw new IllegalStateError(
      `regenerating the summaries of ${sessionId} lost its version race ${MAX_ATTEMPTS} times; try again`,
    );
  }

  /** As `regenerate`, but null when every attempt lost its version race: a compaction skips instead of throwing. */
  async tryRegenerate(
    sessionId: string,
    eventId: string | undefined,
    options: PurgeDerivedOptions = {},
  ): Promise<PurgeDerivedReport | null> {
    requireText(sessionId, 'sessionId');
    const client = options.chatClient ?? this.defaultClient;
    const rewrite = this.requireRewrite();
    // A lost race is retried with the texts already written: the model is asked once per summary.
    const texts = new Map<string, { text: string; method: 'model' | 'mechanical' }>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { version, log } = await this.read(sessionId);
      const root =
        eventId === undefined ? undefined : originalIdOf(log.find((e) => e.id === eventId) ?? idOnly(sessionId, eventId));
      const targets = log.filter(
        (e) => isSummaryText(e) && taintedBy(e).length > 0 && (root === undefined || taintedBy(e).includes(root)),
      );
      if (targets.length === 0) return { sessionId, regeneratedSummaryIds: [], method: 'none' };
      const byId = new Map(log.map((e) => [e.id, e]));
      for (const t of targets) {
        if (texts.has(t.id)) continue;
        const ids = coveredIds(t);
        const sources =
          ids.length > 0
            ? ids.map((id) => byId.get(id)).filter((e): e is SessionEvent => e !== undefined)
            : log.filter((e) => e.isArchived() && !e.isSynthetic());
        texts.set(t.id, await this.summarize(client, sources));
      }
      const now = this.ctx.now().toISOString();
      const rewritten = targets.map((t) => {
        const { text, method } = texts.get(t.id)!;
        const metadata: Record<string, unknown> = {
          ...t.metadata,
          summaryMethod: method === 'model' ? 'regenerated' : 'stub',
          regeneratedAt: now,
        };
        delete metadata[METADATA_TAINTED_BY];
        const message: Message = t.message.type === 'system' ? { type: 'system', text } : { type: 'assistant', text };
        return t.with({ message, metadata });
      });
      if (await rewrite(rewritten, sessionId, version)) {
        const ids = rewritten.map((e) => e.id);
        this.ctx.emit('eventsRewritten', { sessionId, eventIds: ids, reason: 'regeneration' });
        const methods = new Set([...texts.values()].map((t) => t.method));
        this.ctx.logger.info('tainted summaries regenerated', { sessionId, summaries: ids.length });
        return { sessionId, regeneratedSummaryIds: ids, method: methods.has('model') ? 'model' : 'mechanical' };
      }
    }
    return null;
  }

  private async summarize(
    client: ChatClient | undefined,
    sources: readonly SessionEvent[],
  ): Promise<{ text: string; method: 'model' | 'mechanical' }> {
    if (client !== undefined && sources.length > 0) {
      const outcome = await requestSummary(client, {
        system: summarySystemPrompt(DEFAULT_SUMMARY_SYSTEM_PROMPT),
        user: buildSummaryPrompt({ transcript: sources.map((e) => formatEvent(e)) }),
      });
      if (outcome.ok) return { text: outcome.text, method: 'model' };
      this.ctx.logger.warn('summary regeneration failed; writing a mechanical summary instead', { error: outcome.error.message });
    }
    return { text: mechanicalSummary(sources), method: 'mechanical' };
  }

  /**
   * What redacting `eventId` needs — the event, its original and masked copies, the summaries — read by the
   * store when it can (RedactionScopeRepository), so the cost does not grow with the log; else the whole log.
   */
  private async readRedactionScope(sessionId: string, eventId: string): Promise<{ version: number; log: SessionEvent[] }> {
    const { repository } = this.ctx;
    if (!isRedactionScopeRepository(repository)) return this.read(sessionId);
    if ((await repository.findById(sessionId)) === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const version = await repository.getEventVersion(sessionId);
    return { version, log: await repository.findRedactionScope(sessionId, eventId) };
  }

  private async read(sessionId: string): Promise<{ version: number; log: SessionEvent[] }> {
    const { repository } = this.ctx;
    if ((await repository.findById(sessionId)) === null) throw new InvalidArgumentError(`Session not found: ${sessionId}`);
    const version = await repository.getEventVersion(sessionId);
    return { version, log: await repository.findEvents(sessionId, EventFilter.all()) };
  }

  private requireRewrite(): (events: SessionEvent[], sessionId: string, version: number) => Promise<boolean> {
    const { repository } = this.ctx;
    if (!isEventRewritingRepository(repository)) {
      throw new IllegalStateError(
        'the repository does not implement rewriteEvents (EventRewritingRepository), which redaction needs',
      );
    }
    return (events, sessionId, version) => repository.rewriteEvents(sessionId, events, version);
  }
}

/**
 * The metadata without the copies of the content kept beside the Message: a framework's own form of the
 * message (`native`) and a provider's compaction payload. What stays is bookkeeping (ids, coverage, times).
 */
function withoutPayloads(metadata: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy = withoutNativeCompaction(metadata);
  delete copy[METADATA_NATIVE];
  return copy;
}

/** Stands for an event id no longer in the log (its own original). */
function idOnly(sessionId: string, id: string): SessionEvent {
  return SessionEvent.create({ sessionId, id, message: { type: 'user', text: '' } });
}
