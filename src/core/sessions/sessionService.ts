import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError } from '../base/errors';
import { nameProblem, printable } from '../base/ids';
import type { Logger } from '../base/log';
import { adapterFor, type AgentAdapter } from '../agents';
import type { StoreContext } from '../agents/adapter';
import type { ResolvedConfig } from '../config/settings';
import type { ControlPlane } from '../controlPlane';
import { checkServerName, defaultServerName, type MuxFactory } from '../mux';
import { injectLine, type InjectReport } from '../mux/inject';
import type { Multiplexer } from '../mux/multiplexer';
import { sleep, withLock } from '../store/lock';
import { SESSION_ROLES, type MuxKind, type SessionRole, type SessionRow } from '../store/sessionSchema';
import { discoverConversation, isStored, purgeConversation } from './conversations';
import { OrchestratorRegistry } from './orchestrators';
import { findProgram } from './program';

export interface SessionServiceDeps {
  controlPlane: ControlPlane;
  config: ResolvedConfig;
  logger: Logger;
  /** The environment agents and multiplexers run with (HOME, PATH, TMUX_TMPDIR, …). */
  env: NodeJS.ProcessEnv;
  muxFactory: MuxFactory;
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

  constructor(private readonly deps: SessionServiceDeps) {
    this.orchestrators = new OrchestratorRegistry(deps.controlPlane.paths);
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
    const problem = nameProblem(request.name, 'session name');
    if (problem) throw new UsageError(problem, 'bad_name');
    const adapter = adapterFor(request.agent);
    const role = (request.role ?? 'worker') as SessionRole;
    if (!SESSION_ROLES.includes(role)) throw new UsageError(`unknown role '${printable(role, 40)}'; choose one of ${SESSION_ROLES.join(', ')}`);
    const mux = (request.mux ?? this.deps.config.values.mux) as MuxKind;
    if (mux !== 'tmux' && mux !== 'herdr') throw new UsageError(`unknown multiplexer '${printable(mux, 40)}'; choose tmux or herdr`);
    const server = request.server ?? this.defaultServer(mux);
    checkServerName(server);
    const cwd = existingDirectory(path.resolve(request.baseDir, request.cwd ?? '.'));
    const { program, args } = this.commandFor(adapter, request.command);
    if (await this.registry.get(request.name)) throw new UsageError(`session '${request.name}' already exists`, 'duplicate_session');

    const conversationId = adapter.preassignId?.() ?? null;
    const argv = adapter.spawnArgv(program, args, conversationId);
    this.checkProgram(argv, cwd, adapter);
    const now = new Date().toISOString();
    // Reserve the name first (the registry refuses a duplicate under its lock), then place the pane.
    await this.registry.mutate((tx) =>
      tx.insert({
        name: request.name, agent: adapter.name, role, mux, server, target: null, cwd, status: 'starting', resumable: false,
        conversation_id: conversationId, pid: null, created_at: now, updated_at: now, current_job: null, command: program,
      }),
    );
    try {
      const pane = await this.place(mux, server, request.name, argv, cwd, adapter);
      return await this.registry.mutate((tx) => tx.update(request.name, { status: 'running', target: pane.id, pid: pane.pid }));
    } catch (err) {
      await this.registry.mutate((tx) => tx.remove(request.name));
      throw err;
    }
  }

