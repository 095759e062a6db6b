import { expect } from 'chai';
import { Messages } from 'session-compaction';
import { METADATA_FINISH_REASON, METADATA_INCOMPLETE, incompleteReplyMetadata, isIncompleteReply } from 'session-compaction/spi';
import { interruptedNote } from '../../src/session/incompleteReplies.js';
import { event } from '../support/fixtures.js';

describe('incompleteReplies', function () {
  it('marks a reply incomplete with why it stopped', function () {
    expect(incompleteReplyMetadata('length')).to.deep.equal({ incomplete: true, finishReason: 'length' });
    expect([METADATA_INCOMPLETE, METADATA_FINISH_REASON]).to.deep.equal(['incomplete', 'finishReason']);
  });

  it('only an assistant event marked incomplete: true is an incomplete reply', function () {
    expect(isIncompleteReply(event(Messages.assistant('half'), { metadata: incompleteReplyMetadata('aborted') }))).to.equal(true);
    expect(isIncompleteReply(event(Messages.assistant('whole')))).to.equal(false);
    expect(isIncompleteReply(event(Messages.assistant('half'), { metadata: { incomplete: 'yes' } }))).to.equal(false);
    expect(isIncompleteReply(event(Messages.user('q'), { metadata: incompleteReplyMetadata('aborted') }))).to.equal(false);
  });

  it('the note a later prompt shows names the finish reason when there is one', function () {
    const cut = event(Messages.assistant('half'), { metadata: incompleteReplyMetadata('content_filter') });
    expect(interruptedNote(cut)).to.equal('[this reply was interrupted (content_filter) and is incomplete]');
    const unknown = event(Messages.assistant('half'), { metadata: { incomplete: true, finishReason: 3 } });
    expect(interruptedNote(unknown)).to.equal('[this reply was interrupted and is incomplete]');
  });
});
