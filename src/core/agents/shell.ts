import type { AgentAdapter } from './adapter';

/**
 * `shell`: any command (`--command "argv"`), for agents MAM has no adapter for and for scripted
 * agents. It has no conversation: resuming runs the same command again in the same folder.
 */
export const shell: AgentAdapter = {
  name: 'shell',
  program: [],
  defaultArgs: [],
  environment: () => ({}),
  exitSteps: [{ keys: ['C-c'] }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args) => [...program, ...args],
  async purgePlan() {
    return { unsupported: 'a shell session has no stored conversation' };
  },
};
