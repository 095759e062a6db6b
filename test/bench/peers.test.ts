import { expect } from 'chai';
import { createDefaultLogger, Messages, type Message } from 'session-compaction';
import { CharacterTokenCountEstimator } from 'session-compaction/spi';
import { AiSdkPrunePeer, fromModelMessage, toModelMessage } from '../../benchmarks/src/peers/AiSdkPrunePeer.js';
import { LangChainTrimPeer } from '../../benchmarks/src/peers/LangChainTrimPeer.js';
import { orphanedToolResults } from '../../benchmarks/src/metrics/orphanedToolResults.js';
import type { HistoryItem } from '../../benchmarks/src/registry/ContenderRegistry.js';

const estimator = new CharacterTokenCountEstimator();
const logger = createDefaultLogger({ silent: true });

function history(messages: Message[]): HistoryItem[] {
  return messages.map((message, index) => ({ index, message, tokens: 10 }));
}

const agentRun: Message[] = [
  Messages.system('policy'),
  Messages.user('find my booking'),
  Messages.assistant(null, { toolCalls: [Messages.toolCall('c1', 'lookup', '{"q":"booking"}')] }),
  Messages.tool([Messages.toolResponse('c1', 'lookup', 'booking ZX12')]),
  Messages.assistant('Found ZX12.'),
  Messages.user('cancel it'),
  Messages.assistant(null, { toolCalls: [Messages.toolCall('c2', 'cancel', '{"id":"ZX12"}')] }),
  Messages.tool([Messages.toolResponse('c2', 'cancel', 'cancelled')]),
  Messages.assistant('Done.'),
];

describe('bench: peers', () => {
  it('LangChain trimMessages keeps the system prompt and the newest messages from a human turn, within budget', async () => {
    const peer = new LangChainTrimPeer({ budgetTokens: 50, estimator, logger });
    peer.prepare(history(agentRun));
    const selection = await peer.select(agentRun.length);
    // system (10) + the last turn "cancel it" … "Done." (4 × 10) = 50.
    expect(selection.messages).to.deep.equal([agentRun[0], ...agentRun.slice(5)]);
    expect(selection.tokens).to.equal(50);
    expect(orphanedToolResults(selection.messages)).to.equal(0);
  });

  it('LangChain trimMessages sends nothing when no human message fits after the system prompt', async () => {
    const peer = new LangChainTrimPeer({ budgetTokens: 25, estimator, logger });
    peer.prepare(history(agentRun));
    const selection = await peer.select(agentRun.length);
    expect(selection.messages).to.deep.equal([]);
  });

  it('AI SDK pruneMessages drops old tool calls together with their results', async () => {
    const peer = new AiSdkPrunePeer({ budgetTokens: 50, estimator, logger });
    peer.prepare(history(agentRun));
    const selection = await peer.select(agentRun.length);
    const kinds = selection.messages.map((m) => m.type);
    expect(kinds.filter((k) => k === 'tool')).to.have.length.lessThan(2);
    expect(orphanedToolResults(selection.messages)).to.equal(0);
    expect(selection.tokens).to.be.greaterThan(0);
  });

  it('round-trips messages through the AI SDK model-message shape', () => {
    for (const m of agentRun) expect(fromModelMessage(toModelMessage(m))).to.deep.equal(m);
  });

  it('counts a tool result whose call is missing as orphaned', () => {
    expect(orphanedToolResults(agentRun.slice(3))).to.equal(1);
    expect(orphanedToolResults(agentRun)).to.equal(0);
  });
});
