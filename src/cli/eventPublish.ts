/**
 * What `mam event` loads only when the host's relay does not take its event (dist/cli-event-publish.js):
 * publishing for itself (a connection of its own, the workspace's settings and broker record), a
 * `started` (the heartbeat period and the job's registration with the host's heartbeat service),
 * keeping that service up, and the service itself (`mam event __heartbeats`). An agent's events
 * after its `started` are handed to the relay and never load this (event.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../core/config/settings';
import { findWorkspace } from '../core/config/workspace';
import { systemClock } from '../core/base/clock';
import { HeartbeatRegistry } from '../core/messaging/heartbeatRegistry';
import { HeartbeatService } from '../core/messaging/heartbeatService';
import { num, obj, oneOf, optional, parse, str, type Infer } from '../core/base/schema';
import { JOB_STATES } from '../core/store/jobSchema';
import { ControlPlanePaths } from '../core/store/paths';
import type { EventPayload } from '../core/messaging/protocol';
import { flushOutbox, publishJobEvent, type AppendRequest } from '../core/messaging/publisher';
import { relayJobEvent } from '../core/messaging/eventRelay';
import type { QuickEndpoint } from '../core/messaging/quickPublish';
import { externalBroker, readEmbeddedEndpoint } from '../core/messaging/brokerEndpoint';

/** What became of an event: handed to the host's relay, delivered by this process, or left in the outbox (why). */
export interface Sent {
  payload: EventPayload;
  relayed: boolean;
  delivered: boolean;
  problem?: string;
}

/**
 * Sends an event the relay did not take — `appended` when it is in the outbox already (the relay
 * went away after the append): publishes it, and any earlier one still waiting, for itself. A
 * `started` also registers the job's heartbeats (`asked` seconds, else the job's or the configured
 * period; 0: none); it goes through the relay when one runs.
 */
export async function publishEvent(request: AppendRequest, env: NodeJS.ProcessEnv, options: { asked?: number; appended?: EventPayload } = {}): Promise<Sent> {
  const period = options.asked ?? (request.event === 'started' ? defaultHeartbeat(request.workspace, request.jobId, env) : undefined);
  const heartbeat = period === undefined || period <= 0 ? undefined : period;
  const withBeat: AppendRequest = heartbeat === undefined ? request : { ...request, heartbeat };
  const paths = new ControlPlanePaths(request.workspace);
  const handed = options.appended ? { payload: options.appended, relayed: false } : request.event === 'started' ? await relayJobEvent(withBeat, new HeartbeatRegistry(paths).relayFile) : undefined;
  let result: Sent;
  if (handed?.relayed) {
    result = { payload: handed.payload, relayed: true, delivered: false };
  } else if (handed) {
    const r = await flushOutbox({ workspace: request.workspace, jobId: request.jobId, endpoint: brokerEndpoint(request.workspace, env) });
    result = { payload: handed.payload, relayed: false, delivered: r.problem === undefined, ...(r.problem !== undefined ? { problem: r.problem } : {}) };
  } else {
    const r = await publishJobEvent({ ...withBeat, endpoint: brokerEndpoint(request.workspace, env) });
    result = { payload: r.payload, relayed: false, delivered: r.delivered, ...(r.problem !== undefined ? { problem: r.problem } : {}) };
  }
  if (heartbeat !== undefined) await startHeartbeat(request.workspace, request.jobId, heartbeat, env);
  else if (!result.relayed) await keepHeartbeatsUp(request.workspace, request.jobId, env);
  return result;
}

/** The broker to publish to: the configured external one, else the workspace's running embedded one. */
function brokerEndpoint(workspace: string, env: NodeJS.ProcessEnv): QuickEndpoint | undefined {
  return externalBroker(resolveConfig({ workspace, env })) ?? readEmbeddedEndpoint(new ControlPlanePaths(workspace));
}

/**
 * N for a `started` without `--heartbeat`: the period recorded in the job (fixed at submit), else
 * the configured one. A person's job has none: a person does not heartbeat (its timers are the budget).
 */
