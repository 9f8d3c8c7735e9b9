import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExitCode, MamError, UsageError, errorMessage } from '../base/errors';
import { nameProblem, printable, printableLines } from '../base/ids';
import type { Logger } from '../base/log';
import { Emitter } from '../base/emitter';
import { TRUSTED, type Trust } from '../base/trust';
import { adapterFor, type AgentAdapter } from '../agents';
import type { StoreContext } from '../agents/adapter';
import { isOneOf } from '../base/schema';
import { readScreen } from '../agents/screens';
import type { ResolvedConfig } from '../config/settings';
import type { ControlPlane } from '../store/controlPlane';
import { checkServerName, defaultServerName, isUsersOwnServer, type MuxFactory } from '../mux';
import { injectLine, lastLines, type InjectOptions, type InjectReport, type NamedScreen } from '../mux/inject';
import type { Multiplexer } from '../mux/multiplexer';
import { withLock } from '../store/lock';
import { isAlive, sleep } from '../base/process';
import { MUX_KINDS, SESSION_ROLES, type MuxKind, type SessionRow } from '../store/sessionSchema';
import { isStored, purgeConversation } from './conversations';
import { findConversation, learnConversation, type LearningDeps } from './conversationLearning';
import { OrchestratorRegistry } from './orchestrators';
import { NeedsAttentionError, SessionAttention } from './sessionAttention';
import { agentCommand, checkAgentProgram, findProgram } from './program';

export interface SessionServiceDeps {
  controlPlane: ControlPlane;
  config: ResolvedConfig;
  logger: Logger;
  /** The environment agents and multiplexers run with (HOME, PATH, TMUX_TMPDIR, …). */
  env: NodeJS.ProcessEnv;
  muxFactory: MuxFactory;
  /** Untrusted: nothing is started, stopped or typed into (default: trusted, as the CLI is). */
  trust?: Trust;
}

export interface CreateRequest {
  name: string;
  agent: string;
  role?: string;
  /** Where the agent runs; relative paths are taken from `baseDir`. */
  cwd?: string;
  baseDir: string;
  mux?: string;
  server?: string;
  /** A command line replacing the agent's program, split into words without a shell. */
  command?: string[];
  /** How long an agent with a ready sign has to show it (default 60 s). */
  readyTimeoutMs?: number;
}

/** The agent exited right after it started. Exit 1. */
export class AgentExitedError extends MamError {
  constructor(message: string) {
    super(message, 'agent_exited', ExitCode.failed);
  }
}

export interface StopOptions {
  purgeConversation?: boolean;
  yes?: boolean;
  /** How long the agent gets to exit by itself before its pane is closed. */
  graceMs?: number;
}

/** Sessions: create, stop, resume and send (SPEC §4). Status and repair live in sessionStatus.ts. */
export class SessionService {
  readonly orchestrators: OrchestratorRegistry;

  private readonly changed = new Emitter<void>();
  /** Sessions were created, stopped or resumed here, or changed on disk (`changedOnDisk`), or an agent's screen changed. */
  readonly onDidChange = this.changed.event;
  /** Running agents that show a screen only a person should answer, as last seen. */
  private readonly attention = new SessionAttention();
  readonly trust: Trust;

  constructor(private readonly deps: SessionServiceDeps) {
    this.orchestrators = new OrchestratorRegistry(deps.controlPlane.paths);
    this.trust = deps.trust ?? TRUSTED;
  }

  /** The sessions changed outside this service: on disk (another window, the CLI), or as the monitor found them. */
  notifyChanged(): void {
    this.changed.fire();
  }

  /** The blocking screen a running session's agent showed when last looked at. */
  lastAttention(name: string): NamedScreen | undefined {
    return this.attention.last(name);
  }

  /** What the monitor saw on every running agent; true when it differs from before. */
  noteAttention(now: ReadonlyMap<string, NamedScreen>): boolean {
    return this.attention.note(now);
  }

