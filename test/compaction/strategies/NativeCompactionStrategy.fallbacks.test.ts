import { expect } from 'chai';
import {
  AdditiveSummarizationCompactionStrategy,
  NativeCompactionStrategy,
  RecursiveSummarizationCompactionStrategy,
  type NativeCompactor,
  type SessionEvent,
} from 'session-compaction';
import {
  METADATA_NATIVE_COMPACTION,
  nativeCompactionPayload,
  type NativeCompactionInput,
  type NativeCompactionOutput,
  type PreviewableStrategy,
} from 'session-compaction/spi';
import { A, CharEstimator, U, compactionRequest, msgs } from '../../support/fixtures.js';
import { ScriptedChatClient, silentLogger } from '../../summarization/support.js';

// The native strategy with fallbacks other than the recursive summariser of NativeCompactionStrategy.test.ts:
// one that keeps prior summaries in the window, one whose preview does not name the summarised events, and
// ones whose compaction drifts from their preview.

const PROVIDER = 'test-provider';

/** A provider double that always succeeds with payload `opaque-<n>` (n counts the calls) and records its inputs. */
class RecordingCompactor implements NativeCompactor {
  readonly provider = PROVIDER;
  readonly inputs: NativeCompactionInput[] = [];
  async compact(input: NativeCompactionInput): Promise<NativeCompactionOutput> {
    this.inputs.push(input);
    return { payload: [{ type: 'compaction', encrypted_content: `opaque-${this.inputs.length}` }], text: null, usage: null };
  }
}

const ids = (events: readonly SessionEvent[]) => events.map((e) => e.id);
const summaries = (window: readonly SessionEvent[]) => window.filter((e) => e.isSynthetic() && e.messageType === 'assistant');
const turns = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => [U(`question ${from + i}`), A(`answer ${from + i}`)]).flat();

function recursive(maxEventsToKeep = 2) {
  return new RecursiveSummarizationCompactionStrategy({
    chatClient: new ScriptedChatClient(),
    maxEventsToKeep,
    overlapSize: 0,
    tokenCountEstimator: new CharEstimator(),
    logger: silentLogger,
  });
}

function native(compactor: NativeCompactor, fallback: PreviewableStrategy) {
  return new NativeCompactionStrategy({ compactor, fallback, logger: silentLogger });
}

describe('NativeCompactionStrategy with other fallbacks', function () {
  describe('an additive fallback, which keeps the prior summary in the window', function () {
    /** Two compactions of four turns each, keeping one: the second window starts with the first summary pair. */
    async function twoCompactions() {
      const compactor = new RecordingCompactor();
      const s = native(
        compactor,
        new AdditiveSummarizationCompactionStrategy({
          chatClient: new ScriptedChatClient(['summary of chunk 1', 'summary of chunk 2']),
          keepTurns: 1,
          maxSummaryTokens: 100_000,
          tokenCountEstimator: new CharEstimator(),
          logger: silentLogger,
        }),
      );
      const first = await s.compact(compactionRequest(turns(1, 4)));
      const window = [...first.compactedEvents, ...turns(5, 7)];
      const second = await s.compact(compactionRequest(window));
      return { compactor, first, window, second };
    }

    it('sends the provider only the new chunk, not the prior summary the window keeps', async function () {
      const { compactor, window, second } = await twoCompactions();
      expect(compactor.inputs).to.have.length(2);
      expect(ids(compactor.inputs[1]!.events)).to.deep.equal(ids(second.archivedEvents));
      expect(ids(second.archivedEvents)).to.deep.equal(ids(window.slice(2, 8)), 'question 4 to answer 6');
    });

    it('stores the new payload on the new summary and leaves the prior summary as it was', async function () {
      const { first, second } = await twoCompactions();
      const [prior, added] = summaries(second.compactedEvents);
      expect(summaries(second.compactedEvents)).to.have.length(2);
      expect(prior!.id).to.equal(summaries(first.compactedEvents)[0]!.id);
      expect(prior!.text).to.equal('summary of chunk 1');
      expect(nativeCompactionPayload(prior!, PROVIDER)).to.deep.equal([{ type: 'compaction', encrypted_content: 'opaque-1' }]);
      expect(added!.text).to.equal('summary of chunk 2');
      expect(nativeCompactionPayload(added!, PROVIDER)).to.deep.equal([{ type: 'compaction', encrypted_content: 'opaque-2' }]);
    });
  });

  it('a fallback whose preview does not name the summarised events: the provider is sent the archived range', async function () {
    const inner = recursive();
    const unnamed: PreviewableStrategy = {
      preview: async (r) => {
        const { result, modelCalled } = await inner.preview(r);
        return { result, modelCalled };
      },
      compact: (r) => inner.compact(r),
    };
    const compactor = new RecordingCompactor();
    const events = msgs(6);
    const result = await native(compactor, unnamed).compact(compactionRequest(events));
    expect(ids(compactor.inputs[0]!.events)).to.deep.equal(ids(events.slice(0, 4)));
    expect(nativeCompactionPayload(summaries(result.compactedEvents)[0]!, PROVIDER)).to.not.equal(undefined);
  });

  describe('a fallback whose compaction drifts from its preview: its summary stands alone, without the native record', function () {
    /** Previews the recursive summariser's range (events 1–4 of 6), and compacts with `compact` instead. */
    async function drifted(compact: PreviewableStrategy['compact']) {
      const inner = recursive();
      const drifting: PreviewableStrategy = { preview: (r) => inner.preview(r), compact };
      const events = msgs(6);
      const result = await native(new RecordingCompactor(), drifting).compact(compactionRequest(events));
      return { events, result };
    }

    it('to a longer range that contains the previewed one', async function () {
      // Keeping one event instead of two: events 1–5, the previewed range and one more.
      const longer = recursive(1);
      const { events, result } = await drifted((r) => longer.compact(r));
      expect(ids(result.archivedEvents)).to.deep.equal(ids(events.slice(0, 5)));
      expect(summaries(result.compactedEvents)[0]!.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
    });

    it('to another range of the same length', async function () {
      // The window without its first event, keeping one: events 2–5, as many as previewed, three of them the same.
      const shifted = recursive(1);
      const { events, result } = await drifted((r) => shifted.compact(r.withEvents(r.events.slice(1))));
      expect(ids(result.archivedEvents)).to.deep.equal(ids(events.slice(1, 5)));
      expect(summaries(result.compactedEvents)[0]!.metadata[METADATA_NATIVE_COMPACTION]).to.equal(undefined);
    });
  });
});
