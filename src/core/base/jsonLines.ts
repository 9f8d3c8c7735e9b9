import * as fs from 'node:fs';
import { SchemaError, type Schema } from './schema';

/** What a JSON-lines text held: the values that read with the schema, and how many lines did not. */
export interface JsonLines<T> {
  values: T[];
  /** Lines that are not JSON (torn by a crash, half written, foreign) or do not read with the schema. */
  bad: number;
}

/**
 * The one JSON-lines reader: MAM's own logs (outbox, audit log) and the agents' stores. Blank lines
 * are skipped; a line that does not parse or does not read with `schema` is counted and skipped,
 * never fatal: the last line may be half written, and stores hold lines of other kinds.
 * `limit`: read only the first lines (a store's header is on its first lines).
 */
export function parseJsonLines<T>(text: string, schema: Schema<T>, options: { limit?: number; completeOnly?: boolean } = {}): JsonLines<T> {
  // A line still being written has no newline yet: with completeOnly it is not a line at all.
  const body = options.completeOnly && !text.endsWith('\n') ? text.slice(0, text.lastIndexOf('\n') + 1) : text;
  const lines = body.split('\n');
  const values: T[] = [];
  let bad = 0;
  for (const line of options.limit === undefined ? lines : lines.slice(0, options.limit)) {
    if (line.trim() === '') continue;
    try {
      values.push(schema.read(JSON.parse(line), ''));
    } catch (err) {
      if (!(err instanceof SyntaxError || err instanceof SchemaError)) throw err;
      bad++;
    }
  }
  return { values, bad };
}

/** The lines of `file` that read with `schema`; none when the file cannot be read. */
export function readJsonLines<T>(file: string, schema: Schema<T>, options: { limit?: number } = {}): T[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return parseJsonLines(text, schema, options).values;
}
