export { EventFilter, applyEventWindow, isBranchVisible, type EventFilterOptions, type MatchMode } from './EventFilter.js';
export { MessageFilter } from './MessageFilter.js';
