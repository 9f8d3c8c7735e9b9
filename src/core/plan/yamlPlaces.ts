import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { printable } from '../base/ids';

/** One step of a field's path: a key of a mapping, or an index of a list. */
export type Segment = string | number;

/** `tasks[1].needs[0]`: a path as the schema kit writes it. */
export function pathText(path: readonly Segment[]): string {
  return path.reduce<string>((text, s) => (typeof s === 'number' ? `${text}[${s}]` : text === '' ? s : `${text}.${s}`), '');
}

/** The kit's path back into steps (its keys are the plan's own, never holding `.` or `[`). */
export function segmentsOf(field: string): Segment[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/** A problem's line: `text`, which begins with the file and where in it (`line`, `col`, from 1). */
export interface PlacedProblem {
  line: number;
  col: number;
  text: string;
}

/** What a YAML parser error says, for a person who wrote a plan rather than a program that reads one. */
const YAML_WORDING: Record<string, string> = {
  MULTIPLE_DOCS: "a plan is one YAML document; a second '---' starts another",
  // The mistake a task's text invites: `task: return { ok: false }` (a colon and a space inside a plain value).
  BLOCK_AS_IMPLICIT_KEY: "YAML reads ': ' in this value as the start of a nested mapping: put the value in quotes (task: \"…\"), or fix the indentation",
};

/**
 * A YAML text that knows where each of its values was written, so that a problem names its place:
 * `plan.yaml:7:5: tasks[1].needs[0]: unknown task 'valdate'`. Built only from a text that parsed
 * cleanly; `parsed` returns the YAML's own problems otherwise.
 */
export class PlacedYaml {
  private constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly fileName: string,
    /** The document as plain data (mappings as objects, sequences as arrays). */
    readonly value: unknown,
  ) {}

  static parsed(text: string, fileName: string): { yaml: PlacedYaml } | { problems: string[] } {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    const place = (offset: number) => {
      const { line, col } = lines.linePos(offset);
      return `${printable(fileName, 200)}:${line}:${col}`;
    };
    const problems = [...doc.errors, ...doc.warnings].map((e) => `${place(e.pos[0])}: not valid YAML: ${printable(YAML_WORDING[e.code] ?? e.message, 200)}`);
    // A key that is a list or a mapping has no place in a plan, and plain data would turn it into text.
    visit(doc, {
      Pair(_, pair) {
        if (isPair(pair) && pair.key !== null && !isScalar(pair.key)) {
          problems.push(`${place(rangeStart(pair.key) ?? 0)}: a key must be a plain word, not a list or a mapping`);
        }
      },
    });
    if (problems.length > 0) return { problems };
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      return { problems: [`${place(0)}: ${printable(err instanceof Error ? err.message : String(err), 200)}`] };
    }
    return { yaml: new PlacedYaml(doc, lines, printable(fileName, 200), value) };
  }

  /**
   * One line: the file, the line and column where `path` was written (a path that is not in the
   * file: the nearest place that is), the field, what is wrong. `atKey`: the place is that key of
   * the mapping at `path` (a key that should not be there), the field still `path`.
   */
  problem(path: readonly Segment[], why: string, options: { atKey?: string } = {}): PlacedProblem {
    const offset = options.atKey === undefined ? this.offsetOf(path, false) : this.offsetOf([...path, options.atKey], true);
    const { line, col } = this.lines.linePos(offset);
    const field = pathText(path);
    return { line, col, text: `${this.fileName}:${line}:${col}: ${field === '' ? '' : `${field}: `}${why}` };
  }

  private offsetOf(path: readonly Segment[], key: boolean): number {
    let node: unknown = this.doc.contents;
    let offset = rangeStart(node) ?? 0;
    for (const [i, step] of path.entries()) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
        if (!pair) break;
        const last = i === path.length - 1;
        const keyStart = rangeStart(pair.key);
        if (last && key && keyStart !== undefined) return keyStart;
        // `key:` with nothing after it has no value node of its own: its key is its place.
        node = pair.value;
        offset = rangeStart(pair.value) ?? keyStart ?? offset;
      } else if (isSeq(node) && typeof step === 'number' && node.items[step] !== undefined) {
        node = node.items[step];
        offset = rangeStart(node) ?? offset;
      } else {
        break;
      }
    }
    return offset;
  }
}

function rangeStart(node: unknown): number | undefined {
  if (typeof node !== 'object' || node === null || !('range' in node)) return undefined;
  const range = node.range;
  return Array.isArray(range) && typeof range[0] === 'number' ? range[0] : undefined;
}
