import { ExitCode, MamError, errorMessage } from '../core/base/errors';
import { printable } from '../core/base/ids';
import { buildCore, type Core } from '../core/core';
import * as path from 'node:path';
import { findWorkspace } from '../core/config/workspace';
import { GLOBAL_OPTIONS, parseCommandArgs, type OptionSpec } from './args';
import type { CliIo, Command, CommandContext } from './command';
import { COMMANDS, GROUPS } from './commands';
import { oneLine, stderrLogger } from './stderrLogger';
import { version } from '../../package.json';

/** Runs one `mam` invocation and resolves with its exit code. Never calls process.exit. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    if (err instanceof MamError) {
      io.stderr(`mam: ${oneLine(err.message)}\n`);
      return err.exitCode;
    }
    io.stderr(`mam: internal error: ${oneLine(errorMessage(err))}\n`);
    if (io.env.MAM_DEBUG) io.stderr(`${err instanceof Error ? (err.stack ?? '') : ''}\n`);
    return ExitCode.internal;
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    io.stdout(mainHelp());
    return first === undefined ? ExitCode.usage : ExitCode.ok;
  }
  if (first === '--version' || first === '-V') {
    io.stdout(`${version}\n`);
    return ExitCode.ok;
  }
  const group = GROUPS.find((g) => g.name === first);
  let command = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === first);
  let rest = argv.slice(1);
  // A group may also be a command of its own (`mam loop --task …` beside `mam loop status`).
  const subcommand = COMMANDS.find((c) => c.path[0] === first && c.path[1] === second);
  if (group && command && (subcommand || second === undefined || second === '--help' || second === '-h')) command = undefined;
  if (group && !command) {
    if (second === undefined || second === '--help' || second === '-h') {
      io.stdout(groupHelp(group.name));
      return second === undefined ? ExitCode.usage : ExitCode.ok;
    }
    command = COMMANDS.find((c) => c.path[0] === first && c.path[1] === second);
    if (!command) throw new MamError(`unknown command 'mam ${first} ${printable(second, 40)}'; see 'mam ${first} --help'`, 'usage', ExitCode.usage);
    rest = argv.slice(2);
  }
  if (!command) throw new MamError(`unknown command '${printable(first, 40)}'; see 'mam --help'`, 'usage', ExitCode.usage);

  const name = command.path.join(' ');
  const args = parseCommandArgs(name, rest, command.options ?? {}, command.positionals ?? []);
  if (args.options.help) {
    io.stdout(commandHelp(command));
    return ExitCode.ok;
  }
  const ctx = makeContext(args, io);
  try {
    return await command.run(ctx);
  } finally {
    ctx.dispose();
  }
}

function makeContext(args: CommandContext['args'], io: CliIo): CommandContext {
  const logger = stderrLogger(io);
  let workspace: string | undefined;
  let core: Core | undefined;
  const ctx: CommandContext = {
    args,
    io,
    logger,
    out: (line = '') => io.stdout(`${line}\n`),
    json: (value) => io.stdout(`${JSON.stringify(value, null, 2)}\n`),
    workspace: () => (workspace ??= findWorkspace({ flag: args.options.workspace, env: io.env, cwd: io.cwd }).root),
    core: () => (core ??= buildCore(ctx.workspace(), { env: io.env, logger, cliPath: cliPath() })),
    config: () => ctx.core().config,
    // The core resolves the settings first: a malformed .mam.env is reported before anything is touched.
    controlPlane: () => ctx.core().controlPlane,
    sessions: () => ctx.core().sessions,
    jobs: () => ctx.core().jobs,
    cliPath,
    dispose: () => core?.dispose(),
  };
  return ctx;
}

/** The bundled CLI agents run for events: dist/cli.js beside this bundle (dist/cli-main.js). */
function cliPath(): string {
  return path.join(__dirname, 'cli.js');
}

function mainHelp(): string {
  const lines = [
    `mam ${version} — Multi-Agent Mux: a team of terminal coding agents as resumable sessions, with tracked jobs`,
    '',
    'Usage: mam <command> [options]',
    '',
    'Commands:',
  ];
  const entries: Array<[string, string]> = [
    ...GROUPS.map((g): [string, string] => [g.name, g.summary]),
    // A group that is also a command of its own (`mam loop --task …`) is listed once, as the group.
    ...COMMANDS.filter((c) => c.path.length === 1 && !c.hidden && !GROUPS.some((g) => g.name === c.path[0])).map((c): [string, string] => [c.path[0]!, c.summary]),
  ];
  const width = Math.max(...entries.map(([n]) => n.length));
  for (const [n, s] of entries) lines.push(`  ${n.padEnd(width)}  ${s}`);
  lines.push('', 'Options:', '  --version   print the version', '  --help      show help (also after any command)', '');
  lines.push("Run 'mam <command> --help' for a command's options.", '');
  return lines.join('\n');
}

function groupHelp(groupName: string): string {
  const own = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === groupName);
  if (own) return `${commandHelp(own)}\n${subcommandsHelp(groupName)}`;
  return subcommandsHelp(groupName);
}

function subcommandsHelp(groupName: string): string {
  const group = GROUPS.find((g) => g.name === groupName)!;
  const members = COMMANDS.filter((c) => c.path[0] === groupName && c.path.length === 2 && !c.hidden);
  const width = Math.max(...members.map((c) => c.path[1]!.length));
  return [
    `mam ${groupName} — ${group.summary}`,
    '',
    `Usage: mam ${groupName} <command> [options]`,
    '',
    'Commands:',
    ...members.map((c) => `  ${c.path[1]!.padEnd(width)}  ${c.summary}`),
    '',
    `Run 'mam ${groupName} <command> --help' for a command's options.`,
    '',
  ].join('\n');
}

export function commandHelp(command: Command): string {
  const options: Record<string, OptionSpec> = { ...(command.options ?? {}), ...GLOBAL_OPTIONS };
  const positionals = command.positionals ?? [];
  const usage = [
    'mam',
    ...command.path,
    ...positionals.map((p) => `${p.required ? p.name.toUpperCase() : `[${p.name.toUpperCase()}]`}${p.variadic ? '…' : ''}`),
    ...Object.entries(command.options ?? {}).filter(([, o]) => o.required).map(([n, o]) => `--${n} ${o.value ?? 'VALUE'}`),
    Object.values(command.options ?? {}).some((o) => !o.required) ? '[options]' : '',
  ].filter(Boolean).join(' ');
  const rows: Array<[string, string]> = [
    ...positionals.map((p): [string, string] => [p.name.toUpperCase(), p.description]),
    ...Object.entries(options).map(([n, o]): [string, string] => [
      `${o.short ? `-${o.short}, ` : ''}--${n}${o.kind === 'boolean' ? '' : ` ${o.value ?? (o.kind === 'seconds' ? 'S' : o.kind === 'count' ? 'N' : 'VALUE')}`}${o.aliases?.length ? ` (also ${o.aliases.map((a) => `--${a}`).join(', ')})` : ''}`,
      o.description,
    ]),
  ];
  const width = Math.max(...rows.map(([n]) => n.length));
  return [
    `mam ${command.path.join(' ')} — ${command.summary}`,
    '',
    `Usage: ${usage}`,
    '',
    ...rows.map(([n, d]) => `  ${n.padEnd(width)}  ${d}`),
    ...(command.details ? ['', command.details.trimEnd()] : []),
    '',
  ].join('\n');
}
