import { errorMessage, ValidationError } from '../base/errors';
import { anything, int, list, obj, parse as parseWith } from '../base/schema';
import { SESSION_FIELDS, validateSessionRow, type SessionRow } from './sessionSchema';

/** The registry at one revision. `revision` counts committed writes. */
export interface RegistrySnapshot {
  revision: number;
  sessions: SessionRow[];
}

const HEADER = `# Multi-Agent Mux session registry: a mirror of agent-sessions.db, rewritten after every change.
# The DB is the source of truth; change sessions with \`mam session ...\`, not by editing this file.
`;

/**
 * Renders the mirror. The rows are flat records of known fields, so they are written directly
 * (the yaml library's general emitter costs ~50 µs a row, and this runs on every write); strings
 * are plain only when no YAML reader could take them for anything else, and JSON-quoted otherwise,
 * which is valid YAML. `parseMirror` reads it back with the yaml library, and tests check both agree.
 */
export function renderMirror(snapshot: RegistrySnapshot): string {
  const lines = [HEADER.trimEnd(), `revision: ${snapshot.revision}`];
  if (snapshot.sessions.length === 0) lines.push('sessions: []');
  else lines.push('sessions:');
  for (const row of snapshot.sessions) {
    SESSION_FIELDS.forEach((field, i) => {
      lines.push(`${i === 0 ? '  - ' : '    '}${field}: ${scalar(row[field])}`);
    });
  }
  return `${lines.join('\n')}\n`;
}

const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./%@+-]*$/;
const AMBIGUOUS = /^(true|false|null|yes|no|on|off|y|n|nan|inf)$/i;

function scalar(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(scalar).join(', ')}]`;
  const text = String(value);
  return PLAIN.test(text) && !AMBIGUOUS.test(text) ? text : JSON.stringify(text);
}

// The rows are read one by one (validateSessionRow), each error naming its session.
const mirrorSchema = obj({ revision: int({ min: 0, why: 'must be a non-negative integer' }), sessions: list(anything) }, { why: 'is not a registry mapping' });

/** Parses and validates the YAML mirror; throws with the reason when it is not a valid registry. */
export function parseMirror(text: string): RegistrySnapshot {
  // Loaded only here: the mirror is written by hand, and read only when it disagrees with the DB.
  const { parse } = require('yaml') as typeof import('yaml');
  let doc: unknown;
  try {
    doc = parse(text, { strict: true, uniqueKeys: true, maxAliasCount: 0 });
  } catch (err) {
    throw new ValidationError(`not valid YAML: ${errorMessage(err).split('\n')[0]}`);
  }
  const { revision, sessions } = parseWith(mirrorSchema, doc, (problem) => new ValidationError(problem), 'the mirror');
  const rows = sessions.map((s, i) => validateSessionRow(s, `agent-sessions.yaml sessions[${i}]`));
  const names = new Set<string>();
  for (const row of rows) {
    if (names.has(row.name)) throw new ValidationError(`session '${row.name}' appears twice`);
    names.add(row.name);
  }
  rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { revision, sessions: rows };
}
