import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/**
 * Edits one property of a user's JSON (or JSONC: comments, trailing commas) config file as a
 * person would: the rest of the file — its other keys, comments, layout and indentation — stays
 * byte for byte, and taking the property out again restores what was there. A parser that
 * rewrites the whole document (JSON.parse, then stringify) would drop comments and reflow the file.
 */
export type JsonDocument = { ok: true; text: string; root: Node } | { ok: false; why: string };

export function readJsonDocument(text: string): JsonDocument {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !root) {
    const first = errors[0];
    return { ok: false, why: first ? `not valid JSON (${printParseErrorCode(first.error)} at line ${lineOf(text, first.offset)})` : 'not valid JSON (empty)' };
  }
  if (root.type !== 'object') return { ok: false, why: 'not a JSON object' };
  return { ok: true, text, root };
}

/** The value at `path` (undefined when absent), or why an object on the way is something else. */
export function jsonValueAt(doc: Extract<JsonDocument, { ok: true }>, path: readonly string[]): { value: unknown } | { why: string } {
  let node: Node | undefined = doc.root;
  for (let i = 0; i < path.length; i++) {
    if (node.type !== 'object') return { why: `${path.slice(0, i).join('.')} is not an object` };
    node = findNodeAtLocation(node, [path[i]!]);
    if (!node) return { value: undefined };
  }
  return { value: getNodeValue(node) };
}

/**
 * `text` with `key: value` added to the object at `path` (which must exist), laid out in the file's
 * own indentation after the object's last property, or inside it when it is empty.
 */
export function insertJsonProperty(text: string, path: readonly string[], key: string, value: unknown): string {
  const obj = objectAt(text, path);
  const unit = indentUnit(text);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const objIndent = lineIndent(text, obj.offset);
  const last = obj.children?.at(-1);
  const childIndent = last && onOwnLine(text, last.offset) ? lineIndent(text, last.offset) : objIndent + unit;
  const rendered = JSON.stringify(value, null, unit).split('\n').join(eol + childIndent);
  const property = `${JSON.stringify(key)}: ${rendered}`;
  if (last) {
    const at = last.offset + last.length;
    return `${text.slice(0, at)},${eol}${childIndent}${property}${text.slice(at)}`;
  }
  return `${text.slice(0, obj.offset + 1)}${eol}${childIndent}${property}${eol}${objIndent}${text.slice(obj.offset + 1)}`;
}

/**
 * `text` without the property `key` of the object at `path`: with the comma and line break that
 * joined it to the one before (or after) it, so that removing what `insertJsonProperty` added gives
 * back the original bytes. An object left with nothing in it becomes `{}`.
 */
export function removeJsonProperty(text: string, path: readonly string[], key: string): string {
  const obj = objectAt(text, path);
  const props = obj.children ?? [];
  const index = props.findIndex((p) => p.children?.[0]?.value === key);
  if (index < 0) return text;
  const prop = props[index]!;
  const before = props[index - 1];
  const after = props[index + 1];
  if (before) return text.slice(0, before.offset + before.length) + text.slice(prop.offset + prop.length);
  if (after) return text.slice(0, prop.offset) + text.slice(after.offset);
  return `${text.slice(0, obj.offset + 1)}${text.slice(obj.offset + obj.length - 1)}`;
}

/** Whether the object at `path` has no properties. */
export function jsonObjectEmpty(text: string, path: readonly string[]): boolean {
  return (objectAt(text, path).children ?? []).length === 0;
}

function objectAt(text: string, path: readonly string[]): Node {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const node = root && (path.length === 0 ? root : findNodeAtLocation(root, [...path]));
  if (!node || node.type !== 'object') throw new Error(`no object at ${path.join('.') || 'the root'}`);
  return node;
}

/** The file's indentation step: that of its first indented line, else two spaces. */
function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1]! : '  ';
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function lineIndent(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset)))![0];
}

function onOwnLine(text: string, offset: number): boolean {
  return text.slice(lineStart(text, offset), offset).trim() === '';
}

function lineOf(text: string, offset: number): number {
  return text.slice(0, offset).split('\n').length;
}
