import type { ModelMessage } from 'ai';
import { InvalidArgumentError, requireText } from '../../errors.js';
import { EventFilter } from '../../filter/EventFilter.js';
import { defaultLogger, type Logger } from '../../logging.js';
import { accessDenied } from '../../service/sessionAccess.js';
import { SessionMemory } from '../../chat/SessionMemory.js';
import { withArchivedCalls } from '../../chat/archivedToolCalls.js';
import type {
  SessionMemoryOptions,
  SessionMemoryRequestBase,
  SessionMemoryResponse,
  SessionMemoryService,
} from '../../chat/SessionMemoryTypes.js';
import { externalizeAttachments, type AttachmentStore } from './AiSdkAttachments.js';
import { AiSdkChatProvider, type AiSdkChatTypes, type AiSdkRunResult } from './AiSdkChatProvider.js';
import { toModelMessages, type ModelPrompt, type PairToolResultsOptions } from './AiSdkMessages.js';
import { toUIMessages, type ToUIMessagesOptions, type UIMessageLike } from './AiSdkUIMessages.js';

export interface AiSdkSessionMemoryOptions
  extends Omit<SessionMemoryOptions<AiSdkChatTypes>, 'client' | 'provider' | 'streamUsage' | 'model'>, PairToolResultsOptions {
  /**
   * Where inline images and files go. With a store, the bytes of new messages and of generated files are put
   * there and the log (and the prompt) keeps the URL it returns; without one they are stored inline, base64.
   */
  attachments?: AttachmentStore;
}

/** One turn: the session, and the NEW messages of this turn (the user message, or tool results / approvals). */
export type AiSdkTurnRequest = SessionMemoryRequestBase<ModelMessage>;

/** What a turn stored: the appended events, the compaction it ran, whether its context held a summary. */
export type AiSdkStoredTurn = SessionMemoryResponse<AiSdkChatTypes>;

/** The parts of a `generateText` result the memory reads. */
export type GenerateTextResultLike = AiSdkRunResult;

/** The parts of a `streamText` result the memory reads; they settle when the stream has been consumed. */
export interface StreamTextResultLike {
  responseMessages: PromiseLike<ModelMessage[]>;
  steps: PromiseLike<AiSdkRunResult['steps']>;
  finishReason: PromiseLike<string>;
}

export interface AiSdkStreamTurn<R> {
  /** The application's `streamText` result, to stream to the client. */
  result: R;
  /** Settles once the stream has finished and the run is stored (and compacted); rejects if storing failed. */
  stored: Promise<AiSdkStoredTurn>;
}

/**
 * Session memory for the Vercel AI SDK. Each turn loads the session's active window, appends the new user
 * message (or tool results), hands the application `{ instructions, messages }` for its own `generateText` /
 * `streamText` call (any model, tools, `stopWhen`...), then appends every message of the run — assistant
 * text and reasoning, each tool call and result of every step — and compacts with the configured trigger and
 * strategy. Sessions, ownership, event ids, the window guard and calibration (from the first step's input
 * tokens) are SessionMemory's.
 *
 * ```ts
 * const result = await memory.generateText({ sessionId, messages: [{ role: 'user', content: text }] }, (prompt) =>
 *   generateText({ model, tools, stopWhen: stepCountIs(5), ...prompt }));
 * ```
 */
export class AiSdkSessionMemory {
  private readonly memory: SessionMemory<AiSdkChatTypes>;
  private readonly service: SessionMemoryService;
  private readonly eventFilter: EventFilter;
  private readonly options: PairToolResultsOptions;
  private readonly logger: Logger;
  private readonly attachments: AttachmentStore | undefined;

  constructor(options: AiSdkSessionMemoryOptions) {
    if (options === null || options === undefined) throw new InvalidArgumentError('options must not be null');
    const { missingToolOutput, attachments, ...rest } = options;
    if (attachments !== undefined && (attachments === null || typeof attachments.put !== 'function')) {
      throw new InvalidArgumentError('attachments must have a put function');
    }
    this.attachments = attachments;
    this.options = missingToolOutput === undefined ? {} : { missingToolOutput };
    // The model is the application's choice per call; SessionMemory's model name is unused here.
    this.memory = new SessionMemory({ ...rest, model: 'ai-sdk', provider: new AiSdkChatProvider(this.options) });
    this.service = options.sessionService;
    this.eventFilter = this.memory.eventFilter;
    this.logger = options.logger ?? defaultLogger();
  }

