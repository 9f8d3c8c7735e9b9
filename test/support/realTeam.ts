/**
 * A team of real agent CLIs in an ordinary checkout, for the real-agent tests: a plain git
 * repository with one commit (a test that fails until `add` adds), a temp HOME for the CLIs
 * (agentHomes.ts), the environment for `mam` (agentEnv), its own tmux server, and `mam` run from
 * the repository — `.mam/` at its root, not ignored by it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TmuxBackend } from '../../src/core/mux/tmux';
import type { SessionRow } from '../../src/core/store/sessionSchema';
import { CLI, mam, tempDir, type MamResult } from './helpers';
import { agentEnv, agentHome, type AgentHomeOptions } from './realAgents';

/** The project every team works on: a test that fails until `add` adds. */
export const TEST_JS = `const { add } = require('./add');
const got = add(2, 3);
if (got !== 5) {
  console.error('add(2, 3) should be 5, got ' + got);
  process.exit(1);
}
console.log('add(2, 3) = 5');
`;

/** What the scripted model has each CLI do, by the step the brief (or the loop's hint) names. */
export const TEAM_SCRIPT = {
  steps: {
    // A plain job: leave a trace in the checkout, as real agents do.
    job: { run: ['printf "%s\\n" "{job}" >> jobs-done.txt'], detail: 'noted the job in jobs-done.txt' },
    // The creator's first attempt is wrong; its fix is right. Both committed.
    implement: { run: ["printf 'exports.add = (a, b) => a - b;\\n' > add.js && git add add.js && git commit -qm 'Add add()'"], detail: 'added add() and committed' },
    fix: { run: ["printf 'exports.add = (a, b) => a + b;\\n' > add.js && git add add.js && git commit -qm 'Fix add(): it subtracted'"], detail: 'fixed add() and committed' },
    // Reviewers run the project's test; the verdict is what it says.
    review: { run: ['node test.js 2>&1 && echo CHECK-OK || echo CHECK-FAILED'], passWhen: 'CHECK-OK' },
  },
};

export interface Team {
  workspace: string;
  home: string;
  env: Record<string, string>;
  run(args: string[]): Promise<MamResult>;
  /** `run`, asserting exit 0. */
  ok(args: string[], what: string): Promise<MamResult>;
  sessions(): SessionRow[];
  session(name: string): SessionRow;
  /** The pane's visible text. */
  screen(name: string): string;
  dispose(): Promise<void>;
}

let teams = 0;

/** A new team against `server`; `homeOptions` leave out first-run answers. `env` adds to (or, as undefined, removes from) the environment. */
export function realTeam(server: { url: string }, homeOptions: Omit<AgentHomeOptions, 'server' | 'projects'> = {}, envChanges: Record<string, string | undefined> = {}): Team {
  const workspace = fs.realpathSync(tempDir('repo'));
  const home = agentHome({ server, projects: [workspace], ...homeOptions });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, env: { ...process.env, HOME: home } });
  git('init', '-q');
  // The repository's own identity for commits: gemini's shell tool reads no global git config
  // (GIT_CONFIG_GLOBAL=/dev/null), so an identity only in ~/.gitconfig would not reach its commits.
  git('config', 'user.name', 'MAM Test Agent');
  git('config', 'user.email', 'agent@mam.invalid');
  fs.writeFileSync(path.join(workspace, 'test.js'), TEST_JS);
  fs.writeFileSync(path.join(workspace, 'add.js'), 'exports.add = () => { throw new Error("not written yet"); };\n');
  git('add', '-A');
  git('commit', '-qm', 'A test for add()');
  const env: Record<string, string> = { ...agentEnv(home, server), MAM_TMUX_SERVER: `mam-real-${process.pid}-${teams++}` };
  for (const [k, v] of Object.entries(envChanges)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  // Real agents answer a loop of several rounds in minutes on a loaded machine: bounded below the tests' own timeouts.
  const run = (args: string[]) => mam(args, { cwd: workspace, env, timeoutMs: 210_000 });
  const sessions = () => JSON.parse(execFileSync(process.execPath, [CLI, 'session', 'list', '--json'], { cwd: workspace, env, encoding: 'utf8' })) as SessionRow[];
  const session = (name: string) => {
    const row = sessions().find((s) => s.name === name);
    if (!row) throw new Error(`no session ${name}`);
    return row;
  };
  return {
    workspace,
    home,
    env,
    run,
    async ok(args, what) {
      const r = await run(args);
      if (r.exitCode !== 0) throw new Error(`${what}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
      return r;
    },
    sessions,
    session,
    screen: (name) => execFileSync('tmux', ['-L', env.MAM_TMUX_SERVER!, 'capture-pane', '-p', '-t', session(name).target!], { env, encoding: 'utf8' }),
    async dispose() {
      // Pane by pane, as MAM closes one (its program's process group ends with it): a CLI that
      // ignores the hangup of a killed server (gemini's launcher) would outlive the server.
      const tmux = new TmuxBackend({ server: env.MAM_TMUX_SERVER!, env });
      for (const pane of await tmux.listPanes().catch(() => [])) await tmux.kill(pane.id);
      await tmux.killServer();
      await mam(['broker', 'stop'], { cwd: workspace, env });
    },
  };
}
