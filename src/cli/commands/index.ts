import type { Command } from '../command';
import { doctorCommand } from './doctor';
import { jobCommands } from './job';
import { orchestratorCommands } from './orchestrator';
import { sessionCommands } from './session';
import { worktreeCommands } from './worktree';

export interface CommandGroup {
  name: string;
  summary: string;
}

/** Command groups in the order `mam --help` shows them. */
export const GROUPS: readonly CommandGroup[] = [
  { name: 'session', summary: 'agent sessions: create, stop, resume, status, send, monitor, list' },
  { name: 'job', summary: 'delegated jobs: list, status, logs' },
  { name: 'worktree', summary: 'issue worktrees for creators: prepare, remove' },
  { name: 'orchestrator', summary: "register the orchestrator's own conversation" },
];

export const COMMANDS: readonly Command[] = [...sessionCommands, ...jobCommands, ...worktreeCommands, ...orchestratorCommands, doctorCommand];
