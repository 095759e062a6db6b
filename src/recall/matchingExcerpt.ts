import { processSearchTerm } from './searchTerms.js';

/** Between two quoted pieces of one message that are not next to each other, and where its start or end is left out. */
export const EXCERPT_MARKER = '[…]';

/** Pieces longer than this are split further (a long JSON line, a paragraph without line breaks). */
const MAX_PIECE_CHARS = 240;

/** The query's search terms, processed as the index processes words (stemmed, stop words dropped). */
export function queryTerms(query: string): Set<string> {
  const terms = new Set<string>();
  for (const word of query.match(/[\p{L}\p{N}_]+/gu) ?? []) {
    const term = processSearchTerm(word);
    if (term !== null) terms.add(term);
  }
  return terms;
}

/**
 * A long message cut to the pieces that hold the query's words — its lines, or its sentences (or clauses of a
 * long line) — in their order, with a marker wherever something is left out, so that `fits(excerpt)` holds.
 * The pieces holding the most distinct query terms are taken first. Null when no piece matches or none fits:
 * the caller then falls back to a head + tail excerpt. The excerpt is never the whole message, so a reader
 * (and the bench's evidence measure) can always tell it from the turn itself.
 */
export function matchingExcerpt(text: string, terms: ReadonlySet<string>, fits: (candidate: string) => boolean): string | null {
  if (terms.size === 0) return null;
  const pieces = splitPieces(text);
  const scored = pieces
    .map((piece, index) => ({ index, score: matches(piece, terms) }))
    .filter((p) => p.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen: number[] = [];
  let best: string | null = null;
  for (const { index } of scored) {
    const candidate = render(
      pieces,
      [...chosen, index].sort((a, b) => a - b),
    );
    if (!fits(candidate)) continue;
    chosen.push(index);
    best = candidate;
  }
  return best;
}

function matches(piece: string, terms: ReadonlySet<string>): number {
  const found = new Set<string>();
  for (const word of piece.match(/[\p{L}\p{N}_]+/gu) ?? []) {
    const term = processSearchTerm(word);
    if (term !== null && terms.has(term)) found.add(term);
  }
  return found.size;
}

/** Lines, and within a long line its sentences, then its clauses (`, `): each piece keeps its own text. */
function splitPieces(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    if (line.length <= MAX_PIECE_CHARS) {
      out.push(line.trim());
      continue;
    }
    for (const sentence of line.split(/(?<=[.!?])\s+/)) {
      if (sentence.length <= MAX_PIECE_CHARS) out.push(sentence.trim());
      else for (const clause of sentence.split(/(?<=,)\s*/)) if (clause.trim() !== '') out.push(clause.trim());
    }
  }
  return out;
}

function render(pieces: readonly string[], chosen: readonly number[]): string {
  const parts: string[] = [];
  let previous = -1;
  for (const index of chosen) {
    if (index > previous + 1) parts.push(EXCERPT_MARKER);
    parts.push(pieces[index]!);
    previous = index;
  }
  if (previous < pieces.length - 1) parts.push(EXCERPT_MARKER);
  return parts.join(' ');
}
