import * as path from 'node:path';
import { ControlPlanePaths } from '../../core/store/paths';
import type { Logger } from '../../core/base/log';
import { buildCore } from '../../core/core';
import { externalBroker } from '../../core/messaging/brokerEndpoint';
import { brokerFiles, describeEndpoint, runningEmbeddedBroker } from '../../core/messaging/brokerRecord';
import { embeddedBrokerStatus, startEmbeddedBroker, stopEmbeddedBroker } from '../../core/messaging/embeddedBroker';
import { probeBroker } from '../../core/messaging/mqttProbe';
import { workspaceIdOf } from '../../core/messaging/protocol';
import { defineCommand, JSON_OPTION, type CliIo, type Command, type CommandContext } from '../command';
import { since } from '../output';

function paths(ctx: CommandContext): ControlPlanePaths {
  return new ControlPlanePaths(ctx.workspace());
}

const start = defineCommand({
  path: ['broker', 'start'],
  summary: "start the workspace's embedded MQTT broker (does nothing if it runs)",
  options: { ...JSON_OPTION },
  details: [
    'The broker listens on 127.0.0.1 only, with credentials generated once and kept in .mam/broker.json (mode 0600).',
    'It keeps its port across restarts, and stops by itself when the workspace\'s .mam/ folder is deleted.',
    'With MQTT_BROKER set, MAM uses that broker and this command starts nothing.',
  ].join('\n'),
  async run(ctx) {
    const external = externalBroker(ctx.config(), ctx.logger);
    if (external) {
      if (ctx.args.options.json) ctx.json({ kind: 'external', host: external.host, port: external.port, tls: external.tls, started: false });
      else ctx.out(`MQTT_BROKER is set: MAM uses ${describeEndpoint(external)}; the embedded broker is not started.`);
      return 0;
    }
    const handle = await startEmbeddedBroker(paths(ctx), ctx.logger, { env: ctx.io.env });
    const { endpoint } = handle;
    if (ctx.args.options.json) {
      ctx.json({ kind: 'embedded', host: endpoint.host, port: endpoint.port, username: endpoint.username, pid: handle.pid, started: handle.started });
    } else {
      ctx.out(`${handle.started ? 'Started' : 'Already running:'} the embedded broker on ${endpoint.host}:${endpoint.port} (pid ${handle.pid}); credentials in ${paths(ctx).brokerFile}.`);
    }
    return 0;
  },
});

const stop = defineCommand({
  path: ['broker', 'stop'],
  summary: "stop the workspace's embedded MQTT broker",
  options: { ...JSON_OPTION },
  details: 'Keeps .mam/broker.json (credentials and port) for the next start. Jobs in flight keep their state on disk.',
  async run(ctx) {
    const result = await stopEmbeddedBroker(paths(ctx), { logger: ctx.logger });
    if (ctx.args.options.json) ctx.json(result);
    else ctx.out(result.stopped ? `Stopped the embedded broker (pid ${result.pid}).` : 'The embedded broker was not running.');
    return 0;
  },
});

