import { expect } from 'chai';
import fc from 'fast-check';
import { escapeHtml, html, Html } from '../../../cli/src/studio/html.js';

describe('studio html', function () {
  it('escapes every character that can open a tag, an entity or an attribute', function () {
    expect(escapeHtml(`<a href="x" onclick='y'>&\`</a>`)).to.equal(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;',
    );
  });

  it('escapes interpolations and keeps Html and arrays of Html as they are', function () {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"x"'}">${inner}${[html`<br />`, '<br>']}${null}${undefined}${false}${3}</p>`.value).to.equal(
      '<p title="&quot;x&quot;"><b>&lt;i&gt;</b><br />&lt;br&gt;3</p>',
    );
  });

  it('no interpolated text, whatever it holds, leaves a < or a quote in the output', function () {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const out = html`<td data-x="${text}">${text}</td>`.value;
        const middle = out.slice('<td data-x="'.length, out.length - '</td>'.length);
        return !/[<>"'`]/.test(middle.replace('">', ''));
      }),
    );
  });

  it('an Html value is not re-escaped', function () {
    expect(html`${new Html('&amp;')}`.value).to.equal('&amp;');
  });
});