  /** One turn through `generateText` (or anything returning its result shape); returns the call's own result. */
  async generateText<R extends GenerateTextResultLike>(
    request: AiSdkTurnRequest,
    run: (prompt: ModelPrompt) => PromiseLike<R>,
  ): Promise<R> {
    if (typeof run !== 'function') throw new InvalidArgumentError('run must be a function');
    const response = await this.memory.call({
      ...(await this.withAttachments(request)),
      run: async (prompt) => this.storedForm(request.sessionId, await run(prompt)),
    });
    return (response.message as AiSdkRunResult & { original: R }).original;
  }

  /**
   * One turn through `streamText`: resolves with the result as soon as the call has started, so it can be
   * streamed; the run is stored when the stream finishes (`stored`). On serverless platforms keep the function
   * alive until `stored` settles (e.g. `waitUntil(stored)`). A stream that fails or is aborted stores no reply.
   */
  async streamText<R extends StreamTextResultLike>(
    request: AiSdkTurnRequest,
    run: (prompt: ModelPrompt) => R,
  ): Promise<AiSdkStreamTurn<R>> {
    if (typeof run !== 'function') throw new InvalidArgumentError('run must be a function');
    let started!: (result: R) => void;
    const result = new Promise<R>((resolve) => (started = resolve));
    const stored = this.withAttachments(request).then((prepared) =>
      this.memory.call({
        ...prepared,
        run: async (prompt) => {
          const streaming = run(prompt);
          started(streaming);
          const [responseMessages, steps, finishReason] = await Promise.all([
            streaming.responseMessages,
            streaming.steps,
            streaming.finishReason,
          ]);
          return this.storedForm(request.sessionId, { responseMessages, steps, finishReason });
        },
      }),
    );
    // Nobody may be listening to `stored` after the response went out: a failure is logged, never unhandled.
    stored.catch((error: unknown) =>
      this.logger.error('the streamed turn could not be stored', { sessionId: request?.sessionId, error: String(error) }),
    );
    return { result: await Promise.race([result, stored.then(() => result)]), stored };
  }

  private async withAttachments(request: AiSdkTurnRequest): Promise<AiSdkTurnRequest> {
    if (this.attachments === undefined || request === null || request === undefined || !Array.isArray(request.messages))
      return request;
    return { ...request, messages: await externalizeAttachments(request.messages, this.attachments, request.sessionId) };
  }

  /** The run as it is stored (generated files put in the attachment store), keeping the caller's own result. */
  private async storedForm<R extends AiSdkRunResult>(sessionId: string, result: R): Promise<AiSdkRunResult & { original: R }> {
    const responseMessages =
      this.attachments === undefined
        ? result.responseMessages
        : await externalizeAttachments(result.responseMessages, this.attachments, sessionId);
    return { responseMessages, steps: result.steps, finishReason: result.finishReason, original: result };
  }

  /**
   * The active window as `{ instructions, messages }`, as it is stored: a tool call still waiting for its
   * result (a client-side tool, an approval) comes back as it is, never with a result made up for it.
   */
  async history(sessionId: string, options: { userId?: string } = {}): Promise<ModelPrompt> {
    const events = await this.readable(sessionId, options.userId, this.eventFilter.merge(EventFilter.active()));
    return toModelMessages(await withArchivedCalls(this.service, sessionId, events));
  }

  /**
   * The conversation as `useChat` UI messages, for a page reload: every stored turn, archived ones included
   * (the user sees the whole conversation, the model only the active window); summaries are left out.
   */
  async uiMessages(sessionId: string, options: ToUIMessagesOptions & { userId?: string } = {}): Promise<UIMessageLike[]> {
    const { userId, ...uiOptions } = options;
    return toUIMessages(await this.readable(sessionId, userId, EventFilter.all()), uiOptions);
  }

  private async readable(sessionId: string, userId: string | undefined, filter: EventFilter) {
    requireText(sessionId, 'sessionId');
    const session = await this.service.findById(sessionId);
    if (session === null) return [];
    if (userId !== undefined && session.userId !== userId) throw accessDenied(sessionId, userId);
    return this.service.getEvents(sessionId, filter);
  }
}
