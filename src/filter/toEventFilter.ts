import { invalid } from '../validation/inputs.js';
import { EventFilter, type EventFilterOptions } from './EventFilter.js';

/**
 * A filter argument from any caller: an EventFilter, its options as a plain object (validated by
 * `EventFilter.of`), or nothing (`EventFilter.all()`). Anything else is an InvalidArgumentError.
 */
export function toEventFilter(value: unknown, field = 'filter'): EventFilter {
  if (value === undefined || value === null) return EventFilter.all();
  if (value instanceof EventFilter) return value;
  if (typeof value === 'object' && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) {
    return EventFilter.of(value as EventFilterOptions);
  }
  throw invalid(field, 'an EventFilter or filter options', value);
}
