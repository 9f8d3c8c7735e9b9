import * as path from 'node:path';
import { doubleQuote } from '../base/shellWords';
import { MCP_SERVER_NAME } from './mcpServer';

/** What every skill's text is written with: the commands as this install runs them, and the shared lines. */
export interface SkillText {
  /** `node "<cli>"`: `mam` by the absolute path of the bundled CLI, so no install or PATH is needed. */
  mam: string;
  /** `node "<dist>/delegate-job.js"`: the seeds' `multi-agent-mux-delegate-job`, installed beside `mam`. */
  delegate: string;
  workspace: string;
  /** Where to run the commands from, and what every command takes. */
  where: string;
  /** The "Exit codes" section: `lines` first, then 64 and 70, which every command shares. */
  exits(...lines: string[]): string;
  /** A bullet naming the `mam` MCP server's tools that do what the skill's commands do (then `more`). */
  mcp(tools: readonly string[], more?: string): string;
}

export function skillText(cli: string, workspace: string): SkillText {
  return {
    mam: `node ${doubleQuote(cli)}`,
    delegate: `node ${doubleQuote(path.join(path.dirname(cli), 'delegate-job.js'))}`,
    workspace,
    where: `Run every command from inside \`${workspace}\`. Each takes \`--help\`; read commands take \`--json\`.`,
    exits: (...lines) =>
      [
        '## Exit codes',
        '',
        ...lines.map((l) => `- ${l}`),
        '- 64: bad flags or input; nothing changed. Fix the command from the one-line error.',
        '- 70: a MAM bug. Report stderr (`MAM_DEBUG=1` adds the stack).',
      ].join('\n'),
    mcp: (tools, more) =>
      bullet(`The same as MCP tools of the \`${MCP_SERVER_NAME}\` server, which \`mam init\` registers for Claude Code, Codex, Gemini CLI and opencode: ${tools.map((n) => `\`${n}\``).join(', ')} (the same inputs; the records \`--json\` prints).${more ? ` ${more}` : ''}`),
  };
}

/** `text` as a markdown bullet wrapped at 100 columns, as the skills' other bullets are. */
function bullet(text: string): string {
  const lines: string[] = [];
  let line = '-';
  for (const word of text.split(' ')) {
    if (line.length + 1 + word.length > 100 && line.trim() !== '-') {
      lines.push(line);
      line = ' ';
    }
    line += ` ${word}`;
  }
  return [...lines, line].join('\n');
}

/** One skill as Claude Code and Codex read it: a folder holding SKILL.md, and files it points to. */
export interface Skill {
  name: string;
  /** When to use it: agents pick a skill by this line alone. */
  description: string;
  /** The seeds' metadata (Hermes Agent reads them under `metadata.hermes`). */
  tags: readonly string[];
  related: readonly string[];
  prereq: readonly string[];
  body: string;
  /** Files beside SKILL.md that it names (the standard's `references/`), read only when needed. */
  files?: readonly SkillFile[];
}

export interface SkillFile {
  /** Relative to the skill's folder, `/`-separated. */
  path: string;
  content: string;
}