const status = defineCommand({
  path: ['broker', 'status'],
  summary: 'show which broker MAM uses and whether it accepts connections',
  options: { ...JSON_OPTION },
  details: 'Read-only: never starts a broker. Exit status 0 either way; see "running" / "accepting".',
  async run(ctx) {
    const external = externalBroker(ctx.config(), ctx.logger);
    if (external) {
      const probe = await probeBroker(external, 3_000);
      const accepting = probe.ok;
      // A shared broker's ACL names each workspace's topics (docs/scaling.md): say which they are.
      const workspaceId = workspaceIdOf(ctx.workspace());
      if (ctx.args.options.json) {
        ctx.json({ kind: 'external', host: external.host, port: external.port, tls: external.tls, accepting, ...(probe.ok ? {} : { problem: probe.detail }), workspace_id: workspaceId, topics: `mam/${workspaceId}/#` });
      } else {
        ctx.out(`external broker ${describeEndpoint(external)} (MQTT_BROKER): ${accepting ? 'accepts connections' : `not usable: ${probe.ok ? '' : probe.detail}`}`);
        ctx.out(`this workspace's topics: mam/${workspaceId}/# (workspace ID ${workspaceId})`);
      }
      return 0;
    }
    const p = paths(ctx);
    const s = embeddedBrokerStatus(p);
    const running = runningEmbeddedBroker(p);
    const probe = running ? await probeBroker(running.endpoint, 3_000) : undefined;
    const accepting = probe?.ok ?? false;
    if (ctx.args.options.json) {
      ctx.json({ kind: 'embedded', host: '127.0.0.1', ...s, accepting, log: brokerFiles(p).log });
      return 0;
    }
    if (s.problem) ctx.out(`embedded broker: ${s.problem}`);
    else if (s.running) {
      const clients = s.clients === undefined ? '' : `, ${s.clients} client(s)`;
      ctx.out(`embedded broker: running on 127.0.0.1:${s.port}, pid ${s.pid}, up ${since(s.started_at)}${clients}${accepting ? '' : ` — but not accepting connections (${probe && !probe.ok ? probe.detail : '?'})`}`);
    } else if (s.port !== null) ctx.out(`embedded broker: stopped (its next start tries port ${s.port}); start it with 'mam broker start'`);
    else ctx.out("embedded broker: never started in this workspace; start it with 'mam broker start'");
    return 0;
  },
});

/** The daemon entry, spawned detached by `mam broker start`; not for people, so hidden from help. */
const serve = defineCommand({
  path: ['broker', 'serve'],
  summary: 'run the embedded broker in the foreground (the daemon that `mam broker start` spawns)',
  hidden: true,
  async run(ctx) {
    // aedes lives in its own bundle (dist/broker-daemon.js), so that no other command pays for it.
    const { runBrokerDaemon } = require(path.join(__dirname, 'broker-daemon.js')) as typeof import('../../core/messaging/brokerDaemon');
    const logger = daemonLogger(ctx.io);
    const code = await runBrokerDaemon(paths(ctx), logger, { onListening: () => startWarden(ctx, logger) });
    // Everything is closed by now; if some library still holds the event loop, leave anyway.
    setTimeout(() => process.exit(code), 1_000).unref();
    return code;
  },
});

/**
 * The job warden, in the daemon: the timers of jobs nobody waits on (`--no-wait`, or a submitter
 * that died) are enforced as long as the workspace's broker runs — with VS Code closed and no
 * `mam monitor` started. It subscribes like any engine, so late events are applied before a timer
 * judges, and it is one more supervisor among those that may run: each decision is re-checked
 * under the job's lock, so none is taken twice.
 */
async function startWarden(ctx: CommandContext, logger: Logger): Promise<{ dispose(): void } | undefined> {
  if (ctx.io.env.MAM_NO_WARDEN) return undefined; // tests and benchmarks whose own subscriber is the subject
  // A core of its own: the warden logs with the daemon's timestamps.
  const core = buildCore(ctx.workspace(), { env: ctx.io.env, logger, cliPath: ctx.cliPath() });
  await core.jobs.connect();
  core.jobs.supervise('orphans', { rescanEveryMs: 30_000 });
  logger.info('job warden: enforcing the timers of jobs nobody waits on');
  return core;
}

/** Timestamped lines to stderr, which the daemon's spawner points at .mam/broker.log. */
function daemonLogger(io: CliIo): Logger {
  const debug = Boolean(io.env.MAM_DEBUG);
  const line = (level: string, m: string): void => io.stderr(`${new Date().toISOString()} ${level} ${m.replace(/\s*\n\s*/g, ' ')}\n`);
  return {
    debug: (m) => debug && line('debug', m),
    info: (m) => line('info', m),
    warn: (m) => line('warn', m),
    error: (m) => line('error', m),
  };
}

export const brokerCommands: readonly Command[] = [start, stop, status, serve];
