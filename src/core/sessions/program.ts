import * as path from 'node:path';
import type { AgentAdapter } from '../agents';
import { AGENT_NAMES } from '../agents/adapter';
import { UsageError } from '../base/errors';
import { isExecutable, whichProgram } from '../base/process';
import { isOneOf } from '../base/schema';
import type { ResolvedConfig } from '../config/settings';

/**
 * What a session of `adapter` runs: the user's `command` when given (a shell agent's command runs
 * as it is, without the adapter's arguments), else the agent's MAM_AGENT_COMMAND_<AGENT> override
 * (`agents`), else its CLI with its default arguments.
 */
export function agentCommand(adapter: AgentAdapter, command: readonly string[] | undefined, agents: ResolvedConfig['agents']): { program: string[]; args: string[] } {
  const override = isOneOf(AGENT_NAMES, adapter.name) ? agents[adapter.name] : undefined;
  const program = command && command.length > 0 ? [...command] : override?.program ?? [...adapter.program];
  if (program.length === 0) throw new UsageError(`the ${adapter.name} agent needs --command "program args…"`);
  const args = command && command.length > 0 && adapter.name === 'shell' ? [] : override?.args ?? [...adapter.defaultArgs];
  return { program, args };
}

/** A missing agent CLI is a clear error before anything is registered or placed. */
export function checkAgentProgram(argv: readonly string[], cwd: string, adapter: AgentAdapter, searchPath: string): void {
  const missing = findProgram(argv[0]!, cwd, searchPath);
  if (missing) throw new UsageError(`${missing}; install it, or point MAM_AGENT_COMMAND_${adapter.name.toUpperCase()} at it`, 'program_not_found');
}

/**
 * Checks that `program` can be started: a path (relative to `cwd`) to an executable file, or a
 * name found on `PATH`. Returns why it cannot, or undefined when it can. Checked before a pane is
 * placed, so a missing agent CLI is a clear error instead of a pane that closes at once.
 */
export function findProgram(program: string, cwd: string, searchPath: string): string | undefined {
  if (program.includes('/')) {
    const file = path.resolve(cwd, program);
    return isExecutable(file) ? undefined : `agent command '${program}' is not an executable file`;
  }
  return whichProgram(program, searchPath) ? undefined : `agent command '${program}' was not found on PATH`;
}
