import type { ModelMessage } from 'ai';
import { expect } from 'chai';
import { CompactionRequest, Messages, ObservationMaskingCompactionStrategy, Session, SessionEvent } from 'session-compaction';
import {
  DEFAULT_MISSING_TOOL_OUTPUT,
  fromModelMessage,
  pairToolResults,
  toModelMessages,
  toUIMessages,
} from 'session-compaction/ai-sdk';

const call = (toolCallId: string, extra: object = {}) => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName: 'f',
  input: {},
  ...extra,
});
const result = (toolCallId: string) => ({
  type: 'tool-result' as const,
  toolCallId,
  toolName: 'f',
  output: { type: 'text' as const, value: 'ok' },
});

describe('AI SDK message conversion', function () {
  it('separates system messages as instructions', function () {
    const prompt = toModelMessages([Messages.system('Be brief.'), Messages.user('hi')]);
    expect(prompt).to.deep.equal({
      instructions: [{ role: 'system', content: 'Be brief.' }],
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('converts a log written by another integration: tool calls, results and reasoning', function () {
    const prompt = toModelMessages([
      Messages.user('q'),
      Messages.assistant('Checking.', { toolCalls: [Messages.toolCall('c1', 'lookup', '{"id":1}')], reasoning: 'need data' }),
      Messages.tool([Messages.toolResponse('c1', 'lookup', 'found')]),
    ]);
    expect(prompt.messages.slice(1)).to.deep.equal([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'need data' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { id: 1 } },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', output: { type: 'text', value: 'found' } }],
      },
    ]);
  });

  describe('pairing tool calls and results', function () {
    it('leaves out a result whose call is not right before it', function () {
      const messages: ModelMessage[] = [
        { role: 'tool', content: [result('gone')] },
        { role: 'user', content: 'hello' },
      ];
      expect(pairToolResults(messages)).to.deep.equal([{ role: 'user', content: 'hello' }]);
    });

    it('adds an error result for a call without one, before the next user message', function () {
      const messages: ModelMessage[] = [
        { role: 'assistant', content: [call('c1'), call('c2')] },
        { role: 'tool', content: [result('c2')] },
        { role: 'user', content: 'never mind' },
      ];
      expect(pairToolResults(messages)[2]).to.deep.equal({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'f',
            output: { type: 'error-text', value: DEFAULT_MISSING_TOOL_OUTPUT },
          },
        ],
      });
    });

    it('never answers a provider-executed call, nor a call awaiting approval at the end of the prompt', function () {
      const messages: ModelMessage[] = [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            call('srv', { providerExecuted: true }),
            call('c1'),
            { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
      ];
      expect(pairToolResults(messages)).to.deep.equal(messages);
    });
  });

  it('gives a masked tool result back masked, not the original kept in metadata', async function () {
    const events = [
      fromModelMessage({ role: 'user', content: 'q' }),
      fromModelMessage({ role: 'assistant', content: [call('c1')] }),
      fromModelMessage({
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'f', output: { type: 'json', value: { big: 'x'.repeat(2000) } } },
        ],
      }),
      fromModelMessage({ role: 'assistant', content: 'done' }),
    ].map((e, i) => SessionEvent.create({ sessionId: 's', id: `e${i}`, message: e.message, metadata: e.metadata }));
    const masked = await new ObservationMaskingCompactionStrategy({ maxChars: 100 }).compact(
      CompactionRequest.of(Session.create({ id: 's', userId: 'u' }), events),
    );
    const tool = toModelMessages(masked.compactedEvents).messages[2] as Extract<ModelMessage, { role: 'tool' }>;
    const output = (tool.content[0] as { output: { type: string; value: string } }).output;
    expect(output.type).to.equal('text');
    expect(output.value.length).to.be.at.most(100);
  });

  it('restores UI messages: one per user message, one per reply with a part per step', function () {
    const events = [
      fromModelMessage({ role: 'user', content: 'q' }),
      fromModelMessage({ role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }, call('c1')] }),
      fromModelMessage({ role: 'tool', content: [result('c1')] }),
      fromModelMessage({ role: 'assistant', content: 'answer' }),
    ].map((e, i) => SessionEvent.create({ sessionId: 's', id: `e${i}`, message: e.message, metadata: e.metadata }));
    expect(toUIMessages(events)).to.deep.equal([
      { id: 'e0', role: 'user', parts: [{ type: 'text', text: 'q' }] },
      {
        id: 'e1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'reasoning', text: 'hmm', state: 'done' },
          { type: 'tool-f', toolCallId: 'c1', state: 'output-available', input: {}, output: 'ok' },
          { type: 'step-start' },
          { type: 'text', text: 'answer', state: 'done' },
        ],
      },
    ]);
  });

  it('leaves summaries out of the UI messages unless asked', function () {
    const summary = SessionEvent.create({
      sessionId: 's',
      message: Messages.assistant('summary'),
      metadata: { synthetic: true },
    });
    expect(toUIMessages([summary])).to.deep.equal([]);
    expect(toUIMessages([summary], { includeSynthetic: true })).to.have.length(1);
  });
});
