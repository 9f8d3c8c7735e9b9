import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryLogger } from '../../src/core/base/log';
import { stopEmbeddedBroker } from '../../src/core/messaging/embeddedBroker';
import { buildCore } from '../../src/core/core';
import type { JobEngine } from '../../src/core/jobs/jobEngine';
import { CLI, FAKE_AGENT, mam, type MamResult } from './helpers';
import { sessionFixture, type SessionFixture } from './sessions';

export interface JobFixture extends SessionFixture {
  /** Runs `mam …` in the workspace with the fixture's environment. */
  run(args: string[], env?: Record<string, string>): Promise<MamResult>;
  /** Creates a session whose agent is the fake agent in `mode` (see test/fixtures/fake-agent-jobs.js). */
  /** A session running the fake agent in `mode`, with the given role (default worker). */
  agent(name: string, mode: string, extra?: string[], role?: string): Promise<void>;
  /** A jobs engine in this process (a stand-in for the extension or `mam monitor`). */
  engine(): JobEngine;
}

/** A workspace with its own tmux server and embedded broker, both stopped afterwards. */
export function jobFixture(extraEnv: Record<string, string> = {}): JobFixture {
  const base = sessionFixture(extraEnv);
  const engines: Array<{ dispose(): void }> = [];
  const run = (args: string[], env: Record<string, string> = {}) => mam(args, { cwd: base.workspace, env: { ...base.env, ...env } });
  return {
    ...base,
    run,
    async agent(name, mode, extra = [], role) {
      // Impersonating claude, so delivery waits for claude's ready sign rather than for quiet output.
      const command = [process.execPath, FAKE_AGENT, '--as', 'claude', '--log', base.log, '--mode', mode, ...extra].map((w) => JSON.stringify(w)).join(' ');
      const r = await run(['session', 'create', '--agent', 'claude', '--name', name, '--command', command, ...(role ? ['--role', role] : [])]);
      if (r.exitCode !== 0) throw new Error(`session create failed: ${r.stderr}`);
    },
    engine() {
      // Built by the composition root over the fixture's sessions' workspace, as the CLI builds one.
      const core = buildCore(base.workspace, { env: base.env, logger: new MemoryLogger(), cliPath: CLI });
      engines.push(core);
      return core.jobs;
    },
    async dispose() {
      for (const e of engines) e.dispose();
      await stopEmbeddedBroker(base.controlPlane.paths);
      await base.dispose();
    },
  };
}

export const JOB_ID = /j-\d{8}T\d{6}Z-[0-9a-f]{8}/;

export function jobIdOf(output: string): string {
  const m = JOB_ID.exec(output);
  if (!m) throw new Error(`no job ID in: ${output}`);
  return m[0];
}

export { path };

/** A git identity for commits the tests make (and the scripted agents make in their workspace). */
export const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid' };

/**
 * A job fixture whose workspace is an ordinary checkout for review loops: `feature.txt` committed,
 * nothing telling git to ignore `.mam/` (it ignores itself), `.mam/` at the root.
 */
export function loopFixture(extraEnv: Record<string, string> = {}): JobFixture {
  const f = jobFixture({ ...GIT_ENV, ...extraEnv });
  fs.rmSync(path.join(f.workspace, '.git'), { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: f.workspace, env: { ...process.env, ...GIT_ENV } });
  git('init', '-q');
  fs.writeFileSync(path.join(f.workspace, 'feature.txt'), 'the start\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return f;
}
