import { maskExcerpt } from '../compaction/strategies/ObservationMaskingCompactionStrategy.js';
import { formatMessage } from '../session/formatEvent.js';
import type { Message } from '../session/Message.js';
import type { TokenCountEstimator } from '../tokens/TokenCountEstimator.js';

/** One message of the history (`item`: its event, or the pending message) with what it costs. */
export interface Costed<T> {
  item: T;
  message: Message;
  tokens: number;
}

/**
 * `text` cut to a head + tail excerpt with a visible marker so that `fits(excerpt)` holds, or null when not
 * even the marker alone fits. Binary search over the length: token counts are monotone enough in it.
 */
export function shortenText(text: string, fits: (candidate: string) => boolean): string | null {
  if (fits(text)) return text;
  let low = 0;
  let high = text.length - 1;
  let best: string | null = null;
  while (low <= high) {
    const mid = Math.floor((low + high) / 2);
    const candidate = maskExcerpt(text, mid);
    if (candidate.length <= mid && fits(candidate)) {
      best = candidate;
      low = mid + 1;
    } else {
      high = mid - 1;
    }
  }
  return best;
}

/**
 * A copy of `message` whose rendering costs at most `maxTokens`, its longest text shortened with a marker;
 * null when that is impossible (tool-call arguments are never cut: they must stay valid JSON).
 */
export function shortenMessage(message: Message, maxTokens: number, estimator: TokenCountEstimator): Message | null {
  const cost = (m: Message) => estimator.estimate(formatMessage(m));
  if (cost(message) <= maxTokens) return message;
  switch (message.type) {
    case 'user':
    case 'system': {
      const text = shortenText(message.text, (t) => cost({ type: message.type, text: t }) <= maxTokens);
      return text === null ? null : { type: message.type, text };
    }
    case 'assistant': {
      if (message.text === null) return null;
      const text = shortenText(message.text, (t) => cost({ ...message, text: t }) <= maxTokens);
      return text === null ? null : { ...message, text };
    }
    case 'tool': {
      if (message.responses.length === 0) return null;
      let longest = 0;
      message.responses.forEach((r, i) => {
        if (r.responseData.length > message.responses[longest]!.responseData.length) longest = i;
      });
      const withData = (data: string): Message => ({
        type: 'tool',
        responses: message.responses.map((r, i) => (i === longest ? { ...r, responseData: data } : r)),
      });
      const data = shortenText(message.responses[longest]!.responseData, (d) => cost(withData(d)) <= maxTokens);
      return data === null ? null : withData(data);
    }
  }
}

/**
 * The newest items whose total cost fits `budget`, in their original order: older ones are dropped first. When
 * not even the newest fits, it is shortened (one message, with a marker). Leading tool results whose call
 * was dropped are dropped too: a provider rejects a tool result without its call.
 */
export function fitNewest<T>(
  items: readonly Costed<T>[],
  budget: number,
  estimator: TokenCountEstimator,
): { kept: Costed<T>[]; shortened: boolean } {
  const kept: Costed<T>[] = [];
  let used = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const candidate = items[i]!;
    if (used + candidate.tokens <= budget) {
      kept.unshift(candidate);
      used += candidate.tokens;
      continue;
    }
    if (kept.length === 0) {
      const message = shortenMessage(candidate.message, budget, estimator);
      if (message !== null) {
        const tokens = estimator.estimate(formatMessage(message));
        kept.unshift({ item: candidate.item, message, tokens });
        return { kept: dropOrphanedToolResults(kept), shortened: true };
      }
    }
    break;
  }
  return { kept: dropOrphanedToolResults(kept), shortened: false };
}

/** Tool results at the start of a kept suffix lost their call with the older messages. */
function dropOrphanedToolResults<T>(kept: Costed<T>[]): Costed<T>[] {
  let start = 0;
  while (start < kept.length && kept[start]!.message.type === 'tool') start++;
  return start === 0 ? kept : kept.slice(start);
}
