import { searchTerms } from '../repository/eventSearch.js';

/**
 * Whether a request names a participant ("What did Caroline research?"): the test holds for a participant's
 * name (`UserMessage.name`, `AssistantMessage.name`) when its first word is a word of the request (people are
 * called by their first name; a full name holds it too). Words are split and cased as the search splits them.
 */
export function namedInQuery(query: string): (name: string) => boolean {
  const said = new Set(searchTerms(query));
  const known = new Map<string, boolean>();
  return (name) => {
    let named = known.get(name);
    if (named === undefined) {
      const first = searchTerms(name)[0];
      named = first !== undefined && said.has(first);
      known.set(name, named);
    }
    return named;
  };
}
