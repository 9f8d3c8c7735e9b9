/**
 * `mam event …`: what an agent runs, once per event, inside its turn. Kept lean on purpose: it
 * loads the protocol, the outbox, a one-shot MQTT publisher and the settings parser — no SQLite,
 * no YAML, no MQTT.js — so it costs little more than starting Node.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { parseArgs } from 'node:util';
import { ExitCode, MamError, UsageError, errorMessage } from '../core/base/errors';
import { printable } from '../core/base/ids';
import { resolveConfig } from '../core/config/settings';
import { findWorkspace } from '../core/config/workspace';
import { systemClock } from '../core/base/clock';
import { HeartbeatRegistry } from '../core/messaging/heartbeatRegistry';
import { HeartbeatService } from '../core/messaging/heartbeatService';
import { num, obj, oneOf, optional, parse, str, type Infer } from '../core/base/schema';
import { JOB_STATES } from '../core/store/jobSchema';
import { ControlPlanePaths } from '../core/store/paths';
import { EVENT_NAMES, isEventName, type EventPayload } from '../core/messaging/protocol';
import { appendJobEvent, flushOutbox, publishJobEvent } from '../core/messaging/publisher';
import { handToRelay, openRelay } from '../core/messaging/eventRelay';
import type { QuickEndpoint } from '../core/messaging/quickPublish';
import { externalBroker, readEmbeddedEndpoint } from '../core/messaging/brokerEndpoint';
import { parseStrictArgs, StrictArgsError } from './strictArgs';

const HELP = `mam event — publish a job event (agents run this; the job's brief gives the exact lines)

Usage: mam event EVENT --job ID [--detail TEXT] [--heartbeat N] [--report FILE]
       mam event --job ID --event EVENT …   (the seeds' publish_event.py spelling)

  EVENT             ${EVENT_NAMES.join(', ')}
  --event EVENT     the event (instead of EVENT)
  --job ID          the job
  --detail TEXT     a short note shown with the event
  --heartbeat N     with started: a heartbeat every N seconds until the job ends or the agent's pane closes (one service per host sends them)
                    (default: the job's N, MAM_HEARTBEAT_S, 30; 0: no automatic heartbeats)
  --report FILE     with completed: hand in a report (reviewers end it with [VERDICT: PASS] or [VERDICT: NOT PASS])
  --workspace DIR   the workspace (default: $MAM_WORKSPACE, else the nearest .mam/ or git root)
  --json            print the published event as JSON

The event is written to the job's outbox on disk before it is sent, so it is never lost: if the broker
cannot be reached it stays there, and the command still exits 0 with a warning. Where this host's
heartbeat service runs (after a started with heartbeats), the service sends it: "handed to this host's relay".
`;

export async function runEventCommand(argv: readonly string[], io: { stdout(t: string): void; stderr(t: string): void; env: NodeJS.ProcessEnv; cwd: string }): Promise<number> {
  try {
    if (argv[0] === '__heartbeats') return await heartbeatService(argv.slice(1), io.env, io.cwd);
    const { values, positionals } = parseEventArgs(argv);
    if (values.help) {
      io.stdout(HELP);
      return 0;
    }
    if (values.event !== undefined && positionals.length > 0) throw new UsageError('mam event: give the event once: either as an argument or with --event');
    const event = values.event ?? positionals[0];
    if (event === undefined) throw new UsageError(`mam event: which event? one of ${EVENT_NAMES.join(', ')}`);
    if (!isEventName(event)) throw new UsageError(`mam event: unknown event '${printable(event, 40)}'; one of ${EVENT_NAMES.join(', ')}`);
    if (positionals.length > 1) throw new UsageError(`mam event: unexpected argument '${printable(positionals[1]!, 40)}'`);
    if (!values.job) throw new UsageError('mam event: --job is required');
    const asked = values.heartbeat === undefined ? undefined : Number(values.heartbeat);
    if (asked !== undefined && !(Number.isFinite(asked) && /^\d+(\.\d+)?$/.test(values.heartbeat!))) {
      throw new UsageError(`mam event: --heartbeat must be a number of seconds, or 0 for none (got '${printable(values.heartbeat!, 40)}')`);
    }
    if (asked !== undefined && event !== 'started') throw new UsageError('mam event: --heartbeat goes with started');
    const workspace = findWorkspace({ flag: values.workspace, env: io.env, cwd: io.cwd }).root;
    const period = asked ?? (event === 'started' ? defaultHeartbeat(workspace, values.job, io.env) : undefined);
    const heartbeat = period === undefined || period <= 0 ? undefined : period;
    const result = await sendEvent(
      {
        workspace,
        jobId: values.job,
        event,
        ...(values.detail !== undefined ? { detail: values.detail } : {}),
        ...(heartbeat !== undefined ? { heartbeat } : {}),
        ...(values.report !== undefined ? { reportFile: values.report } : {}),
        sender: io.env.MAM_SESSION || `${os.hostname()}:${process.pid}`,
      },
      io.env,
    );
    if (heartbeat !== undefined) await startHeartbeat(workspace, values.job, heartbeat, io.env);
    else if (!result.relayed) await keepHeartbeatsUp(workspace, values.job, io.env);
    if (values.json) io.stdout(`${JSON.stringify(result.payload)}\n`);
    else if (result.relayed) io.stdout(`event ${event} (seq ${result.payload.seq}) handed to this host's relay\n`);
    else if (result.delivered) io.stdout(`event ${event} (seq ${result.payload.seq}) delivered\n`);
    if (!result.delivered && !result.relayed) {
      io.stderr(`mam: warning: ${result.problem}; event ${event} (seq ${result.payload.seq}) is safe in the job's outbox and will be delivered later\n`);
    }
    return 0;
  } catch (err) {
    if (err instanceof MamError) {
      io.stderr(`mam: ${err.message}\n`);
      return err.exitCode;
    }
    io.stderr(`mam: internal error: ${errorMessage(err)}\n`);
    return ExitCode.internal;
  }
}

const EVENT_OPTIONS = {
  job: { type: 'string' },
  event: { type: 'string' },
  detail: { type: 'string' },
  heartbeat: { type: 'string' },
  report: { type: 'string' },
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parseEventArgs(argv: readonly string[]) {
  try {
    return parseStrictArgs(argv, EVENT_OPTIONS);
  } catch (err) {
    if (!(err instanceof StrictArgsError)) throw err;
    const m = /'(-{1,2}[^'\s]+)/.exec(err.message);
    throw new UsageError(`mam event: ${err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? `unknown option ${printable(m?.[1] ?? '', 40)}` : printable(err.message.split('\n')[0]!, 200)}; see 'mam event --help'`);
  }
}

type EventRequest = Parameters<typeof appendJobEvent>[0];

/** What became of the event: handed to the host's relay, delivered by this process, or left in the outbox (why). */
interface Sent {
  payload: EventPayload;
  relayed: boolean;
  delivered: boolean;
  problem?: string;
}

