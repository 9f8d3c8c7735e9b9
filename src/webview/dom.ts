/**
 * The report webview's DOM helpers, shared by the loop's report (./report.ts) and the plan's page
 * (./planPage.ts): structure is built with DOM calls and text nodes, never from HTML strings.
 */

export type Make = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, string>, ...children: Array<Node | string>) => HTMLElementTagNameMap[K];

export const el: Make = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return node;
};

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element (the plan's edges). */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: SVGElement[]): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

export type Tone = 'pass' | 'fail' | 'pending' | 'warn' | 'neutral';

/** A status pill: the theme's status colour as its dot, border and tint; its text in the foreground colour. */
export function pill(text: string, tone: Tone): HTMLElement {
  return el('span', { class: `pill ${tone}` }, text);
}

/** `not_passed` → `Not passed`. */
export function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1).replace(/_/g, ' ');
}

/** A term and its value for a `dl.facts`. */
export function fact(term: string, value: Node | string): Node[] {
  return [el('dt', {}, term), el('dd', {}, value)];
}
