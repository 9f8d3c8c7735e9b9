import { strict as assert } from 'node:assert';
import MarkdownIt from 'markdown-it';
import { codeSpan, markdownLines, markdownText } from '../../src/views/shared/markdown';

const md = new MarkdownIt({ html: false, linkify: false });
/** What a reader sees: the rendered HTML as text. */
const seen = (markdown: string) =>
  md
    .renderInline(markdown)
    .replace(/<br>\n?/g, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** Names, paths, IDs and agent text that markdown would otherwise read as syntax. */
const TRICKY = [
  'mam-demo-38y2s6',
  'demo-reviewer-b',
  'worker_1.a',
  '__init__.py',
  '*not bold*',
  '`tick`',
  'a ``double`` tick',
  '`',
  '``',
  'ends with `',
  '[link](https://example.com)',
  '<b>html</b> & &amp;',
  '1. not a list',
  '# not a heading',
  '- not an item',
  '> not a quote',
  'C:\\Users\\me\\repo',
  'a | b | c',
  '~~strike~~ !important {x} (y) +z',
];

describe('markdown for tooltips: text shown exactly as it is, no stray backslashes', () => {
  it('codeSpan: the text, verbatim, inside a code span (fences longer than any backtick run)', () => {
    for (const text of TRICKY) {
      const html = md.renderInline(codeSpan(text));
      assert.match(html, /^<code>.*<\/code>$/s, `one code span for ${text}: ${html}`);
      assert.equal(seen(codeSpan(text)), text, `shown as typed: ${codeSpan(text)}`);
    }
  });

  it('markdownText: prose shown as typed, spaces kept (the hover can wrap it)', () => {
    for (const text of TRICKY) assert.equal(seen(markdownText(text)), text, `shown as typed: ${markdownText(text)}`);
    assert.ok(!markdownText('a long sentence with spaces').includes('&nbsp;'));
  });

  it('control characters are shown, never obeyed', () => {
    assert.equal(seen(codeSpan('a\u001b[31mred')), 'a\\x1b[31mred');
    assert.equal(seen(markdownText('line\rover')), 'line\\x0dover');
    assert.equal(codeSpan(''), '');
  });

  it('markdownLines: each line as typed, line breaks kept, at most maxLines', () => {
    const task = 'Add input validation.\n\n- reject empty names\n- keep `trim()`\n1. then test';
    const html = md.render(markdownLines(task));
    assert.equal(html.match(/<p>/g)?.length, 2, html);
    assert.ok(!/<(ul|ol|li|code)>/.test(html), `no list or code made from the task: ${html}`);
    assert.equal(seen(markdownLines('one\ntwo\nthree', 2)), 'one\ntwo\n…');
  });
});
