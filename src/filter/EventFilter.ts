import { InvalidArgumentError } from '../errors.js';
import { invalid, optionalBoolean, requireDate, requireStorableString } from '../validation/inputs.js';
import { isMessageType, type MessageType } from '../session/Message.js';
import type { SessionEvent } from '../session/SessionEvent.js';

export type MatchMode = 'any' | 'all';

export interface EventFilterOptions {
  from?: Date;
  to?: Date;
  messageTypes?: readonly MessageType[];
  excludeSynthetic?: boolean;
  excludeArchived?: boolean;
  lastN?: number;
  keyword?: string;
  keywords?: readonly string[];
  matchMode?: MatchMode;
  /** Developer-authored only: a RegExp from untrusted input risks catastrophic backtracking (ReDoS). */
  pattern?: RegExp;
  page?: number;
  pageSize?: number;
  branch?: string;
}

/** `B` sees root events, its own branch and its dot-path ancestors; siblings and children stay hidden. */
export function isBranchVisible(filterBranch: string, eventBranch: string | null): boolean {
  return eventBranch === null || filterBranch === eventBranch || filterBranch.startsWith(eventBranch + '.');
}

function optionalInt(value: number | undefined | null, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new InvalidArgumentError(`${name} must be an integer`);
  return value;
}

function optionalDate(value: Date | undefined | null, name: string): Date | undefined {
  if (value === undefined || value === null) return undefined;
  return requireDate(value, name);
}

/** A search term: any string, as stored texts may hold any (a lone surrogate half matches half of a pair). */
function searchTerm(value: unknown, name: string): string {
  if (typeof value !== 'string') throw invalid(name, 'a string', value);
  return value;
}

/**
 * Immutable read-side selection of events. The constructor normalises and validates in a fixed order (the one
 * API.md lists), so that the first failing rule decides the error message.
 */
export class EventFilter {
  static readonly DEFAULT_PAGE_SIZE = 10;

  readonly from: Date | undefined;
  readonly to: Date | undefined;
  readonly messageTypes: readonly MessageType[] | undefined;
  readonly excludeSynthetic: boolean;
  readonly excludeArchived: boolean;
  readonly lastN: number | undefined;
  readonly keyword: string | undefined;
  readonly keywords: readonly string[] | undefined;
  readonly matchMode: MatchMode | undefined;
  readonly pattern: RegExp | undefined;
  readonly page: number | undefined;
  readonly pageSize: number | undefined;
  readonly branch: string | undefined;

