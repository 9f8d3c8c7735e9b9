import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExitCode, MamError, UsageError, errorMessage } from '../../core/base/errors';
import { shellLine } from '../../core/base/shellWords';
import type { ControlPlane } from '../../core/store/controlPlane';
import { buildCore, type Core } from '../../core/core';
import { runDemo, type DemoSummary } from '../../core/demo/demo';
import { DEMO_PACES, type DemoPace } from '../../core/demo/demoProject';
import type { JobEngine } from '../../core/jobs/jobEngine';
import { stopEmbeddedBroker } from '../../core/messaging/embeddedBroker';
import { TmuxBackend } from '../../core/mux/tmux';
import { findProgram } from '../../core/sessions/program';
import type { SessionService } from '../../core/sessions/sessionService';
import { defineCommand, JSON_OPTION, type CommandContext } from '../command';
import { isOneOf } from '../args';

/**
 * `mam demo`: the main job, end to end, on a machine with nothing but tmux, git and Node.js — a
 * temporary workspace (its own `.mam/`, embedded broker and tmux server) holding a small git
 * repository, four built-in demo agents, one delegated job and one review loop (core/demo/demo.ts).
 * Afterwards everything it started is stopped and the folder removed, unless --keep.
 */
export const demoCommand = defineCommand({
  path: ['demo'],
  summary: 'watch a team of built-in demo agents do a delegated job and a review loop (no accounts needed)',
  options: {
    keep: { kind: 'boolean', description: 'leave the sessions, broker and folder running afterwards, to look around' },
    pace: { kind: 'string', value: 'fast|normal', default: 'normal', description: 'how fast the demo agents work (default normal: about a minute)' },
    ...JSON_OPTION,
  },
  details: [
    'Needs tmux, git and Node.js 20+; nothing else, no agent accounts. It creates a temporary folder holding a',
    "workspace (.mam/) and a git repository, starts the workspace's embedded broker and a tmux server of its",
    'own, and runs four scripted agents: a worker does one delegated job; a creator implements a task, a strict',
    'and an easy-going reviewer review it (round 1: NOT PASS), the creator fixes it, and both pass round 2.',
    'It prints what happens, then where to look (sessions, jobs, the loop, the reports, the panes).',
    '',
    'Exit status: 0 the loop passed; 1 it did not, or the demo could not run here.',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    if (o.workspace !== undefined) throw new UsageError('mam demo makes a workspace of its own in a temporary folder; it takes no --workspace');
    const pace = o.pace;
    if (!isOneOf(DEMO_PACES, pace)) throw new UsageError(`--pace must be fast or normal (got '${pace}')`);
    for (const program of ['tmux', 'git']) {
      if (findProgram(program, ctx.io.cwd, ctx.io.env.PATH ?? '')) throw new MamError(`mam demo needs ${program}: install it (e.g. apt-get install ${program}) and run it again`, 'demo_unavailable', ExitCode.failed);
    }
    return new DemoRun(ctx, pace, Boolean(o.keep), Boolean(o.json)).run();
  },
});

class DemoRun {
  private readonly root: string;
  private readonly server: string;
  private readonly env: NodeJS.ProcessEnv;
  /** dist/, where this bundle (cli-main.js), cli.js and demo-agent.js are. */
  private readonly distDir = __dirname;
  private readonly core: Core;
  private readonly controlPlane: ControlPlane;
  private readonly sessions: SessionService;
  private readonly engine: JobEngine;
  private readonly narration: string[] = [];

  constructor(
    private readonly ctx: CommandContext,
    private readonly pace: DemoPace,
    private readonly keep: boolean,
    private readonly json: boolean,
  ) {
    // The user's broker, multiplexer and workspace settings are not the demo's: it brings its own.
    this.env = demoEnvironment(ctx.io.env);
    const { logger } = ctx;
    this.root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-demo-')));
    this.server = `mam-demo-${path.basename(this.root).slice('mam-demo-'.length).toLowerCase()}`;
    this.core = buildCore(this.root, { env: this.env, logger, cliPath: path.join(this.distDir, 'cli.js') });
    try {
      void this.core.config;
    } catch (err) {
      // A malformed MAM_* setting: nothing has started yet but the empty folder.
      fs.rmSync(this.root, { recursive: true, force: true });
      throw err;
    }
    this.controlPlane = this.core.controlPlane;
    this.sessions = this.core.sessions;
    this.engine = this.core.jobs;
  }

