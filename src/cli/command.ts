import type { Logger } from '../core/base/log';
import type { ControlPlane } from '../core/store/controlPlane';
import type { ResolvedConfig } from '../core/config/settings';
import type { SessionService } from '../core/sessions/sessionService';
import type { JobEngine } from '../core/jobs/jobEngine';
import type { OptionSpec, ParsedArgs, PositionalSpec } from './args';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** What a command gets: its parsed arguments, output, and the workspace, resolved on first use. */
export interface CommandContext {
  args: ParsedArgs;
  io: CliIo;
  logger: Logger;
  /** Prints a line (a table row, a message) to stdout. */
  out(line?: string): void;
  /** Prints a value as JSON to stdout. */
  json(value: unknown): void;
  workspace(): string;
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

export interface Command {
  /** Words after `mam`, e.g. ['session', 'list']. */
  path: readonly string[];
  summary: string;
  options?: Record<string, OptionSpec>;
  positionals?: readonly PositionalSpec[];
  /** Extra lines for `--help`: examples, notes. */
  details?: string;
  /** Left out of `mam --help` and group help (an internal entry point, e.g. `broker serve`); `--help` after it still works. */
  hidden?: boolean;
  /** Resolves with the exit code. */
  run(ctx: CommandContext): Promise<number>;
}

export const JSON_OPTION: Record<string, OptionSpec> = {
  json: { kind: 'boolean', description: 'print JSON instead of text' },
};
