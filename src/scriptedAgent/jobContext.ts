/**
 * What a demo role works with while it does one job: the parsed brief, its pane (narration), a
 * paced clock, the brief's event commands, and programs run with argument arrays (git, node).
 */
import * as path from 'node:path';
import type { DemoPace } from '../core/demo/demoProject';
import { run, sendEvent, type ParsedBrief, type RunResult } from './kit';

export type Pace = DemoPace;

/** How much of each scripted delay is waited: fast is for tests, normal for people watching. */
export const PACE_FACTOR: Readonly<Record<Pace, number>> = { normal: 1, fast: 0.04 };

/** The demo agents' own commits carry their own identity, so they work where git has no user configured. */
export const CREATOR_IDENTITY = { name: 'MAM demo creator', email: 'demo@localhost' };

/** Styling for the pane: what an agent TUI looks like, in plain ANSI. */
export const style = {
  bold: (t: string) => `\x1b[1m${t}\x1b[22m`,
  dim: (t: string) => `\x1b[2m${t}\x1b[22m`,
  green: (t: string) => `\x1b[32m${t}\x1b[39m`,
  red: (t: string) => `\x1b[31m${t}\x1b[39m`,
  cyan: (t: string) => `\x1b[36m${t}\x1b[39m`,
  yellow: (t: string) => `\x1b[33m${t}\x1b[39m`,
};

export class JobContext {
  constructor(
    readonly brief: ParsedBrief,
    readonly briefPath: string,
    readonly cwd: string,
    private readonly pace: Pace,
    private readonly write: (text: string) => void,
  ) {}

  /** A narration line under the job's header. */
  say(text: string): void {
    this.write(`  ${style.dim('⎿')}  ${text.replace(/\n/g, '\r\n     ')}\r\n`);
  }

  /** Waits `ms` scaled by the pace: the time a real agent would spend. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.round(ms * PACE_FACTOR[this.pace])));
  }

  /** Narrates a step, reports it as a `progress` event, then takes its time over it. */
  async step(text: string, ms: number): Promise<void> {
    this.say(text);
    await this.event('progress', ['--detail', text]);
    await this.pause(ms);
  }

  /** Runs one of the brief's event commands (`node "<cli>" event …`) with the node running us. */
  async event(name: string, extra: readonly string[] = []): Promise<number> {
    const r = await sendEvent(this.brief, name, extra, this.cwd);
    if (r.code !== 0) this.say(style.yellow(`mam event ${name} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n')[0] ?? ''}`));
    return r.code;
  }

  /** Runs a program in the job's folder; never through a shell. */
  run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
    return run(file, args, { cwd: this.cwd, env });
  }

  /** git in the job's folder, with the demo's identity and none of the user's signing or hooks; throws on failure. */
  async git(args: readonly string[]): Promise<string> {
    const env = {
      GIT_AUTHOR_NAME: CREATOR_IDENTITY.name, GIT_AUTHOR_EMAIL: CREATOR_IDENTITY.email,
      GIT_COMMITTER_NAME: CREATOR_IDENTITY.name, GIT_COMMITTER_EMAIL: CREATOR_IDENTITY.email, GIT_TERMINAL_PROMPT: '0',
    };
    const r = await this.run('git', ['-c', 'commit.gpgsign=false', '-c', 'core.hooksPath=/dev/null', ...args], env);
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`);
    return r.stdout;
  }

  /** Where a report is written: beside the brief, outside the checkout (a file there would change the tree under review). */
  reportPath(name: string): string {
    return path.join(path.dirname(this.briefPath), name);
  }
}