  private constructor(o: EventFilterOptions) {
    this.from = optionalDate(o.from, 'from');
    this.to = optionalDate(o.to, 'to');

    const keyword = o.keyword === undefined || o.keyword === null ? undefined : searchTerm(o.keyword, 'keyword');
    this.keyword = keyword === undefined || keyword.trim() === '' ? undefined : keyword.toLowerCase();

    if (o.keywords !== undefined && o.keywords !== null && !Array.isArray(o.keywords)) {
      throw invalid('keywords', 'an array of strings', o.keywords);
    }
    const keywords = (o.keywords ?? [])
      .map((k, i) => searchTerm(k, `keywords[${i}]`))
      .filter((k) => k.trim() !== '')
      .map((k) => k.toLowerCase());
    this.keywords = keywords.length === 0 ? undefined : Object.freeze(keywords);

    if (o.matchMode !== undefined && o.matchMode !== null && o.matchMode !== 'any' && o.matchMode !== 'all') {
      throw new InvalidArgumentError("matchMode must be 'any' or 'all'");
    }
    this.matchMode = this.keywords === undefined ? undefined : (o.matchMode ?? 'any');

    if (o.messageTypes !== undefined && o.messageTypes !== null && !Array.isArray(o.messageTypes)) {
      throw invalid('messageTypes', 'an array', o.messageTypes);
    }
    const types = o.messageTypes === undefined || o.messageTypes === null ? [] : [...new Set(o.messageTypes)];
    for (const t of types) if (!isMessageType(t)) throw new InvalidArgumentError(`unknown message type: ${String(t)}`);
    this.messageTypes = types.length === 0 ? undefined : Object.freeze(types);

    const lastN = optionalInt(o.lastN, 'lastN');
    let page = optionalInt(o.page, 'page');
    const pageSize = optionalInt(o.pageSize, 'pageSize');
    if (lastN !== undefined && lastN <= 0) throw new InvalidArgumentError('lastN must be greater than 0');
    if (lastN !== undefined && (pageSize !== undefined || page !== undefined)) {
      throw new InvalidArgumentError('lastN and page/pageSize are mutually exclusive');
    }
    if (pageSize !== undefined && pageSize <= 0) throw new InvalidArgumentError('pageSize must be greater than 0');
    if (page !== undefined && page < 0) throw new InvalidArgumentError('page must be >= 0');
    if (page !== undefined && pageSize === undefined) throw new InvalidArgumentError('pageSize must be set when page is set');
    if (pageSize !== undefined && page === undefined) page = 0;
    this.lastN = lastN;
    this.page = page;
    this.pageSize = pageSize;

    if (o.pattern !== undefined && o.pattern !== null) {
      if (!(o.pattern instanceof RegExp)) {
        throw new InvalidArgumentError('pattern must be a RegExp (strings are not accepted: regexes must be developer-authored)');
      }
      // A global/sticky RegExp keeps lastIndex between test() calls; a stateless copy matches every event alike.
      this.pattern = new RegExp(o.pattern.source, o.pattern.flags.replace(/[gy]/g, ''));
    } else {
      this.pattern = undefined;
    }

    this.branch = o.branch === undefined || o.branch === null ? undefined : requireStorableString(o.branch, 'branch');
    this.excludeSynthetic = optionalBoolean(o.excludeSynthetic, 'excludeSynthetic') === true;
    this.excludeArchived = optionalBoolean(o.excludeArchived, 'excludeArchived') === true;
    Object.freeze(this);
  }

