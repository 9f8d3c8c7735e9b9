/**
 * `mam event …`: what an agent runs, once per event, inside its turn (dist/cli-event.js). Kept lean
 * on purpose: where the host's relay runs (an agent's job after its `started`) it loads only the
 * protocol, the outbox and the relay's writing end — no settings, no MQTT, no SQLite — so it costs
 * little more than starting Node. Publishing for itself, a `started` and the heartbeat service are
 * in dist/cli-event-publish.js (eventPublish.ts), loaded when needed.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { ExitCode, UsageError, errorMessage, isMamError } from '../core/base/errors';
import { printable } from '../core/base/ids';
import { findWorkspace } from '../core/config/workspace';
import { relayFileOf } from '../core/messaging/heartbeatRegistry';
import { ControlPlanePaths } from '../core/store/paths';
import { EVENT_NAMES, isEventName } from '../core/messaging/protocol';
import { relayJobEvent } from '../core/messaging/eventRelay';
import { parseStrictArgs, StrictArgsError } from './strictArgs';
import { requireWithCodeCache } from './codeCache';

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
    if (argv[0] === '__heartbeats') return await publishing().heartbeatService(argv.slice(1), io.env, io.cwd);
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
    const request = {
      workspace,
      jobId: values.job,
      event,
      ...(values.detail !== undefined ? { detail: values.detail } : {}),
      ...(values.report !== undefined ? { reportFile: values.report } : {}),
      sender: io.env.MAM_SESSION || `${os.hostname()}:${process.pid}`,
    };
    // The host's relay (its heartbeat service) takes any event but a `started`, which registers the
    // job's heartbeats: this bundle is all such a process loads. Otherwise the rest is loaded.
    const handed = event === 'started' ? undefined : await relayJobEvent(request, relayFileOf(new ControlPlanePaths(workspace)));
    const result = handed?.relayed
      ? { payload: handed.payload, relayed: true, delivered: false, problem: undefined }
      : await publishing().publishEvent(request, io.env, { ...(asked !== undefined ? { asked } : {}), ...(handed ? { appended: handed.payload } : {}) });
    if (values.json) io.stdout(`${JSON.stringify(result.payload)}\n`);
    else if (result.relayed) io.stdout(`event ${event} (seq ${result.payload.seq}) handed to this host's relay\n`);
    else if (result.delivered) io.stdout(`event ${event} (seq ${result.payload.seq}) delivered\n`);
    if (!result.delivered && !result.relayed) {
      io.stderr(`mam: warning: ${result.problem}; event ${event} (seq ${result.payload.seq}) is safe in the job's outbox and will be delivered later\n`);
    }
    return 0;
  } catch (err) {
    if (isMamError(err)) {
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

/** The rest of `mam event` (dist/cli-event-publish.js), loaded when the relay does not take the event. */
function publishing(): typeof import('./eventPublish') {
  return requireWithCodeCache(path.join(__dirname, 'cli-event-publish.js'), require) as typeof import('./eventPublish');
}
