import { strict as assert } from 'node:assert';
import { MARKDOWN_TAGS, renderMarkdown } from '../../src/webview/markdown';
import { isPageMessage, linkTarget } from '../../src/webview/reportProtocol';

/** Every tag name in rendered HTML (markdown-it's output is well-formed: a regex is enough here). */
const tags = (html: string) => [...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9-]*)/g)].map((m) => m[1]!.toLowerCase());
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);

describe('agent reports as markdown: rendered, with no HTML or links of their own', () => {
  it('renders what reviewers write: headings, lists, code, tables, quotes, emphasis', () => {
    const html = renderMarkdown(['# Review of j-1', '', 'Findings:', '', '1. the **tests** miss `null`', '2. _naming_', '', '```js', 'if (a < b) x();', '```', '', '> quoted', '', '| a | b |', '|---|---|', '| 1 | 2 |', '', '[VERDICT: NOT PASS]'].join('\n'));
    for (const tag of ['h1', 'ol', 'li', 'strong', 'code', 'em', 'pre', 'blockquote', 'table', 'td']) assert.ok(tags(html).includes(tag), `<${tag}> in ${html}`);
    assert.match(html, /if \(a &lt; b\) x\(\);/, 'code is text, escaped');
    assert.match(html, /\[VERDICT: NOT PASS\]/, 'the verdict line shows as written');
    assert.deepEqual(tags(html).filter((t) => !MARKDOWN_TAGS.includes(t)), [], 'only the tags the page lets through');
  });

  it('raw HTML an agent writes is shown as text, never as markup', () => {
    for (const evil of ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '<iframe src="https://example.com"></iframe>', '<a href="javascript:alert(1)">x</a>', '<style>body{display:none}</style>', '<div onclick="alert(1)">hi</div>', '<!-- comment -->', '<svg onload=alert(1)>']) {
      const html = renderMarkdown(`Look:\n\n${evil}\n\nand inline ${evil} too`);
      assert.deepEqual(tags(html).filter((t) => !['p', 'a'].includes(t)), [], `${evil} → ${html}`);
      assert.ok(hrefs(html).every((h) => h!.startsWith('https://')), `only a linkified https URL becomes a link: ${html}`);
      assert.ok(html.includes('&lt;'), `${evil} is escaped: ${html}`);
    }
  });

  it('no images: nothing is loaded from anywhere', () => {
    const html = renderMarkdown('![chart](https://example.com/track.png) and ![x](file:///etc/passwd)');
    assert.ok(!tags(html).includes('img'), html);
  });

  it('links survive only to https pages and files; any other scheme stays plain text', () => {
    const html = renderMarkdown(['[docs](https://example.com/a?b=1#c)', '[file](src/signup.js#L12)', '[abs](file:///repo/x.ts)', '[js](javascript:alert(1))', '[JS](JaVaScRiPt:alert(1))', '[cmd](command:workbench.action.terminal.new)', '[vs](vscode://file/etc/passwd)', '[web](http://example.com)', '[data](data:text/html,<b>x</b>)', '[proto](//evil.example/x)', 'bare https://example.com/z and www.example.com'].join('\n\n'));
    assert.deepEqual(hrefs(html), ['https://example.com/a?b=1#c', 'src/signup.js#L12', 'file:///repo/x.ts', 'https://example.com/z']);
    assert.match(html, /\[js\]\(javascript:alert\(1\)\)/, 'a refused link shows as the text it was');
  });

  it('linkTarget: what a link may open, and the page may ask for', () => {
    assert.deepEqual(linkTarget('https://example.com/x'), { kind: 'web', url: 'https://example.com/x' });
    assert.deepEqual(linkTarget('HTTPS://example.com'), { kind: 'web', url: 'HTTPS://example.com' });
    assert.deepEqual(linkTarget('src/my%20file.ts#L7'), { kind: 'file', path: 'src/my file.ts', line: 7 });
    assert.deepEqual(linkTarget('file:///repo/a.ts'), { kind: 'file', path: '/repo/a.ts' });
    assert.deepEqual(linkTarget('file://localhost/repo/a.ts'), { kind: 'file', path: '/repo/a.ts' });
    for (const bad of ['', 'javascript:alert(1)', 'command:x', 'vscode://x', 'http://example.com', 'data:,x', '//host/x', '#top', 'https://', 'https://user@host/', 'file://otherhost/x', 'a\nb', 'src/%E0%A4%A.ts', 'src/a%0A.ts', 'a\\b']) {
      assert.equal(linkTarget(bad), undefined, JSON.stringify(bad));
    }
    assert.ok(isPageMessage({ type: 'openLink', href: 'src/a.ts' }));
    assert.ok(!isPageMessage({ type: 'openLink', href: 'javascript:alert(1)' }));
    assert.ok(!isPageMessage({ type: 'openLink', href: 42 }));
  });
});
