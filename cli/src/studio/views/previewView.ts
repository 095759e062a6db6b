import { createDefaultContenderRegistry, type ContenderRegistry } from 'session-compaction-bench';
import { EventFilter, type CompactionStrategyLike, type CompactionTriggerLike, type SessionEvent } from 'session-compaction';
import { count, html, query, type Html } from '../html.js';
import { notice, page } from '../layout.js';
import { badgesOf, requireParam, requireSnapshot, StudioError, textOf, tokensOf } from '../sessionData.js';
import type { StudioContext, ViewRequest } from '../StudioContext.js';

let contenders: Promise<ContenderRegistry> | undefined;
const registry = () => (contenders ??= createDefaultContenderRegistry());

/** The strategies the CLI's `compact --strategy` knows, without peer libraries. */
async function strategyNames(): Promise<string[]> {
  return (await registry())
    .list()
    .filter((c) => c.kind === 'strategy')
    .map((c) => c.name);
}

interface Setup {
  label: string;
  trigger: CompactionTriggerLike;
  strategy: CompactionStrategyLike;
}

/** `profile:<name>` or `strategy:<name>`, sized for the studio's context window. */
async function resolveSetup(ctx: StudioContext, setup: string, force: boolean): Promise<Setup> {
  const colon = setup.indexOf(':');
  const kind = setup.slice(0, colon);
  const name = setup.slice(colon + 1);
  let configured: { trigger: CompactionTriggerLike; strategy: CompactionStrategyLike };
  if (kind === 'profile' && ctx.profiles.has(name)) {
    const s = ctx.profiles.create(name, {
      contextWindowTokens: ctx.contextWindowTokens,
      chatClient: ctx.chatClient,
      tokenCountEstimator: ctx.estimator,
      logger: ctx.logger,
    });
    configured = { trigger: s.compactionTrigger, strategy: s.compactionStrategy };
  } else if (kind === 'strategy' && (await strategyNames()).includes(name)) {
    const contender = (await registry()).get(name);
    if (contender.kind !== 'strategy') throw new StudioError(400, `'${name}' is not a strategy`);
    configured = contender.create(
      { budgetTokens: ctx.contextWindowTokens, estimator: ctx.estimator, chatClient: ctx.chatClient, logger: ctx.logger },
      {},
    );
  } else {
    throw new StudioError(400, `unknown profile or strategy '${setup}'`);
  }
  return { label: `${kind} ${name}`, trigger: force ? () => true : configured.trigger, strategy: configured.strategy };
}

type Fate = 'archived' | 'summarised' | 'kept' | 'added';

function diffRow(ctx: StudioContext, e: SessionEvent, fate: Fate): Html {
  const text = textOf(e).replace(/\s+/g, ' ');
  return html`<tr class="fate-${fate}" data-event-id="${e.id}" data-fate="${fate}">
    <td><span class="badge fate">${fate}</span></td>
    <td>${e.message.type}</td>
    <td class="num">${count(tokensOf(ctx, e))}</td>
    <td>
      ${badgesOf(e)
        .filter((b) => b !== 'active')
        .map((b) => html`<span class="badge b-${b.replace(' ', '-')}">${b}</span>`)}
    </td>
    <td class="clip">${text.length > 160 ? `${text.slice(0, 159)}…` : text}</td>
  </tr>`;
}

