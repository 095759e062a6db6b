/**
 * The "lost in compaction" curve: evidence events grouped by their age when the probe is asked — how many
 * events of the log came after them — each group's share present in the prompt. Without recall it falls as
 * compaction archives older events; with recall it should stay flat.
 */
export const EVIDENCE_AGE_EDGES: readonly number[] = Object.freeze([0, 25, 50, 100, 200, 400]);

/** Evidence events of one age group, and how many of them the prompt held whole. */
export interface EvidenceAgeCount {
  turns: number;
  present: number;
}

/** One group per edge: [edge, next edge), the last open-ended. */
export function emptyEvidenceAges(): EvidenceAgeCount[] {
  return EVIDENCE_AGE_EDGES.map(() => ({ turns: 0, present: 0 }));
}

/** The group of an age (events after the evidence event when the probe is asked). */
export function evidenceAgeGroup(age: number): number {
  let group = 0;
  for (let i = 0; i < EVIDENCE_AGE_EDGES.length; i++) if (age >= EVIDENCE_AGE_EDGES[i]!) group = i;
  return group;
}

/** `0–24`, …, `400+`: the label of a group. */
export function evidenceAgeLabel(group: number): string {
  const from = EVIDENCE_AGE_EDGES[group]!;
  const next = EVIDENCE_AGE_EDGES[group + 1];
  return next === undefined ? `${from}+` : `${from}–${next - 1}`;
}

/** Sums per-run groups into one. */
export function addEvidenceAges(into: EvidenceAgeCount[], from: readonly EvidenceAgeCount[]): EvidenceAgeCount[] {
  from.forEach((c, i) => {
    into[i]!.turns += c.turns;
    into[i]!.present += c.present;
  });
  return into;
}
