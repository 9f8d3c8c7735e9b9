import { printable } from './printable';

/**
 * The one way MAM reads what comes from disk and the wire (STYLE.md: parse, don't validate). A
 * schema turns an untrusted value into a typed one, or throws one SchemaError naming the field by
 * its path from the root (`rounds[0].identity.tree must be a string`); the caller says which file
 * or message it was. A kit of our own rather than a schema library: measured against valibot, zod
 * and zod/mini, it adds the least to `mam event`, the process agents start for every event (zod
 * makes it ~19 ms slower; valibot is within the noise but 19 KB larger: docs/benchmarks.md, "Schema
 * kit: why our own"). It uses none of Node's APIs: the report webview's script reads its messages
 * with it too.
 */

export class SchemaError extends Error {
  constructor(
    /** The path of the field from the root (`steps[2].job_id`); '' for the value itself. */
    readonly field: string,
    /** What is wrong with it, as the end of a sentence: `must be a string`. */
    readonly why: string,
  ) {
    super(field === '' ? why : `${field} ${why}`);
    this.name = 'SchemaError';
  }
}

export interface Schema<T> {
  /** `value` as a T, or a SchemaError naming `at` (or a field below it). */
  readonly read: (value: unknown, at: string) => T;
}

/** A field that may be absent from its object. */
export interface OptionalSchema<T> extends Schema<T | undefined> {
  readonly optional: true;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** Throws the SchemaError of a custom schema. */
export function reject(at: string, why: string): never {
  throw new SchemaError(at, why);
}

/** A plain (non-array) object, e.g. what JSON.parse gave, with its fields readable. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a.b`, or `b` at the root. */
export function fieldPath(at: string, key: string): string {
  return at === '' ? key : `${at}.${key}`;
}

/**
 * Reads `value` with `schema`. The problem (`field why`, or `root why` when the value itself is
 * wrong) becomes the error `fault` makes of it: the caller adds the file or message it came from.
 */
export function parse<T>(schema: Schema<T>, value: unknown, fault: (problem: string) => Error = (p) => new SchemaError('', p), root = 'the value'): T {
  try {
    return schema.read(value, '');
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    throw fault(err.field === '' && root !== '' ? `${root} ${err.why}` : err.message);
  }
}

/** Whether `value` reads with `schema` (a guard for messages that are dropped, not explained). */
export function matches<T>(schema: Schema<T>, value: unknown): value is T {
  try {
    schema.read(value, '');
    return true;
  } catch (err) {
    if (err instanceof SchemaError) return false;
    throw err;
  }
}

export function custom<T>(read: (value: unknown, at: string) => T): Schema<T> {
  return { read };
}

/**
 * A schema built on its first read. Building one compiles the kit's factories (~0.3 ms in a cold
 * process), and its code is parsed with the bundle: a module that `mam event` loads (it starts once
 * per event) but seldom reads with defines its schemas with `lazy`, the call marked `@__PURE__`:
 * the process builds only what it reads, and esbuild leaves out of a bundle what it never reads
 * (docs/benchmarks.md).
 */
export function lazy<T>(build: () => Schema<T>): Schema<T> {
  let built: Schema<T> | undefined;
  return { read: (v, at) => (built ??= build()).read(v, at) };
}

/** Anything at all, as `unknown`: a field kept but not looked into. */
export const anything: Schema<unknown> = { read: (value) => value };

/** Any plain object, its fields not looked into yet (a line of an agent's store, a foreign file). */
export const anyObject: Schema<Record<string, unknown>> = { read: (v, at) => (isRecord(v) ? v : reject(at, 'must be an object')) };

export interface TextRule {
  pattern?: RegExp;
  min?: number;
  max?: number;
  /** The message for any failure, the type's included (`must be a job ID`). */
  why?: string;
}

export function str(rule: TextRule = {}): Schema<string> {
  const { pattern, min = 0, max = Infinity, why } = rule;
  return {
    read(v, at) {
      if (typeof v !== 'string') return reject(at, why ?? 'must be a string');
      if (v.length < min) return reject(at, why ?? (min === 1 ? 'must not be empty' : `must be at least ${min} characters long`));
      if (v.length > max) return reject(at, why ?? `must be at most ${max} characters long`);
      if (pattern && !pattern.test(v)) return reject(at, why ?? 'is not in the expected form');
      return v;
    },
  };
}

export interface NumberRule {
  min?: number;
  max?: number;
  /** Strictly more than this. */
  above?: number;
  why?: string;
}

function numberSchema(whole: boolean, rule: NumberRule): Schema<number> {
  const { min = -Infinity, max = Infinity, above = -Infinity } = rule;
  const bounds = [min > -Infinity ? ` ≥ ${min}` : '', above > -Infinity ? ` > ${above}` : '', max < Infinity ? ` ≤ ${max}` : ''].join('');
  const why = rule.why ?? `must be a ${whole ? 'whole number' : 'number'}${bounds}`;
  return {
    read(v, at) {
      const ok = typeof v === 'number' && (whole ? Number.isSafeInteger(v) : Number.isFinite(v)) && v >= min && v > above && v <= max;
      return ok ? v : reject(at, why);
    },
  };
}

/** A finite number. */
export function num(rule: NumberRule = {}): Schema<number> {
  return numberSchema(false, rule);
}

/** A whole number (a safe integer). */
export function int(rule: NumberRule = {}): Schema<number> {
  return numberSchema(true, rule);
}

export function bool(why = 'must be true or false'): Schema<boolean> {
  return { read: (v, at) => (typeof v === 'boolean' ? v : reject(at, why)) };
}

/** Exactly `value`. */
export function lit<const T extends string | number | boolean>(value: T, why = `must be ${JSON.stringify(value)}`): Schema<T> {
  return { read: (v, at) => (v === value ? value : reject(at, why)) };
}

/** Whether `value` is one of `values` (a guard for a flag or a name checked where it is given). */
export function isOneOf<const T extends string | number>(values: readonly T[], value: unknown): value is T {
  return values.some((v) => v === value);
}

/** One of a fixed list of strings (or numbers). */
export function oneOf<const T extends string | number>(values: readonly T[], why?: string): Schema<T> {
  return {
    read(v, at) {
      const found = values.find((x) => x === v);
      return found !== undefined ? found : reject(at, why ?? `must be one of ${values.join(', ')} (got '${printable(String(v), 40)}')`);
    },
  };
}

/**
 * `null`, or what `schema` reads. `absent`: a missing field reads as null too. A failure of the
 * value itself says so (`must be a string or null`), unless `why` says it otherwise.
 */
export function nullable<T>(schema: Schema<T>, options: { why?: string; absent?: boolean } = {}): Schema<T | null> {
  return {
    read(v, at) {
      if (v === null || (options.absent === true && v === undefined)) return null;
      try {
        return schema.read(v, at);
      } catch (err) {
        if (err instanceof SchemaError && err.field === at) throw new SchemaError(at, options.why ?? `${err.why} or null`);
        throw err;
      }
    },
  };
}

/** A field that may be missing; when present it must read with `schema`. */
export function optional<T>(schema: Schema<T>): OptionalSchema<T> {
  return { optional: true, read: (v, at) => (v === undefined ? undefined : schema.read(v, at)) };
}

/** `schema`, then a check of the typed value: a problem (`is not a session name`) or undefined. */
export function refine<T>(schema: Schema<T>, problem: (value: T) => string | undefined): Schema<T> {
  return {
    read(v, at) {
      const value = schema.read(v, at);
      const why = problem(value);
      return why === undefined ? value : reject(at, why);
    },
  };
}

export interface ListRule {
  min?: number;
  max?: number;
  /** The message when the value is not a list, or is too short or too long. */
  why?: string;
}

export function list<T>(item: Schema<T>, rule: ListRule = {}): Schema<T[]> {
  const { min = 0, max = Infinity, why } = rule;
  return {
    read(v, at) {
      if (!Array.isArray(v)) return reject(at, why ?? 'must be a list');
      if (v.length < min || v.length > max) return reject(at, why ?? `must hold ${min}${max < Infinity ? ` to ${max}` : ' or more'} items`);
      return v.map((x, i) => item.read(x, `${at}[${i}]`));
    },
  };
}

type Shape = { readonly [key: string]: Schema<unknown> };
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends OptionalSchema<unknown> ? K : never }[keyof S];
type Flat<T> = { [K in keyof T]: T[K] } & {};
/** What `obj(shape)` reads: a field per schema, optional where the schema is. */
export type ObjectOf<S extends Shape> = Flat<
  { -readonly [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { -readonly [K in OptionalKeys<S>]?: Infer<S[K]> }
>;

export interface ObjectRule {
  /**
   * Fields the shape does not name: kept as they are (the default: records MAM writes itself, so
   * that a newer MAM's fields survive an older one's rewrite), dropped, or refused (messages).
   */
  extra?: 'keep' | 'strip' | 'refuse';
  /** Where and why a refused field is reported: by default, at the object (`has an unknown field 'x'`). */
  unknown?: (key: string, at: string) => [field: string, why: string];
  /** The message when the value is not an object. */
  why?: string;
  /** The path a field is reported at (default `at.key`). */
  childPath?: (at: string, key: string) => string;
}

const unknownField = (key: string, at: string): [string, string] => [at, `has an unknown field '${printable(key, 40)}'`];

export function obj<const S extends Shape>(shape: S, rule: ObjectRule = {}): Schema<ObjectOf<S>> {
  const keys = Object.keys(shape);
  const known = new Set(keys);
  const { extra = 'keep', unknown = unknownField, why = 'must be an object', childPath = fieldPath } = rule;
  return {
    read(v, at) {
      if (!isRecord(v)) return reject(at, why);
      if (extra === 'refuse') {
        for (const key of Object.keys(v)) if (!known.has(key)) reject(...unknown(key, at));
      }
      const out: Record<string, unknown> = extra === 'keep' ? { ...v } : {};
      for (const key of keys) {
        const value = shape[key]!.read(v[key], childPath(at, key));
        if (value === undefined) delete out[key];
        else out[key] = value;
      }
      // The one place a parsed object meets its type: each field above was read by its schema.
      return out as ObjectOf<S>;
    },
  };
}

/** An object used as a map: any keys (each checked by `key`, if given), every value read by `value`. */
export function record<T>(value: Schema<T>, rule: { key?: (key: string) => string | undefined; why?: string; childPath?: (at: string, key: string) => string } = {}): Schema<Record<string, T>> {
  const { why = 'must be an object', childPath = fieldPath } = rule;
  return {
    read(v, at) {
      if (!isRecord(v)) return reject(at, why);
      const out: Record<string, T> = {};
      for (const [k, x] of Object.entries(v)) {
        const problem = rule.key?.(k);
        if (problem !== undefined) reject(childPath(at, k), problem);
        out[k] = value.read(x, childPath(at, k));
      }
      return out;
    },
  };
}

/**
 * One of several object shapes, told apart by the string in field `key` (`kind`, `type`): each
 * option's schema reads the whole object.
 */
export function variant<const M extends { readonly [tag: string]: Schema<unknown> }>(key: string, options: M, why = 'must be an object'): Schema<Infer<M[keyof M]>> {
  const tags = Object.keys(options);
  return {
    read(v, at) {
      if (!isRecord(v)) return reject(at, why);
      const tag = v[key];
      const option = typeof tag === 'string' && Object.hasOwn(options, tag) ? options[tag] : undefined;
      if (option === undefined) return reject(fieldPath(at, key), `must be one of ${tags.join(', ')} (got '${printable(String(tag), 40)}')`);
      // The option was chosen by its own tag; its schema reads the value.
      return option.read(v, at) as Infer<M[keyof M]>;
    },
  };
}

/** The first schema that reads the value; a failure is reported as `why` at the value's path. */
export function either<A, B>(a: Schema<A>, b: Schema<B>, why: string): Schema<A | B> {
  return {
    read(v, at) {
      for (const s of [a, b]) {
        try {
          return s.read(v, at);
        } catch (err) {
          if (!(err instanceof SchemaError)) throw err;
        }
      }
      return reject(at, why);
    },
  };
}
