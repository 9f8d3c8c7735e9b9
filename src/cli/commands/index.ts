import type { Command } from '../command';
import { brokerCommands } from './broker';
import { conflictsCommand } from './conflicts';
import { demoCommand } from './demo';
import { doctorCommand } from './doctor';
import { initCommand } from './init';
import { jobCommands } from './job';
import { loopCommands } from './loop';
import { mcpCommand } from './mcp';
import { planCommands } from './plan';
import { mergeCommands } from './merge';
import { monitorCommand } from './monitor';
import { orchestratorCommands } from './orchestrator';
import { remoteCommands } from './remote';
import { sessionCommands } from './session';
import { worktreeCommands } from './worktree';

export interface CommandGroup {
  name: string;
  summary: string;
}

/** Command groups in the order `mam --help` shows them. */
export const GROUPS: readonly CommandGroup[] = [
  { name: 'session', summary: 'agent sessions: create, stop, resume, status, send, monitor, list' },
  { name: 'job', summary: 'delegated jobs: submit, wait, cancel, verify, list, status, logs' },
  { name: 'loop', summary: 'the review loop: mam loop --task … --creator S --reviewer A,B; status, list, resume, cancel' },
  { name: 'plan', summary: 'a plan of tasks run to landed code: run FILE, status, list, resume, cancel, draft' },
  { name: 'worktree', summary: 'issue worktrees for creators: prepare, remove' },
  { name: 'merge', summary: 'the local merge queue: enqueue, status, run, remove' },
  { name: 'orchestrator', summary: "register the orchestrator's own conversation" },
  { name: 'broker', summary: 'the embedded MQTT broker: start, stop, status' },
  { name: 'remote', summary: 'remote runners: run jobs dispatched from another host' },
];

export const COMMANDS: readonly Command[] = [...sessionCommands, ...jobCommands, ...loopCommands, ...planCommands, ...worktreeCommands, ...mergeCommands, ...orchestratorCommands, ...brokerCommands, ...remoteCommands, initCommand, monitorCommand, conflictsCommand, doctorCommand, demoCommand, mcpCommand];
