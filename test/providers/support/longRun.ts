/**
 * What the long runs of every integration share: 48 turns with a tool on every turn, on a SQLite file that
 * is closed and opened again half way, while a call waits for its approval (a process restart), with the acceptance rig's trigger, strategy and
 * window; the figures each run reports; and the check that a history read never holds a made-up result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultSessionService, SqliteSessionRepository } from 'session-compaction';
import { silent } from '../../chat/support/harness.js';

export const LONG_TURNS = 48;
/**
 * The run restarts (new repository, service and integration objects on the same file) in the middle of this
 * turn, while its call waits for a human's approval.
 */
export const RESTART_TURN = 27;

/** The words of the placeholder a prompt gets for a call the user moved on from; never on a history read. */
export const PLACEHOLDER = '[no result was recorded for this tool call]';
export const holdsPlaceholder = (value: unknown): boolean => JSON.stringify(value ?? null).includes(PLACEHOLDER);

export interface LongRunFigures {
  integration: string;
  turns: number;
  requests: number;
  refused: number;
  compactions: number;
  historyReads: number;
  inventedOnRead: number;
  /** Prompts that carried a placeholder (each for a call the user moved on from). */
  placeholdersSent: number;
}

/** With LONG_RUN_FIGURES=1 the figures of each run are printed, for the integration docs. */
export function reportFigures(figures: LongRunFigures): void {
  if (process.env.LONG_RUN_FIGURES === '1') process.stdout.write(`LONG RUN ${JSON.stringify(figures)}\n`);
}

/** A SQLite file and a service over it that can be "restarted": closed, and opened anew on the same file. */
export class RestartableStore {
  readonly dir = mkdtempSync(join(tmpdir(), 'long-run-'));
  repository!: SqliteSessionRepository;
  service!: DefaultSessionService;
  compactions = 0;
  restarts = 0;

  constructor() {
    this.open();
  }

  private open(): void {
    this.repository = new SqliteSessionRepository({ path: join(this.dir, 'sessions.db') });
    this.service = new DefaultSessionService(this.repository, { logger: silent });
    this.service.events.on('compactionCompleted', (e) => {
      if (e.result.archivedEvents.length > 0) this.compactions++;
    });
  }

  restart(): void {
    this.repository.close();
    this.restarts++;
    this.open();
  }

  close(): void {
    this.repository.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What kind of tool a turn uses, in a fixed rotation. */
export type TurnKind = 'server' | 'client' | 'approval' | 'streamed';
export const turnKind = (turn: number): TurnKind => (['streamed', 'server', 'client', 'approval'] as const)[turn % 4]!;

/** Turns on which the user moves on instead of answering the client-side tool (its result comes late, next turn). */
export const ABANDONED_TURNS = new Set([10, 30]);