  static of(options: EventFilterOptions = {}): EventFilter {
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw invalid('filter options', 'an object', options);
    }
    return new EventFilter(options ?? {});
  }

  /** No criteria: every event, archived ones included. */
  static all(): EventFilter {
    return new EventFilter({});
  }
  /** The active window: archived events excluded. */
  static active(): EventFilter {
    return new EventFilter({ excludeArchived: true });
  }
  static lastN(n: number): EventFilter {
    return new EventFilter({ lastN: n });
  }
  static realOnly(): EventFilter {
    return new EventFilter({ excludeSynthetic: true });
  }
  static keywordSearch(keyword: string, page = 0, pageSize = EventFilter.DEFAULT_PAGE_SIZE): EventFilter {
    return new EventFilter({ keyword, page, pageSize });
  }
  static keywordsSearch(terms: readonly string[], matchMode: MatchMode = 'any'): EventFilter {
    return new EventFilter({ keywords: terms, matchMode, page: 0, pageSize: EventFilter.DEFAULT_PAGE_SIZE });
  }
  static patternSearch(pattern: RegExp): EventFilter {
    return new EventFilter({ pattern, page: 0, pageSize: EventFilter.DEFAULT_PAGE_SIZE });
  }
  static forBranch(branch: string): EventFilter {
    return new EventFilter({ branch });
  }

  toOptions(): EventFilterOptions {
    const o: EventFilterOptions = {};
    if (this.from !== undefined) o.from = this.from;
    if (this.to !== undefined) o.to = this.to;
    if (this.messageTypes !== undefined) o.messageTypes = this.messageTypes;
    if (this.excludeSynthetic) o.excludeSynthetic = true;
    if (this.excludeArchived) o.excludeArchived = true;
    if (this.lastN !== undefined) o.lastN = this.lastN;
    if (this.keyword !== undefined) o.keyword = this.keyword;
    if (this.keywords !== undefined) o.keywords = this.keywords;
    if (this.matchMode !== undefined) o.matchMode = this.matchMode;
    if (this.pattern !== undefined) o.pattern = this.pattern;
    if (this.page !== undefined) o.page = this.page;
    if (this.pageSize !== undefined) o.pageSize = this.pageSize;
    if (this.branch !== undefined) o.branch = this.branch;
    return o;
  }

  /** A copy with some options replaced (then re-validated). */
  with(changes: EventFilterOptions): EventFilter {
    return new EventFilter({ ...this.toOptions(), ...changes });
  }

  /**
   * `other`'s set fields win, the two exclusion flags are OR-ed. The result is re-validated, so merging
   * a paginated filter with a lastN filter throws "mutually exclusive".
   */
  merge(other: EventFilter | null | undefined): EventFilter {
    if (other === null || other === undefined) return this;
    const a = this.toOptions();
    const b = other.toOptions();
    return new EventFilter({
      ...a,
      ...b,
      excludeSynthetic: this.excludeSynthetic || other.excludeSynthetic,
      excludeArchived: this.excludeArchived || other.excludeArchived,
    });
  }

  /** Per-event criteria only; lastN and paging are collection-level (see `applyEventWindow`). */
  matches(event: SessionEvent): boolean {
    if (this.excludeSynthetic && event.isSynthetic()) return false;
    if (this.excludeArchived && event.isArchived()) return false;
    const time = event.timestamp.getTime();
    if (this.from !== undefined && time < this.from.getTime()) return false;
    if (this.to !== undefined && time > this.to.getTime()) return false;
    if (this.messageTypes !== undefined && !this.messageTypes.includes(event.messageType)) return false;
    if (this.keyword !== undefined || this.keywords !== undefined || this.pattern !== undefined) {
      const text = event.text;
      if (text === null) return false;
      if (!this.matchesText(text)) return false;
    }
    if (this.branch !== undefined && !isBranchVisible(this.branch, event.branch)) return false;
    return true;
  }

  /** The text criteria alone (keyword, keywords, pattern), for stores that evaluate the rest themselves. */
  matchesText(text: string): boolean {
    const lower = this.keyword !== undefined || this.keywords !== undefined ? text.toLowerCase() : text;
    if (this.keyword !== undefined && !lower.includes(this.keyword)) return false;
    if (this.keywords !== undefined) {
      const ok =
        this.matchMode === 'all' ? this.keywords.every((k) => lower.includes(k)) : this.keywords.some((k) => lower.includes(k));
      if (!ok) return false;
    }
    if (this.pattern !== undefined && !this.pattern.test(text)) return false;
    return true;
  }

  /** True when lastN or paging is set, i.e. the repository must slice after matching. */
  hasWindow(): boolean {
    return this.lastN !== undefined || this.pageSize !== undefined;
  }

  equals(other: unknown): boolean {
    if (!(other instanceof EventFilter)) return false;
    const a = this.toOptions();
    const b = other.toOptions();
    return JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
  }
}

function normalise(o: EventFilterOptions): Record<string, unknown> {
  return {
    ...o,
    from: o.from?.getTime(),
    to: o.to?.getTime(),
    pattern: o.pattern === undefined ? undefined : `/${o.pattern.source}/${o.pattern.flags}`,
  };
}

/** lastN keeps the newest N matches; a page is counted from the oldest match (page 0 = oldest). */
export function applyEventWindow<T>(matches: readonly T[], filter: EventFilter): T[] {
  if (filter.lastN !== undefined) {
    return matches.length > filter.lastN ? matches.slice(matches.length - filter.lastN) : [...matches];
  }
  if (filter.pageSize !== undefined) {
    const from = (filter.page ?? 0) * filter.pageSize;
    if (from >= matches.length) return [];
    return matches.slice(from, from + filter.pageSize);
  }
  return [...matches];
}