/**
 * Writes the event to the job's outbox and has it published: by the host's relay when one runs
 * (the heartbeat service: this process then opens no connection, nor loads node:net), else by this
 * process. A relay that goes away between the two (its pipe closed) leaves the event to this process.
 */
async function sendEvent(request: EventRequest, env: NodeJS.ProcessEnv): Promise<Sent> {
  const relay = openRelay(new HeartbeatRegistry(new ControlPlanePaths(request.workspace)).relayFile);
  if (relay === undefined) {
    const r = await publishJobEvent({ ...request, endpoint: brokerEndpoint(request.workspace, env) });
    return { payload: r.payload, relayed: false, delivered: r.delivered, ...(r.problem !== undefined ? { problem: r.problem } : {}) };
  }
  let payload: EventPayload;
  try {
    payload = await appendJobEvent(request);
  } catch (err) {
    fs.closeSync(relay);
    throw err;
  }
  if (handToRelay(relay, request.jobId)) return { payload, relayed: true, delivered: false };
  const r = await flushOutbox({ workspace: request.workspace, jobId: request.jobId, endpoint: brokerEndpoint(request.workspace, env) });
  return { payload, relayed: false, delivered: r.problem === undefined, ...(r.problem !== undefined ? { problem: r.problem } : {}) };
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
async function heartbeatService(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
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
