import { expect } from 'chai';
import { Messages } from 'session-compaction';
import { defaultToolStatus } from 'session-compaction/spi';

const status = (data: string) => defaultToolStatus(Messages.toolResponse('c1', 'bash', data));

describe('ContentPolicyCompactionStrategy: the heuristic status of a tool result', function () {
  it('a shell return code decides: 0 is success, any other (negative and multi-digit too) an error', function () {
    expect(status('<returncode>0</returncode>\nok')).to.equal('success');
    expect(status('  <returncode> 0 </returncode>')).to.equal('success');
    expect(status('<returncode>12</returncode>\nError: nothing')).to.equal('error');
    expect(status('<returncode>-1</returncode>')).to.equal('error');
    expect(status('<returncode>10</returncode>')).to.equal('error');
    expect(status('<returncode> 1 </returncode>')).to.equal('error');
  });

  it('a return code counts only at the start of the output', function () {
    expect(status('done <returncode>1</returncode>')).to.equal('success');
  });

  it('a leading Error, Exception or Traceback word is an error; the word elsewhere, or as a prefix, is not', function () {
    expect(status('  Traceback (most recent call last):')).to.equal('error');
    expect(status('exception: boom')).to.equal('error');
    expect(status('no error here')).to.equal('success');
    expect(status('Errors: 0')).to.equal('success');
  });

  it('a JSON object whose first key is "error" is an error; one with an error key later is not', function () {
    expect(status('{ "error" : "not found" }')).to.equal('error');
    expect(status('{"result": 1, "error": null}')).to.equal('success');
    expect(status('{"result": {"error": "none"}}')).to.equal('success');
    expect(status('["error"]')).to.equal('success');
  });
});
