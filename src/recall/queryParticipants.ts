import { MAX_SEARCH_CHARACTERS } from '../repository/eventSearch.js';

/** Letters, digits and combining marks: a word of a request or of a name (as the search indexes split them). */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

function words(text: string): string[] {
  return [...text.toLowerCase().matchAll(WORD)].map((m) => m[0]);
}

/**
 * Whether a request names a participant ("What did Caroline research?"): the test holds for a participant's
 * name (`UserMessage.name`, `AssistantMessage.name`) when every word of the name is a word of the request, or
 * its first word is (people are called by their first name). Case is ignored; punctuation separates words.
 */
export function namedInQuery(query: string): (name: string) => boolean {
  const said = new Set(words(query.slice(0, MAX_SEARCH_CHARACTERS)));
  const known = new Map<string, boolean>();
  return (name) => {
    let named = known.get(name);
    if (named === undefined) {
      const parts = words(name);
      named = parts.length > 0 && (said.has(parts[0]!) || parts.every((p) => said.has(p)));
      known.set(name, named);
    }
    return named;
  };
}