  async run(): Promise<number> {
    const abort = new AbortController();
    let interrupts = 0;
    // Ctrl-C stops the demo cleanly (its jobs cancelled, everything it started stopped); a second one leaves at once.
    const onSignal = (): void => {
      if (++interrupts > 1) process.exit(128 + os.constants.signals.SIGINT); // as a shell reports a process Ctrl-C ended
      this.say('Stopping the demo (press Ctrl-C again to leave at once, without cleaning up)…');
      abort.abort();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    this.say(`MAM demo: four scripted agents (no accounts needed) in tmux server ${this.server}, with the embedded broker.`);
    this.say(`Workspace ${this.root} (its .mam/ is the control plane); the agents work in ${path.join(this.root, 'repo')}.`);
    let summary: DemoSummary | undefined;
    try {
      summary = await runDemo({
        engine: this.engine, sessions: this.sessions, distDir: this.distDir, repoDir: path.join(this.root, 'repo'), pace: this.pace,
        server: this.server, mux: 'tmux', env: this.env, signal: abort.signal, logger: this.ctx.logger, onLine: (line) => this.say(line),
      });
      this.report(summary);
    } finally {
      this.core.dispose();
      // Still under our Ctrl-C handler: a first Ctrl-C now does not cut the clean-up short.
      if (this.keep) this.sayKept();
      else await this.cleanUp();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (this.json) this.ctx.json({ ...summary, kept: this.keep, tmuxServer: this.server, look: this.lookCommands(summary), cleanup: this.cleanupCommands(), narration: this.narration });
    return summary.passed ? ExitCode.ok : ExitCode.failed;
  }

  private say(line: string): void {
    this.narration.push(line);
    if (!this.json) this.ctx.out(line);
  }

  private report(s: DemoSummary): void {
    const rounds = s.loop.rounds.map((r) => `round ${r.n}: ${r.verdicts.map((v) => `${v.reviewer} ${v.verdict}`).join(', ')}`).join('; ');
    this.say('');
    this.say(`${s.passed ? 'PASSED' : 'NOT PASSED'} in ${Math.round(s.durationMs / 1000)} s: the delegated job ${s.job.state}; the loop ${s.loop.status} (${rounds}).`);
    for (const c of s.commits) this.say(`  ${c.sha}  ${c.author.padEnd(18)} ${c.subject}`);
    this.say('');
    this.say(this.keep ? 'Where to look (everything is still running):' : 'Where to look (this run is cleaned up now; with --keep everything stays for you to look at):');
    const look = this.lookCommands(s);
    const width = Math.max(...look.map(([what]) => what.length));
    for (const [what, line] of look) this.say(`  ${what.padEnd(width)}  ${line}`);
  }

  /** Commands for looking around, as [what, command line] pairs. */
  private lookCommands(s: DemoSummary | undefined): Array<[string, string]> {
    const mam = (...args: string[]): string => shellLine(['node', this.cliForDisplay(), ...args, '--workspace', this.root]);
    const rows: Array<[string, string]> = [
      ['sessions', mam('session', 'status')],
      ['jobs', mam('job', 'list')],
      ['the loop', mam('loop', 'status', ...(s ? [s.loop.id] : []))],
      ['reports', `${path.join(s?.reportsDir ?? this.controlPlane.paths.reportsDir, '<reviewer>')}/report-<job>.md and .identity.json`],
      ['the repo', shellLine(['git', '-C', path.join(this.root, 'repo'), 'log', '--stat'])],
    ];
    for (const session of s?.sessions ?? []) rows.push([session.name, `${shellLine(session.attach)}   (detach: Ctrl-b d)`]);
    return rows;
  }

  private cleanupCommands(): string[][] {
    return [['tmux', '-L', this.server, 'kill-server'], ['node', this.cliForDisplay(), 'broker', 'stop', '--workspace', this.root], ['rm', '-rf', this.root]];
  }

  private sayKept(): void {
    this.say('');
    this.say('Kept: the sessions, the broker and the folder are still there. To clean up:');
    for (const argv of this.cleanupCommands()) this.say(`  ${shellLine(argv)}`);
  }

  /** Stops what the demo started — its sessions (each asked to exit), the broker, the tmux server — and removes the folder. */
  private async cleanUp(): Promise<void> {
    const problems: string[] = [];
    const attempt = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        problems.push(`${what}: ${errorMessage(err)}`);
      }
    };
    const running = (await this.controlPlane.sessions.list().catch(() => [])).filter((r) => r.status === 'running' || r.status === 'starting');
    await Promise.all(running.map((r) => attempt(`session ${r.name}`, () => this.sessions.stop(r.name, { graceMs: 5_000 }))));
    await attempt('the broker', () => stopEmbeddedBroker(this.controlPlane.paths, { logger: this.ctx.logger }));
    await attempt('the tmux server', async () => {
      const tmux = new TmuxBackend({ server: this.server, env: this.env });
      await tmux.killServer();
      // tmux leaves its socket file behind; a server that no longer runs has no use for it.
      if (!(await tmux.isRunning())) fs.rmSync(path.join(this.env.TMUX_TMPDIR || '/tmp', `tmux-${process.getuid?.() ?? 0}`, this.server), { force: true });
    });
    await attempt(this.root, async () => fs.rmSync(this.root, { recursive: true, force: true }));
    this.say('');
    this.say(`Cleaned up: stopped ${running.length} session${running.length === 1 ? '' : 's'}, the broker and tmux server ${this.server}; removed ${this.root}.`);
    for (const p of problems) this.ctx.logger.warn(`cleaning up ${p}`);
  }

  /** dist/cli.js as the user can type it from where they are. */
  private cliForDisplay(): string {
    const cli = path.join(this.distDir, 'cli.js');
    const relative = path.relative(this.ctx.io.cwd, cli);
    return relative.startsWith('..') || path.isAbsolute(relative) ? cli : relative;
  }
}

/** The environment minus what would point the demo at the user's own broker, server or workspace. */
function demoEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith('MQTT_') || ['MAM_WORKSPACE', 'MAM_TMUX_SERVER', 'MAM_HERDR_SESSION', 'MAM_MUX'].includes(key)) continue;
    out[key] = value;
  }
  return out;
}