function defaultHeartbeat(workspace: string, jobId: string, env: NodeJS.ProcessEnv): number | undefined {
  const job = readJob(new ControlPlanePaths(workspace).jobFile(jobId));
  if (job?.target?.kind === 'human') return undefined;
  const recorded = job?.timers?.heartbeat_s;
  return recorded !== undefined && recorded > 0 ? recorded : resolveConfig({ workspace, env }).values.heartbeatS;
}

/**
 * Registers the job with this host's heartbeat service (one process for every job of the
 * workspace on this host), starting the service if none runs. A newer `started` of the job
 * replaces its registration.
 */
async function startHeartbeat(workspace: string, jobId: string, seconds: number, env: NodeJS.ProcessEnv): Promise<void> {
  const registry = new HeartbeatRegistry(new ControlPlanePaths(workspace));
  await registry.register({ job: jobId, every_s: seconds, watch_pid: agentPid(), sender: env.MAM_SESSION || `${os.hostname()}:heartbeat` }, () => spawnService(workspace, env));
}

/**
 * Any other event of a job this host keeps heartbeats for starts the service again if it died
 * (killed, or the machine's OOM killer): the job's heartbeats are back before its idle timer runs out.
 */
async function keepHeartbeatsUp(workspace: string, jobId: string, env: NodeJS.ProcessEnv): Promise<void> {
  const registry = new HeartbeatRegistry(new ControlPlanePaths(workspace));
  if (!registry.read(jobId) || registry.servicePid() !== undefined) return;
  await registry.ensureService(() => spawnService(workspace, env));
}

function spawnService(workspace: string, env: NodeJS.ProcessEnv): number {
  // Loaded only here: most events start no service.
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const child = spawn(process.execPath, [process.argv[1]!, 'event', '__heartbeats', '--workspace', workspace], { detached: true, stdio: 'ignore', env });
  child.unref();
  return child.pid!;
}

/**
 * The agent's own process: the pane's program, found by walking up from us (we run in a shell the
 * agent started). Heartbeats stop when it is gone. The nearest ancestor whose parent is a
 * multiplexer server (tmux or herdr) is the pane's program; failing that, our parent.
 */
function agentPid(): number {
  let pid = process.ppid;
  for (let depth = 0; depth < 12 && pid > 1; depth++) {
    const parent = Number(/^\d+ \(.*\) \S (\d+)/s.exec(readText(`/proc/${pid}/stat`))?.[1] ?? 0);
    const parentName = readText(`/proc/${parent}/comm`).trim();
    if (parentName.startsWith('tmux') || parentName.startsWith('herdr')) return pid;
    if (parent <= 1) break;
    pid = parent;
  }
  return process.ppid;
}

/** The host's heartbeat service (`mam event __heartbeats`): serves every registered job until none is left. */
export async function heartbeatService(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { workspace: { type: 'string' } } });
  const workspace = findWorkspace({ flag: values.workspace, env, cwd }).root;
  const service = new HeartbeatService({
    registry: new HeartbeatRegistry(new ControlPlanePaths(workspace)),
    endpoint: () => brokerEndpoint(workspace, env),
    clock: systemClock,
    clientId: `mam-heartbeats-${os.hostname()}-${process.pid}`,
  });
  process.on('SIGTERM', () => service.stop());
  service.start();
  await service.done;
  return 0;
}

/**
 * What `mam event` reads of a job's record: its state, its target's kind and its heartbeat. Only
 * these fields are parsed: the whole record's schema would double what this bundle loads.
 */
const jobView = obj({ state: oneOf(JOB_STATES), target: optional(obj({ kind: str() })), timers: optional(obj({ heartbeat_s: num() })) });

/** The job's record as far as `mam event` reads it, or undefined when it is missing or unreadable (then the defaults apply). */
function readJob(file: string): Infer<typeof jobView> | undefined {
  try {
    return parse(jobView, JSON.parse(readText(file)));
  } catch {
    return undefined;
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
