import { ContextAssembler, Messages, type AssembledContext, type Message } from 'session-compaction';
import { formatMessage } from 'session-compaction/spi';
import { count, html, type Html } from '../html.js';
import { notice, page } from '../layout.js';
import { requireParam, requireSnapshot, StudioError } from '../sessionData.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';
import { eventList } from './eventList.js';

export interface PromptInputs {
  sessionId: string;
  question: string | null;
  system: string | null;
  maxTokens: number;
  reserveTokens: number;
}

function integer(params: URLSearchParams, name: string, fallback: number, min: number): number {
  const raw = params.get(name);
  if (raw === null || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new StudioError(400, `${name} must be an integer >= ${min}`);
  return n;
}

export function promptInputs(ctx: StudioContext, params: URLSearchParams): PromptInputs {
  const q = params.get('q')?.trim() ?? '';
  const system = params.get('system')?.trim() ?? '';
  return {
    sessionId: requireParam(params, 'id'),
    question: q === '' ? null : q,
    system: system === '' ? null : system,
    maxTokens: integer(params, 'max', ctx.contextWindowTokens, 1),
    reserveTokens: integer(params, 'reserve', 0, 0),
  };
}

/**
 * What the model would see now: ContextAssembler with the studio's retriever and the configured recall
 * settings, the typed question as the incoming (not yet stored) user message and the recall query.
 */
export async function assemblePrompt(ctx: StudioContext, inputs: PromptInputs): Promise<AssembledContext> {
  const assembler = new ContextAssembler({
    sessionService: ctx.service,
    retriever: ctx.retriever,
    tokenCountEstimator: ctx.estimator,
  });
  return assembler.assemble({
    sessionId: inputs.sessionId,
    maxTokens: inputs.maxTokens,
    reserveTokens: inputs.reserveTokens,
    recall: ctx.recall,
    ...(inputs.system !== null ? { system: [Messages.system(inputs.system)] } : {}),
    ...(inputs.question !== null ? { query: inputs.question, pending: [Messages.user(inputs.question)] } : {}),
  });
}

/** The budget's anatomy as one bar: system, recall, history, reserve, and what is left. */
function anatomyBar(context: AssembledContext, inputs: PromptInputs): Html {
  const parts: [string, number][] = [
    ['system', context.tokens.system],
    ['recall', context.tokens.recall],
    ['history', context.tokens.history],
    ['reserve', inputs.reserveTokens],
    ['free', Math.max(0, inputs.maxTokens - context.tokens.total - inputs.reserveTokens)],
  ];
  let x = 0;
  const rects = parts.map(([name, tokens]) => {
    const w = (tokens / inputs.maxTokens) * 1000;
    const r = html`<rect class="part-${name}" x="${x.toFixed(2)}" width="${w.toFixed(2)}" height="24"
      ><title>${name}: ${count(tokens)} tokens</title></rect
    >`;
    x += w;
    return r;
  });
  return html`<div class="anatomy">
    <svg viewBox="0 0 1000 24" preserveAspectRatio="none" role="img" aria-label="prompt anatomy">${rects}</svg>
    <ul class="legend">
      ${parts.map(
        ([name, tokens]) =>
          html`<li class="part-${name}" data-part="${name}" data-tokens="${tokens}">
            <i></i>${name} <strong>${count(tokens)}</strong> (${((tokens / inputs.maxTokens) * 100).toFixed(1)} %)
          </li>`,
      )}
      <li data-part="total" data-tokens="${context.tokens.total}">
        sent <strong>${count(context.tokens.total)}</strong> of ${count(inputs.maxTokens)}
      </li>
    </ul>
  </div>`;
}

function promptMessages(messages: readonly Message[], ctx: StudioContext): Html {
  return html`<ol class="prompt">
    ${messages.map((m) => {
      const text = formatMessage(m);
      return html`<li class="role-${m.type}">
        <div class="meta">
          <span class="role">${m.type}</span> <span class="tokens">${count(ctx.estimator.estimate(text))} tokens</span>
        </div>
        <pre class="text">${text}</pre>
      </li>`;
    })}
  </ol>`;
}

export async function promptView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const inputs = promptInputs(ctx, req.params);
  const { events } = await requireSnapshot(ctx, inputs.sessionId);
  let context: AssembledContext | null = null;
  let failure: string | null = null;
  try {
    context = await assemblePrompt(ctx, inputs);
  } catch (error) {
    failure = (error as Error).message;
  }
  const recalled = new Set(context?.recalled.map((e) => e.id) ?? []);
  const sent = new Set(context?.activeEvents.map((e) => e.id) ?? []);
  const form = html`<form class="prompt-form" method="get" action="/prompt">
    <input type="hidden" name="id" value="${inputs.sessionId}" />
    <label class="wide">Question <input name="q" value="${inputs.question ?? ''}" placeholder="the next user message" /></label>
    <label class="wide">System prompt <textarea name="system" rows="2">${inputs.system ?? ''}</textarea></label>
    <label>Budget <input name="max" type="number" min="1" value="${inputs.maxTokens}" /></label>
    <label>Reserve <input name="reserve" type="number" min="0" value="${inputs.reserveTokens}" /></label>
    <button type="submit">Assemble</button>
  </form>`;
  const body = html`<h1>Prompt</h1>
    <p class="legend">
      What the model would see for this question now: the ContextAssembler with ${count(inputs.maxTokens)} tokens, the configured
      recall settings and the store's retriever.
      ${inputs.question === null ? 'Without a question, recall searches for the last user message.' : ''}
    </p>
    ${form} ${failure !== null ? notice('error', failure) : ''}
    ${
      context === null
        ? ''
        : html`${anatomyBar(context, inputs)}
            <p class="facts-line">
              <span data-fact="recalled">${context.recalled.length}</span> archived event(s) recalled,
              <span data-fact="sent">${context.activeEvents.length}</span> of ${events.filter((e) => !e.archived).length} active
              event(s) sent.
            </p>
            <details class="prompt-details">
              <summary>the prompt as sent (${context.messages.length} messages)</summary>
              ${promptMessages(context.messages, ctx)}
            </details>
            <h2>Timeline</h2>
            <p class="legend">Recalled events are highlighted; active events sent are marked.</p>
            ${eventList(ctx, events, { highlight: recalled, sent })}`
    }`;
  return page(ctx, { title: `Prompt ${inputs.sessionId}`, sessionId: inputs.sessionId, tab: 'prompt', body });
}
