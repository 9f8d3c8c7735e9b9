import { bool, int, list, num, obj, oneOf, optional, reject, str, type ObjectOf, type OptionalSchema, type Schema } from '../core/base/schema';

/**
 * A tool's inputs, declared once: the JSON Schema an MCP client is shown, and the reader (the
 * project's own schema kit, as for everything from the wire) that turns the arguments it sends
 * into a typed value or one line naming the field. No zod: the SDK's high-level McpServer takes
 * only zod schemas, so the server uses the SDK's low-level Server and says its schemas itself.
 */
export interface Arg<S extends Schema<unknown>> {
  readonly schema: S;
  readonly json: Readonly<Record<string, unknown>>;
}

type Args = { readonly [name: string]: Arg<Schema<unknown>> };
type SchemasOf<A extends Args> = { [K in keyof A]: A[K]['schema'] };

export interface ToolInput<T> {
  readonly schema: Schema<T>;
  /** The JSON Schema of the arguments object (`inputSchema`). */
  readonly json: { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties: false };
}

interface Common {
  description: string;
}
interface TextRule extends Common {
  /** At most this many characters (default 200: names, IDs, paths). */
  max?: number;
  enum?: readonly string[];
}
interface NumberRule extends Common {
  /** At least this (inclusive). */
  min?: number;
  /** More than this. */
  above?: number;
  max?: number;
}

function required<T>(schema: Schema<T>, json: Record<string, unknown>): Arg<Schema<T>> {
  return { schema: { read: (v, at) => (v === undefined ? reject(at, 'is required') : schema.read(v, at)) }, json };
}

function optionalArg<T>(schema: Schema<T>, json: Record<string, unknown>): Arg<OptionalSchema<T>> {
  return { schema: optional(schema), json };
}

function textSchema(rule: TextRule): [Schema<string>, Record<string, unknown>] {
  const max = rule.max ?? 200;
  if (rule.enum) return [oneOf(rule.enum), { type: 'string', enum: [...rule.enum], description: rule.description }];
  return [str({ min: 1, max, why: `must be a non-empty string of at most ${max} characters` }), { type: 'string', minLength: 1, maxLength: max, description: rule.description }];
}

function numberSchema(whole: boolean, rule: NumberRule): [Schema<number>, Record<string, unknown>] {
  const bounds = { ...(rule.min !== undefined ? { min: rule.min } : {}), ...(rule.above !== undefined ? { above: rule.above } : {}), ...(rule.max !== undefined ? { max: rule.max } : {}) };
  const json = {
    type: whole ? 'integer' : 'number', description: rule.description,
    ...(rule.min !== undefined ? { minimum: rule.min } : {}), ...(rule.above !== undefined ? { exclusiveMinimum: rule.above } : {}), ...(rule.max !== undefined ? { maximum: rule.max } : {}),
  };
  return [whole ? int(bounds) : num(bounds), json];
}

/** The kinds of input a tool takes; `arg.x` is optional, `arg.x.required` is not. */
export const arg = {
  text: Object.assign((rule: TextRule) => optionalArg(...textSchema(rule)), { required: (rule: TextRule) => required(...textSchema(rule)) }),
  seconds: (rule: Common) => optionalArg(...numberSchema(false, { above: 0, ...rule })),
  count: Object.assign((rule: NumberRule) => optionalArg(...numberSchema(true, rule)), { required: (rule: NumberRule) => required(...numberSchema(true, rule)) }),
  flag: (rule: Common) => optionalArg(bool(), { type: 'boolean', description: rule.description }),
  texts: Object.assign(
    (rule: Common & { min?: number; max?: number; itemMax?: number }) => optionalArg(...textList(rule)),
    { required: (rule: Common & { min?: number; max?: number; itemMax?: number }) => required(...textList(rule)) },
  ),
};

function textList(rule: Common & { min?: number; max?: number; itemMax?: number }): [Schema<string[]>, Record<string, unknown>] {
  const itemMax = rule.itemMax ?? 200;
  const [item] = textSchema({ description: rule.description, max: itemMax });
  const min = rule.min ?? 1;
  const max = rule.max ?? 50;
  return [
    list(item, { min, max, why: `must be a list of ${min} to ${max} strings` }),
    { type: 'array', items: { type: 'string', minLength: 1, maxLength: itemMax }, minItems: min, maxItems: max, description: rule.description },
  ];
}

/** The inputs of one tool: unknown fields are refused by name (a misspelt option must not be ignored). */
export function input<const A extends Args>(args: A): ToolInput<ObjectOf<SchemasOf<A>>> {
  const shape = Object.fromEntries(Object.entries(args).map(([k, a]) => [k, a.schema])) as SchemasOf<A>;
  const requiredNames = Object.entries(args).filter(([, a]) => !('optional' in a.schema)).map(([k]) => k);
  return {
    schema: obj(shape, { extra: 'refuse', unknown: (key) => [key, 'is not an input of this tool'], why: 'must be an object of named inputs' }),
    json: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(args).map(([k, a]) => [k, a.json])),
      ...(requiredNames.length ? { required: requiredNames } : {}),
      additionalProperties: false,
    },
  };
}