export async function previewView(ctx: StudioContext, req: ViewRequest): Promise<Html> {
  const id = requireParam(req.params, 'id');
  await requireSnapshot(ctx, id);
  const setupName = req.params.get('setup') ?? '';
  const force = req.params.get('force') === '1';
  const strategies = await strategyNames();
  const options = [
    html`<optgroup label="profiles">
      ${ctx.profiles.names().map((n) => html`<option value="profile:${n}" ${setupName === `profile:${n}` ? html`selected` : ''}>${n}</option>`)}
    </optgroup>`,
    html`<optgroup label="strategies">
      ${strategies.map((n) => html`<option value="strategy:${n}" ${setupName === `strategy:${n}` ? html`selected` : ''}>${n}</option>`)}
    </optgroup>`,
  ];
  const form = html`<form class="preview-form" method="get" action="/preview">
    <input type="hidden" name="id" value="${id}" />
    <label
      >Profile or strategy
      <select name="setup">
        ${options}
      </select></label
    >
    <label class="check"><input type="checkbox" name="force" value="1" ${force ? html`checked` : ''} /> ignore the trigger</label>
    <button type="submit">Preview</button>
  </form>`;
  let result: Html = html``;
  if (setupName !== '') {
    const setup = await resolveSetup(ctx, setupName, force);
    const window = await ctx.repository.findEvents(id, EventFilter.active());
    const preview = await ctx.service.previewCompaction(id, setup.trigger, setup.strategy, { callModel: false });
    const archived = new Set(preview.result.archivedEvents.map((e) => e.id));
    const summarised = new Set((preview.summarizedEvents ?? []).map((e) => e.id));
    const windowIds = new Set(window.map((e) => e.id));
    const rows = [
      ...window.map((e) => diffRow(ctx, e, summarised.has(e.id) ? 'summarised' : archived.has(e.id) ? 'archived' : 'kept')),
      ...preview.result.compactedEvents.filter((e) => !windowIds.has(e.id)).map((e) => diffRow(ctx, e, 'added')),
    ];
    const apply = !preview.triggered
      ? ''
      : ctx.allowWrites
        ? html`<form method="post" action="/preview/apply" data-confirm="Compact ${id} with ${setup.label}?">
            <input type="hidden" name="csrf" value="${req.csrfToken}" />
            <input type="hidden" name="id" value="${id}" />
            <input type="hidden" name="setup" value="${setupName}" />
            <input type="hidden" name="force" value="${force ? '1' : ''}" />
            <button type="submit" class="danger">Apply</button>
          </form>`
        : html`<button type="button" disabled title="start the studio with --allow-writes to apply">Apply</button>`;
    result = html`<h2>${setup.label}</h2>
      ${
        preview.triggered
          ? ''
          : notice(
              'info',
              'The trigger does not fire on this window: nothing would change. Tick "ignore the trigger" to see what the strategy would do.',
            )
      }
      <p class="facts-line" data-fact="preview">
        active window <strong>${count(preview.eventsBefore)} → ${count(preview.eventsAfter)}</strong> events,
        <strong data-fact="tokens">${count(preview.tokensBefore)} → ${count(preview.tokensAfter)}</strong> tokens;
        ${archived.size} archived, ${summarised.size}
        summarised${preview.modelCalled === false ? ' (the summariser was not called: a summary would be written on apply)' : ''}.
      </p>
      ${
        preview.stages === undefined
          ? ''
          : html`<ul class="stages">
              ${preview.stages.map((s) => html`<li>${s.name}: ${count(s.tokensBefore)} → ${count(s.tokensAfter)} tokens</li>`)}
            </ul>`
      }
      ${apply}
      <table class="diff">
        <thead>
          <tr>
            <th>fate</th>
            <th>role</th>
            <th class="num">tokens</th>
            <th>badges</th>
            <th>text</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>`;
  }
  const body = html`<h1>Preview</h1>
    <p class="legend">
      A dry run of a compaction profile or strategy on the active window, sized for ${count(ctx.contextWindowTokens)} tokens: what
      would be archived, summarised and kept. Nothing is written${ctx.allowWrites ? ' until you apply it' : ''}.
    </p>
    ${form} ${result}`;
  return page(ctx, { title: `Preview ${id}`, sessionId: id, tab: 'preview', body });
}

/** POST /preview/apply: the same setup through `compact` (CAS-protected); answers where to go next. */
export async function applyAction(ctx: StudioContext, req: ViewRequest): Promise<string> {
  const id = requireParam(req.params, 'id');
  const setup = await resolveSetup(ctx, requireParam(req.params, 'setup'), req.params.get('force') === '1');
  let committed: string | null = null;
  const off = ctx.service.events.on('compactionCompleted', (e) => {
    if (e.sessionId === id) committed = e.compactionId ?? 'committed';
  });
  try {
    await ctx.service.compact(id, setup.trigger, setup.strategy);
  } finally {
    off();
  }
  return committed === null
    ? `/preview${query({ id, setup: req.params.get('setup'), force: req.params.get('force'), skipped: '1' })}`
    : `/compactions${query({ id, applied: committed })}`;
}
