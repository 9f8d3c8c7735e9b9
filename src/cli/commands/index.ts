import type { Command } from '../command';
import { doctorCommand } from './doctor';
import { jobCommands } from './job';
import { sessionCommands } from './session';

export interface CommandGroup {
  name: string;
  summary: string;
}

/** Command groups in the order `mam --help` shows them. */
export const GROUPS: readonly CommandGroup[] = [
  { name: 'session', summary: 'agent sessions: list them (create, stop, resume, send … follow)' },
  { name: 'job', summary: 'delegated jobs: list, status, logs' },
];

export const COMMANDS: readonly Command[] = [...sessionCommands, ...jobCommands, doctorCommand];
