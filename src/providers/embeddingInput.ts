/**
 * Cuts an embedding input to at most `max` UTF-16 units, at a code-point boundary (never between the halves of a
 * surrogate pair): one huge tool output must not exceed a model's input limit or dominate a batch's cost.
 */
export function cutEmbeddingInput(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end);
}
