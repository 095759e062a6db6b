import { type ChatClient, createDefaultLogger } from 'session-compaction';
import type { ChatRequest } from 'session-compaction/spi';

/** A scripted summariser: answers in order (the last answer repeats), records every request. */
export class ScriptedChatClient implements ChatClient {
  readonly requests: ChatRequest[] = [];
  private readonly answers: Array<string | null | Error>;
  readonly model: string | undefined;

  constructor(answers: Array<string | null | Error> = [SUMMARY], options: { model?: string; delayMs?: number } = {}) {
    this.answers = answers;
    this.model = options.model;
    this.delayMs = options.delayMs ?? 0;
  }

  private readonly delayMs: number;

  async call(request: ChatRequest): Promise<string | null> {
    this.requests.push(request);
    const answer = this.answers[Math.min(this.requests.length - 1, this.answers.length - 1)];
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    if (answer instanceof Error) throw answer;
    return answer ?? null;
  }

  get callCount(): number {
    return this.requests.length;
  }
}

export const SUMMARY = 'Summary: the user asked about Java and got answers.';

/** Strategies warn on failed summaries; tests keep the output clean. */
export const silentLogger = createDefaultLogger({ silent: true });
