import type { AgentAdapter } from './adapter';

/**
 * agy (Google Antigravity CLI). Not published where we can install it; from the product spec and
 * third-party notes only: `--conversation <id>` resumes. Its store is protobuf with no documented
 * cwd, so the conversation ID is not discovered: a session stopped without one cannot be resumed
 * (`mam session status` shows it), and purge is not offered.
 */
export const agy: AgentAdapter = {
  name: 'agy',
  program: ['agy'],
  defaultArgs: ['--dangerously-skip-permissions'],
  environment: () => ({}),
  exitSteps: [{ keys: ['C-d'] }],
  spawnArgv: (program, args) => [...program, ...args],
  resumeArgv: (program, args, id) => [...program, ...args, '--conversation', id],
  async purgePlan() {
    return { unsupported: "agy's conversation store is not documented; delete the conversation from agy itself" };
  },
};