  /** Runs a change of the sessions, remembering a screen it stopped at, and tells listeners after. */
  private async changing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      this.attention.stoppedAt(err);
      throw err;
    } finally {
      this.changed.fire();
    }
  }

  /** The workspace folder whose sessions these are. */
  get workspace(): string {
    return this.deps.controlPlane.workspace;
  }

  private get registry() {
    return this.deps.controlPlane.sessions;
  }

  /** The multiplexer a session lives on. */
  muxOf(row: Pick<SessionRow, 'mux' | 'server'>): Multiplexer {
    return this.deps.muxFactory(row.mux, row.server);
  }

  /** The workspace's own server for `kind`, unless configured otherwise. */
  defaultServer(kind: MuxKind): string {
    const configured = kind === 'tmux' ? this.deps.config.values.tmuxServer : this.deps.config.values.herdrSession;
    return configured || defaultServerName(this.deps.controlPlane.workspace);
  }

  async create(request: CreateRequest): Promise<SessionRow> {
    this.trust.require('start an agent');
    return this.changing(() => this.createNow(request));
  }

  private async createNow(request: CreateRequest): Promise<SessionRow> {
    const problem = nameProblem(request.name, 'session name');
    if (problem) throw new UsageError(problem, 'bad_name');
    const adapter = adapterFor(request.agent);
    const role = (request.role ?? 'worker').trim().toLowerCase();
    if (!isOneOf(SESSION_ROLES, role)) throw new UsageError(`unknown role '${printable(role, 40)}'; choose one of ${SESSION_ROLES.join(', ')}`);
    const mux = request.mux ?? this.deps.config.values.mux;
    if (!isOneOf(MUX_KINDS, mux)) throw new UsageError(`unknown multiplexer '${printable(mux, 40)}'; choose tmux or herdr`);
    const server = request.server ?? this.defaultServer(mux);
    checkServerName(server);
    if (isUsersOwnServer(server)) {
      this.deps.logger.warn(`session '${request.name}' goes on your own ${mux} server ('${server}'), as you asked: MAM shares it with you (your panes there stay yours; stopping MAM's sessions closes only their panes)`);
    }
    const cwd = existingDirectory(path.resolve(request.baseDir, request.cwd ?? '.'));
    const { program, args } = this.commandFor(adapter, request.command);
    const existing = await this.registry.get(request.name);
    if (existing && !abandonedCreate(existing)) throw new UsageError(`session '${request.name}' already exists`, 'duplicate_session');
    if (existing) await this.clearAbandonedCreate(existing);

    const conversationId = adapter.preassignId?.() ?? null;
    const argv = adapter.spawnArgv(program, args, conversationId);
    checkAgentProgram(argv, cwd, adapter, this.deps.env.PATH ?? '');
    const now = new Date().toISOString();
    // Reserve the name first (the registry refuses a duplicate under its lock), then place the pane.
    await this.registry.mutate((tx) =>
      tx.insert({
        name: request.name, agent: adapter.name, role, mux, server, target: null, cwd, status: 'starting', resumable: false,
        // Until the pane runs, `pid` is the process placing it: a create killed midway is known by it.
        conversation_id: conversationId, pid: process.pid, created_at: now, updated_at: now, current_job: null, command: program,
      }),
    );
    let row: SessionRow;
    try {
      const pane = await this.place(mux, server, request.name, argv, cwd, adapter);
      row = await this.registry.mutate((tx) => tx.update(request.name, { status: 'running', target: pane.id, pid: pane.pid }));
    } catch (err) {
      await this.registry.mutate((tx) => tx.remove(request.name));
      throw err;
    }
    await this.awaitReady(row, adapter, request.readyTimeoutMs ?? 60_000, 'created');
    // An agent that writes its conversation as it starts is recorded at once (one look, no wait).
    if (!conversationId && adapter.listConversations) await this.learnConversation(row.name, { boundMs: 0, quiet: true });
    return (await this.registry.get(row.name)) ?? row;
  }

  /**
   * Waits, bounded, until a freshly started agent shows its ready sign (agents without one are
   * not waited for). A known blocking screen or no sign in time: NeedsAttentionError, with the
   * session kept. The agent gone: AgentExitedError, with the session marked terminated.
   */
  private async awaitReady(row: SessionRow, adapter: AgentAdapter, timeoutMs: number, verb: 'created' | 'resumed'): Promise<void> {
    if (!adapter.readySign || !row.target) return;
    const mux = this.muxOf(row);
    const target = row.target;
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    for (;;) {
      try {
        screen = await mux.capture(target);
      } catch {
        await this.registry.mutate((tx) => (tx.get(row.name)?.target === target ? tx.update(row.name, { status: 'terminated', target: null, pid: null }) : undefined));
        // What it showed last, if a look caught it before it went (printable: it is the agent's text).
        const seen = printableLines(lastLines(screen, 5)).trim();
        throw new AgentExitedError(`session '${row.name}': ${adapter.name} exited as soon as it started${seen ? `; its last screen:\n${seen}\n` : '; '}run '${[...this.commandFor(adapter, row.command ?? undefined).program].join(' ')}' in ${row.cwd} by hand to see why`);
      }
      const reading = readScreen(screen, adapter);
      if (reading.kind === 'ready') return;
      if (reading.kind === 'blocked') throw new NeedsAttentionError(`${verb} session '${row.name}', but ${adapter.name} shows ${reading.screen.name}. ${reading.screen.answer} Attach with: ${mux.attachArgv(target).join(' ')}`, row.name, reading.screen);
      if (Date.now() >= deadline) {
        this.deps.logger.warn(`session '${row.name}': its screen after ${Math.round(timeoutMs / 1000)} s:\n${lastLines(screen, 15)}`);
        throw new NeedsAttentionError(`${verb} session '${row.name}', but ${adapter.name} did not show its ready sign within ${Math.round(timeoutMs / 1000)} s; attach to see what it shows: ${mux.attachArgv(target).join(' ')}`, row.name, null);
      }
      await sleep(100);
    }
  }

  /** A create that died before its session ran: its row goes, and the pane it may have started is closed. */
  private async clearAbandonedCreate(row: SessionRow): Promise<void> {
    const mux = this.muxOf(row);
    for (const pane of (await mux.listPanes().catch(() => [])).filter((p) => p.label === row.name && p.alive)) await mux.kill(pane.id);
    await this.registry.mutate((tx) => {
      const now = tx.get(row.name);
      if (now && abandonedCreate(now)) tx.remove(row.name);
    });
    this.deps.logger.info(`session '${row.name}': cleared what a create killed midway left`);
  }

  /** The blocking screen a running agent shows now, if any (read-only: one capture of its pane). */
  async attentionOf(row: SessionRow): Promise<NamedScreen | null> {
    const adapter = adapterFor(row.agent);
    if (!adapter.blockingScreens?.length || !row.target || row.status !== 'running') return null;
    try {
      const reading = readScreen(await this.muxOf(row).capture(row.target), adapter);
      return reading.kind === 'blocked' ? reading.screen : null;
    } catch {
      return null;
    }
  }

  /** How injection reads an agent's screen (its ready sign, its blocking screens), and whom it types into. */
  screenOptions(row: Pick<SessionRow, 'name' | 'agent'>, adapter = adapterFor(row.agent)): Pick<InjectOptions, 'readScreen' | 'who'> {
    return {
      ...(adapter.readySign ? { readScreen: (screen: string) => readScreen(screen, adapter) } : {}),
      who: `session '${row.name}' (${adapter.name})`,
    };
  }

  async stop(name: string, options: StopOptions = {}): Promise<{ row: SessionRow; purged?: string; alreadyStopped: boolean }> {
    this.trust.require('stop an agent');
    return this.changing(() => this.stopNow(name, options));
  }

  private async stopNow(name: string, options: StopOptions): Promise<{ row: SessionRow; purged?: string; alreadyStopped: boolean }> {
    const row = await this.require(name);
    const adapter = adapterFor(row.agent);
    if (options.purgeConversation) {
      if (!options.yes) throw new UsageError(`--purge-conversation deletes the stored conversation of '${name}' for good; add --yes to confirm`);
      const plan = row.conversation_id ? await adapter.purgePlan(this.storeContext(row), row.conversation_id, row.cwd) : undefined;
      if (plan && 'unsupported' in plan) throw new UsageError(`cannot purge: ${plan.unsupported}`);
    }
    const live = row.target ? (await this.muxOf(row).listPanes()).find((p) => p.id === row.target && p.alive) : undefined;
    const alreadyStopped = !live && row.status !== 'running' && row.status !== 'starting';
    if (live) await this.endPane(row, adapter, options.graceMs ?? 15_000);

    let conversationId = row.conversation_id;
    if (!conversationId) conversationId = (await findConversation(this.learning(), row, { onlyIfUnique: true }))?.id ?? null;
    let purged: string | undefined;
    if (options.purgeConversation && conversationId) {
      purged = await purgeConversation(adapter, this.storeContext(row), conversationId, row.cwd, this.deps.logger);
      conversationId = null;
    }
    const resumable = options.purgeConversation ? false : await this.canResume(row, adapter, conversationId);
    const updated = await this.registry.mutate((tx) =>
      tx.update(name, { status: alreadyStopped ? row.status : 'stopped', target: null, pid: null, conversation_id: conversationId, resumable }),
    );
    return { row: updated, ...(purged !== undefined ? { purged } : {}), alreadyStopped };
  }

  /** Restarts a stopped session in its saved conversation, only in the folder it originally ran in. */
  async resume(name: string, options: { cwd?: string; baseDir: string; readyTimeoutMs?: number }): Promise<SessionRow> {
    this.trust.require('resume an agent');
    return this.changing(() => this.resumeNow(name, options));
  }

  private async resumeNow(name: string, options: { cwd?: string; baseDir: string; readyTimeoutMs?: number }): Promise<SessionRow> {
    const row = await this.require(name);
    if (row.status === 'running' || row.status === 'starting') throw new UsageError(`session '${name}' is ${row.status}; stop it before resuming`);
    if (options.cwd !== undefined) {
      const asked = path.resolve(options.baseDir, options.cwd);
      const real = fs.existsSync(asked) ? fs.realpathSync(asked) : asked;
      if (real !== row.cwd) throw new UsageError(`session '${name}' ran in ${row.cwd}; it can only be resumed there, not in ${real}`, 'wrong_cwd');
    }
    if (!fs.existsSync(row.cwd)) throw new UsageError(`session '${name}' ran in ${row.cwd}, which no longer exists`, 'wrong_cwd');
    const adapter = adapterFor(row.agent);
    if (!row.resumable) {
      throw new UsageError(`session '${name}' has no saved conversation to resume${row.conversation_id ? '' : ' (its conversation ID was never found)'}; create a new session instead`, 'not_resumable');
    }
    const { program, args } = this.commandFor(adapter, row.command ?? undefined);
    const id = row.conversation_id;
    let argv: string[] | null;
    if (adapter.name === 'shell' || id === null) argv = adapter.spawnArgv(program, args, null);
    else if (await isStored(adapter, this.storeContext(row), row.cwd, id)) argv = adapter.resumeArgv(program, args, id);
    else argv = adapter.preassignId ? adapter.spawnArgv(program, args, id) : adapter.resumeArgv(program, args, id); // never used: start it afresh under the same ID
    if (!argv) throw new UsageError(`${adapter.name} cannot resume a conversation`);
    checkAgentProgram(argv, row.cwd, adapter, this.deps.env.PATH ?? '');

    await this.registry.mutate((tx) => tx.update(name, { status: 'starting', pid: process.pid }));
    let resumed: SessionRow;
    try {
      const pane = await this.place(row.mux, row.server, name, argv, row.cwd, adapter);
      resumed = await this.registry.mutate((tx) => tx.update(name, { status: 'running', target: pane.id, pid: pane.pid }));
    } catch (err) {
      await this.registry.mutate((tx) => tx.update(name, { status: row.status }));
      throw err;
    }
    await this.awaitReady(resumed, adapter, options.readyTimeoutMs ?? 60_000, 'resumed');
    return resumed;
  }

  /** The argv that attaches a terminal to the session's pane (never a shell string). */
  async attachArgv(name: string): Promise<string[]> {
    this.trust.require('attach to an agent');
    const row = await this.require(name);
    if (!row.target) throw new UsageError(`session '${name}' has no pane; resume it first`);
    return this.muxOf(row).attachArgv(row.target);
  }

  /** Types one line into a running agent, verified like any injection (SPEC §4 send). */
  async send(name: string, text: string): Promise<InjectReport> {
    this.trust.require('type into an agent');
    if (text.length === 0) throw new UsageError('--text is empty');
    if (/[\r\n]/.test(text)) throw new UsageError('--text must be one line; put longer messages in a file and send its path');
    if (text.length > 65_536) throw new UsageError(`--text is ${text.length} characters long; the limit is 65536`);
    const row = await this.require(name);
    if (row.status !== 'running' || !row.target) throw new UsageError(`session '${name}' is ${row.status}, not running; resume it first`, 'not_running');
    const adapter = adapterFor(row.agent);
    const report = await this.deliver(row, text, adapter);
    if (!row.conversation_id && adapter.listConversations) await this.learnConversation(name);
    return report;
  }

  /** Types `text` into the session's pane; one delivery per session at a time. */
  async deliver(row: SessionRow, text: string, adapter = adapterFor(row.agent)): Promise<InjectReport> {
    if (!row.target) throw new UsageError(`session '${row.name}' has no pane`);
    const target = row.target;
    return withLock(this.deps.controlPlane.paths.lock(`input-${row.name}`), () =>
      injectLine(this.muxOf(row), target, text, this.screenOptions(row, adapter)),
    { what: `input to session '${row.name}'`, timeoutMs: 120_000 });
  }

  /** Records the conversation of an agent that cannot be given an ID (codex): conversationLearning.ts. */
  learnConversation(name: string, options: { boundMs?: number; onlyIfUnique?: boolean; quiet?: boolean } = {}): Promise<string | undefined> {
    return learnConversation(this.learning(), name, options);
  }

  private learning(): LearningDeps {
    return { registry: this.registry, orchestrators: this.orchestrators, logger: this.deps.logger, require: (n) => this.require(n), storeContext: (r) => this.storeContext(r) };
  }

  /** Whether a session that is not running could be resumed now (its conversation is known and stored). */
  async resumableNow(row: SessionRow): Promise<boolean> {
    return this.canResume(row, adapterFor(row.agent), row.conversation_id);
  }

  /** A session whose pane is gone (its server died): no pane, no pid, `terminated`, resumable when it can be. */
  async markGone(name: string): Promise<SessionRow> {
    const row = await this.require(name);
    const resumable = await this.canResume(row, adapterFor(row.agent), row.conversation_id);
    return this.registry.mutate((tx) => {
      const now = tx.get(name);
      if (!now || now.target !== row.target) return now ?? row;
      return tx.update(name, { status: now.status === 'running' || now.status === 'starting' ? 'terminated' : now.status, target: null, pid: null, resumable });
    });
  }

  async require(name: string): Promise<SessionRow> {
    const problem = nameProblem(name, 'session name');
    if (problem) throw new UsageError(problem, 'bad_name');
    const row = await this.registry.get(name);
    if (!row) throw new UsageError(`unknown session '${name}'`, 'unknown_session');
    return row;
  }

  storeContext(row: Pick<SessionRow, 'agent' | 'command'>): StoreContext {
    const adapter = adapterFor(row.agent);
    return { home: this.deps.env.HOME ?? '', env: this.deps.env, program: this.commandFor(adapter, row.command ?? undefined).program };
  }

  private async canResume(row: SessionRow, adapter: AgentAdapter, conversationId: string | null): Promise<boolean> {
    if (adapter.name === 'shell') return (row.command?.length ?? 0) > 0;
    if (!conversationId) return false;
    if (adapter.preassignId) return true; // stored: resume it; never used: start afresh under the same ID
    return !adapter.listConversations || (await isStored(adapter, this.storeContext(row), row.cwd, conversationId));
  }

  private commandFor(adapter: AgentAdapter, command: readonly string[] | undefined): { program: string[]; args: string[] } {
    return agentCommand(adapter, command, this.deps.config.agents);
  }

  /**
   * Why `agent`'s program (its MAM_AGENT_COMMAND_<AGENT> override, else its CLI) cannot start in
   * `cwd`, or undefined when it can: the check a create makes, without spawning anything.
   */
  programProblem(agent: string, cwd: string): string | undefined {
    const adapter = adapterFor(agent);
    if (adapter.name === 'shell') return undefined;
    return findProgram(this.commandFor(adapter, undefined).program[0]!, cwd, this.deps.env.PATH ?? '');
  }

  private async place(kind: MuxKind, server: string, label: string, argv: string[], cwd: string, adapter: AgentAdapter) {
    const env = { ...adapter.environment(this.deps.env), MAM_WORKSPACE: this.deps.controlPlane.workspace, MAM_SESSION: label };
    // One placement at a time per server: parallel creates each get their own pane.
    const owner = this.deps.controlPlane.workspace;
    return withLock(this.deps.controlPlane.paths.lock(`place-${kind}-${server}`), () => this.deps.muxFactory(kind, server).spawn({ label, argv, cwd, env, owner }), {
      what: `pane placement on ${kind} server ${server}`,
      timeoutMs: 60_000,
    });
  }

  /** Asks the agent to exit its own way, waits, then closes the pane if it is still there. */
  private async endPane(row: SessionRow, adapter: AgentAdapter, graceMs: number): Promise<void> {
    const mux = this.muxOf(row);
    const target = row.target!;
    const gone = async () => !(await mux.listPanes()).some((p) => p.id === target && p.alive);
    try {
      for (const step of adapter.exitSteps) {
        if ('text' in step) {
          // Typed like any line: an agent still starting would drop it.
          await injectLine(mux, target, step.text, { readyTimeoutMs: 10_000, ...this.screenOptions(row, adapter) });
        } else {
          await mux.sendKeys(target, step.keys);
        }
        await sleep(100);
      }
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline) {
        if (await gone()) return;
        await sleep(100);
      }
      this.deps.logger.warn(`session '${row.name}' did not exit within ${Math.round(graceMs / 1000)} s; closing its pane`);
    } catch (err) {
      this.deps.logger.warn(`session '${row.name}': ${errorMessage(err)}; closing its pane`);
    }
    await mux.kill(target);
  }
}

/**
 * A `starting` row whose create died midway (killed, crashed): never updated since it was inserted,
 * and the process that was placing its pane is gone. It must not hold the name.
 */
export function abandonedCreate(row: SessionRow): boolean {
  return row.status === 'starting' && row.created_at === row.updated_at && row.pid !== null && !isAlive(row.pid);
}

/** A `starting` row whose create or resume died midway (the placing process is gone). */
export function abandonedStart(row: SessionRow): boolean {
  return row.status === 'starting' && row.target === null && row.pid !== null && !isAlive(row.pid);
}

function existingDirectory(dir: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    throw new UsageError(`--cwd ${dir} does not exist`, 'bad_cwd');
  }
  if (!stat.isDirectory()) throw new UsageError(`--cwd ${dir} is not a directory`, 'bad_cwd');
  return fs.realpathSync(dir);
}
