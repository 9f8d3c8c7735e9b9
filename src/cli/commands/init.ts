import { MamError, UsageError } from '../../core/base/errors';
import { initWorkspace, type InitItem, type InitResult } from '../../core/init/initWorkspace';
import { findEnclosingAgent } from '../../core/sessions/enclosingAgent';
import { defineCommand, JSON_OPTION, type CommandContext } from '../command';

export const initCommand = defineCommand({
  path: ['init'],
  summary: 'set the workspace up for a team: .mam/, a .mam.env template, skills and AGENTS.md rules for agents, their MCP server',
  options: {
    update: { kind: 'boolean', description: 'refresh what mam init installed, except files edited since' },
    remove: { kind: 'boolean', description: 'take back what mam init added, except files edited since' },
    ...JSON_OPTION,
  },
  details: [
    'Creates .mam/ (which ignores itself) and, when missing: .mam.env (every setting commented out, mode',
    '0600, listed in git\'s per-clone .git/info/exclude instead of your .gitignore), the skills',
    '.agents/skills/mam-*/ and .claude/skills/mam-*/ (SKILL.md; mam-jobs also references/job-types.md), and the team\'s rules: a MAM section in',
    'AGENTS.md (between <!-- mam:begin --> and <!-- mam:end -->; the rest of the file is never touched) and',
    '.claude/rules/mam.md (Claude Code does not read AGENTS.md). And MAM\'s MCP server (node <this CLI> mcp',
    '--workspace <root>) as "mam" in each agent CLI\'s project config, beside your other servers: .mcp.json',
    '(Claude Code, which asks you once to approve it), .codex/config.toml (Codex, in a project it trusts),',
    '.gemini/settings.json (Gemini CLI, in a folder it trusts) and opencode.json (or your opencode.jsonc); a file',
    'it cannot parse is named and left alone.',
    'Run from an agent\'s shell (claude, codex), it registers that agent\'s conversation as the orchestrator\'s.',
    '.mam/init.json records what was written and its SHA-256: running init again changes nothing, and',
    'neither --update nor --remove touches a file you edited. --update also adds what a newer MAM installs and',
    'takes back what it no longer does. The workspace: --workspace, MAM_WORKSPACE,',
    'the nearest folder holding .mam/, the git root, else the current folder.',
    '',
    'Exit status: 0 done (also when nothing needed doing); 64 bad input.',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    if (o.update && o.remove) throw new UsageError('mam init: --update and --remove do not go together');
    const mode = o.remove ? 'remove' : o.update ? 'update' : 'install';
    const result = await initWorkspace({
      workspace: workspaceOf(ctx),
      cliPath: ctx.cliPath(),
      mode,
      ...(mode === 'remove' ? {} : { enclosingAgent: findEnclosingAgent(process.pid, ctx.io.env) }),
    });
    if (o.json) ctx.json(result);
    else print(ctx, result);
    return 0;
  },
});

/** Like every command's, except that a folder with neither .mam/ nor git is set up where it is. */
function workspaceOf(ctx: CommandContext): string {
  try {
    return ctx.workspace();
  } catch (err) {
    if (err instanceof MamError && err.code === 'no_workspace') return ctx.io.cwd;
    throw err;
  }
}

function print(ctx: CommandContext, r: InitResult): void {
  ctx.out(`MAM workspace ${r.workspace}`);
  // What is already in place goes without saying; --json lists it.
  const shown = r.items.filter((i) => i.action !== 'unchanged');
  const width = Math.max(0, ...shown.map((i) => i.action.length));
  for (const i of shown) ctx.out(`  ${i.action.padEnd(width)}  ${i.path}${i.note ? `: ${i.note}` : ''}`);
  const o = r.orchestrator;
  if (o) ctx.out(o.registered ? `Orchestrator: ${o.added ? 'registered' : 'already registered'}: ${o.agent} conversation ${o.conversation_id} (from ${o.how}).` : `Orchestrator: none registered: ${o.why}.`);
  ctx.out(summary(r));
}

function summary(r: InitResult): string {
  const count = (action: InitItem['action']) => r.items.filter((i) => i.action === action).length;
  const kept = count('kept');
  const keptNote = kept ? ` ${kept} kept as you left ${kept === 1 ? 'it' : 'them'}.` : '';
  if (r.mode === 'remove') return r.changed ? `Took back what mam init added.${keptNote}` : `Nothing to remove.${keptNote}`;
  if (r.changed) return `Done. Agents find the skills in .agents/skills/ and .claude/skills/, and MAM's MCP server in their project configs.${keptNote}`;
  const outdated = count('outdated');
  return `Nothing changed: this workspace is already set up (${count('unchanged')} files in place).${outdated ? ` ${outdated} installed file${outdated === 1 ? ' is' : 's are'} outdated: mam init --update refreshes ${outdated === 1 ? 'it' : 'them'}.` : ''}${keptNote}`;
}
