import type { Logger } from '../core/base/log';
import type { ControlPlane } from '../core/store/controlPlane';
import type { ResolvedConfig } from '../core/config/settings';
import type { SessionService } from '../core/sessions/sessionService';
import type { JobEngine } from '../core/jobs/jobEngine';
import type { Core } from '../core/core';
import type { OptionSpecs, ParsedArgs, PositionalSpec } from './args';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What a command gets: its parsed arguments (typed by its option spec), output, and the workspace, resolved on first use. */
export interface CommandContext<O extends OptionSpecs = OptionSpecs> {
  args: ParsedArgs<O>;
  io: CliIo;
  logger: Logger;
  /** Prints a line (a table row, a message) to stdout. */
  out(line?: string): void;
  /** Prints a value as JSON to stdout. */
  json(value: unknown): void;
  workspace(): string;
  /** The workspace's core (core.ts), built on first use; the accessors below are its parts. */
  core(): Core;
  config(): ResolvedConfig;
  controlPlane(): ControlPlane;
  sessions(): SessionService;
  /** The jobs engine (connects to the broker only when a command asks it to). */
  jobs(): JobEngine;
  /** The bundled CLI (dist/cli.js) that agents are told to run. */
  cliPath(): string;
  /** Releases what the command opened (the broker connection). */
  dispose(): void;
}

export interface Command<O extends OptionSpecs = OptionSpecs> {
  /** Words after `mam`, e.g. ['session', 'list']. */
  path: readonly string[];
  summary: string;
  options?: O;
  positionals?: readonly PositionalSpec[];
  /** Extra lines for `--help`: examples, notes. */
  details?: string;
  /** Left out of `mam --help` and group help (an internal entry point, e.g. `broker serve`); `--help` after it still works. */
  hidden?: boolean;
  /** Resolves with the exit code. */
  run(ctx: CommandContext<O>): Promise<number>;
}

/**
 * A command whose `run` sees its own options typed: `--name` declared `{ kind: 'string', required: true }`
 * is `ctx.args.options.name: string`, an optional `seconds` option is `number | undefined`.
 * (`const` keeps the spec's literal kinds, so nothing needs `as const` at the call.)
 */
export function defineCommand<const O extends OptionSpecs = {}>(command: Command<O>): Command<O> {
  return command;
}

/** Options several commands share are declared `as const` so they keep their types when spread in. */
export const JSON_OPTION = {
  json: { kind: 'boolean', description: 'print JSON instead of text' },
} as const satisfies OptionSpecs;