  async stop(name: string, options: StopOptions = {}): Promise<{ row: SessionRow; purged?: string; alreadyStopped: boolean }> {
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
    if (!conversationId) conversationId = (await this.discover(row, { onlyIfUnique: true }))?.id ?? null;
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
  async resume(name: string, options: { cwd?: string; baseDir: string }): Promise<SessionRow> {
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
    this.checkProgram(argv, row.cwd, adapter);

    await this.registry.mutate((tx) => tx.update(name, { status: 'starting' }));
    try {
      const pane = await this.place(row.mux, row.server, name, argv, row.cwd, adapter);
      return await this.registry.mutate((tx) => tx.update(name, { status: 'running', target: pane.id, pid: pane.pid }));
    } catch (err) {
      await this.registry.mutate((tx) => tx.update(name, { status: row.status }));
      throw err;
    }
  }

  /** Types one line into a running agent, verified like any injection (SPEC §4 send). */
  async send(name: string, text: string): Promise<InjectReport> {
    if (text.length === 0) throw new UsageError('--text is empty');
    if (/[\r\n]/.test(text)) throw new UsageError('--text must be one line; put longer messages in a file and send its path');
    if (text.length > 65_536) throw new UsageError(`--text is ${text.length} characters long; the limit is 65536`);
    const row = await this.require(name);
    if (row.status !== 'running' || !row.target) throw new UsageError(`session '${name}' is ${row.status}, not running; resume it first`, 'not_running');
    const adapter = adapterFor(row.agent);
    const startedAt = new Date();
    const report = await this.deliver(row, text, adapter);
    if (!row.conversation_id && adapter.listConversations) await this.learnConversation(name, startedAt);
    return report;
  }

  /** Types `text` into the session's pane; one delivery per session at a time. */
  async deliver(row: SessionRow, text: string, adapter = adapterFor(row.agent)): Promise<InjectReport> {
    if (!row.target) throw new UsageError(`session '${row.name}' has no pane`);
    const target = row.target;
    return withLock(this.deps.controlPlane.paths.lock(`input-${row.name}`), () =>
      injectLine(this.muxOf(row), target, text, { ...(adapter.readySign ? { readySign: adapter.readySign } : {}) }),
    { what: `input to session '${row.name}'`, timeoutMs: 120_000 });
  }

  /** After a first message, an agent that cannot be given an ID writes its conversation: record which. */
  async learnConversation(name: string, since: Date, boundMs = 10_000): Promise<string | undefined> {
    const deadline = Date.now() + boundMs;
    for (;;) {
      const row = await this.require(name);
      if (row.conversation_id) return row.conversation_id;
      const found = await this.discover(row, { since });
      if (found) {
        await this.registry.mutate((tx) => (tx.get(name)?.conversation_id ? undefined : tx.update(name, { conversation_id: found.id })));
        return found.id;
      }
      if (Date.now() >= deadline) {
        this.deps.logger.warn(`session '${name}': no new ${row.agent} conversation appeared in ${row.cwd}; it cannot be resumed until one does`);
        return undefined;
      }
      await sleep(250);
    }
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

  private async discover(row: SessionRow, options: { since?: Date; onlyIfUnique?: boolean }) {
    const owned = new Set<string>([
      ...(await this.registry.list()).filter((s) => s.name !== row.name && s.conversation_id).map((s) => s.conversation_id!),
      ...this.orchestrators.list().map((o) => o.conversation_id),
    ]);
    return discoverConversation(adapterFor(row.agent), this.storeContext(row), row.cwd, options.since ?? new Date(row.created_at), owned, options);
  }

  private async canResume(row: SessionRow, adapter: AgentAdapter, conversationId: string | null): Promise<boolean> {
    if (adapter.name === 'shell') return (row.command?.length ?? 0) > 0;
    if (!conversationId) return false;
    if (adapter.preassignId) return true; // stored: resume it; never used: start afresh under the same ID
    return !adapter.listConversations || (await isStored(adapter, this.storeContext(row), row.cwd, conversationId));
  }

  private commandFor(adapter: AgentAdapter, command: readonly string[] | undefined): { program: string[]; args: string[] } {
    const override = this.deps.config.agents[adapter.name as keyof ResolvedConfig['agents']];
    const program = command && command.length > 0 ? [...command] : override?.program ?? [...adapter.program];
    if (program.length === 0) throw new UsageError(`the ${adapter.name} agent needs --command "program args…"`);
    const args = command && command.length > 0 && adapter.name === 'shell' ? [] : override?.args ?? [...adapter.defaultArgs];
    return { program, args };
  }

  /** A missing agent CLI is a clear error before anything is registered or placed. */
  private checkProgram(argv: readonly string[], cwd: string, adapter: AgentAdapter): void {
    const missing = findProgram(argv[0]!, cwd, this.deps.env.PATH ?? '');
    if (missing) throw new UsageError(`${missing}; install it, or point MAM_AGENT_COMMAND_${adapter.name.toUpperCase()} at it`, 'program_not_found');
  }

  private async place(kind: MuxKind, server: string, label: string, argv: string[], cwd: string, adapter: AgentAdapter) {
    const env = { ...adapter.environment(), MAM_WORKSPACE: this.deps.controlPlane.workspace, MAM_SESSION: label };
    // One placement at a time per server: parallel creates each get their own pane.
    return withLock(this.deps.controlPlane.paths.lock(`place-${kind}-${server}`), () => this.deps.muxFactory(kind, server).spawn({ label, argv, cwd, env }), {
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
          await injectLine(mux, target, step.text, { readyTimeoutMs: 10_000, ...(adapter.readySign ? { readySign: adapter.readySign } : {}) });
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
      this.deps.logger.warn(`session '${row.name}': ${(err as Error).message}; closing its pane`);
    }
    await mux.kill(target);
  }
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
