/**
 * Agent reports as markdown, rendered by markdown-it with raw HTML off: a `<script>` or `<img
 * onerror>` an agent writes is shown as the text it is. Images are off too (the page loads nothing
 * from outside), and a link survives only if it points where the extension may open it (https, or
 * a file: `linkTarget`); any other link stays the plain text it was written as. The page sanitizes
 * the result once more (DOMPurify) before it becomes DOM.
 */
import MarkdownIt from 'markdown-it';
import { linkTarget } from './reportProtocol';

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
md.disable('image');
md.validateLink = (url: string) => linkTarget(url) !== undefined;
// Bare `www.x.org` would become an http link (not allowed); only whole https URLs are linkified.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

/** The tags markdown-it makes from text (and so all the sanitizer lets through). */
export const MARKDOWN_TAGS = ['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td'];
/** Attributes markdown-it sets that the page keeps (`start` of an ordered list). */
export const MARKDOWN_ATTRIBUTES = ['href', 'start'];

export function renderMarkdown(text: string): string {
  return md.render(text);
}
