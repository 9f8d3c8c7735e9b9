import * as net from 'node:net';
import { UsageError } from '../../core/base/errors';
import { nameProblem, printable } from '../../core/base/ids';
import { isTerminal, type JobRecord } from '../../core/store/jobSchema';
import { exitCodeOf } from '../../core/jobs/submit';
import { dispatchSecretOf } from '../../core/remote/dispatchMessage';
import { RemoteRunner } from '../../core/remote/runner';
import { defineCommand, type Command } from '../command';

const run = defineCommand({
  path: ['remote', 'run'],
  summary: 'take jobs sent to remote:NAME from the shared broker and run them in a local session',
  options: {
    name: { kind: 'string', value: 'NAME', required: true, description: 'the runner name submitters use: --session remote:NAME' },
    session: { kind: 'string', value: 'SESSION', description: 'the local session every job goes to (default: the one the submitter names, remote:NAME/SESSION)' },
    once: { kind: 'boolean', description: 'take one job, exit when it has ended (exit status as for job submit)' },
  },
  details: [
    'Runs until SIGINT or SIGTERM (with --once: until its one job has ended).',
    '',
    "The workspace's broker (MQTT_BROKER …) must be the submitters' broker, and MAM_DISPATCH_SECRET the",
    'same on both hosts: dispatches are signed with it, and unsigned or mis-signed ones are refused, as',
    'are replays of a dispatch already taken. A job cancelled by its submitter is cancelled here too,',
    'which frees the session. A dispatch carries the job token in clear (signed, not',
    'encrypted): use a private broker, over TLS when it is not on this host.',
    '',
    'It says online on mam/remote/NAME/presence, and leaves offline there as its MQTT will: if it',
    'vanishes (killed, crashed, its host cut off past the keepalive), its submitters fail its open',
    'jobs at once (runner_lost). Stopped by a signal, it says stopped and fails nothing: started',
    'again, it relays what its jobs published meanwhile. Several hosts: docs/scaling.md.',
  ].join('\n'),
  async run(ctx) {
    const o = ctx.args.options;
    const { name, session } = o;
    for (const [flag, value, what] of [['--name', name, 'runner name'], ['--session', session, 'session name']] as const) {
      const problem = value === undefined ? undefined : nameProblem(value, what);
      if (problem) throw new UsageError(`${flag} ${printable(value!, 60)}: ${problem}`);
    }
    // Checked before anything connects, starts or writes: exit 64 with nothing changed.
    dispatchSecretOf(ctx.config());
    const engine = ctx.jobs();
    const runner = new RemoteRunner({ engine, name, ...(session ? { session } : {}), once: Boolean(o.once) });
    const say = (line: string): void => ctx.out(`${new Date().toISOString()} ${line}`);
    runner.onDidRefuse((r) => ctx.io.stderr(`mam: warning: refused a ${r.kind} on ${r.topic}${r.jobId ? ` (job ${r.jobId})` : ''}: ${r.reason}: ${r.message}\n`));
    runner.onDidAccept(({ job, from }) => say(`accepted job ${job.id} from workspace ${from} for session ${job.target?.name ?? '(none)'}`));
    engine.ledger.onDidChangeJob(({ job, previous }) => {
      if (job.state !== previous && job.remote) say(`job ${job.id}: ${previous ?? 'new'} → ${job.state}${job.reason ? ` (${job.reason})` : ''}`);
    });

    let first: string | undefined;
    const ended = new Promise<JobRecord>((resolve) => {
      runner.onDidAccept(({ job }) => (first ??= job.id));
      runner.onDidFinish((job) => {
        if (job.id === first) resolve(job);
      });
    });
    const stopped = new Promise<'signal'>((resolve) => {
      process.once('SIGINT', () => resolve('signal'));
      process.once('SIGTERM', () => resolve('signal'));
    });
    try {
      await runner.start();
      const endpoint = engine.endpoint!;
      if (!endpoint.tls && !isLoopback(endpoint.host)) ctx.logger.warn(`the broker ${endpoint.host}:${endpoint.port} is used without TLS: dispatches carry job tokens in clear`);
      if (session && !(await ctx.controlPlane().sessions.get(session))) ctx.logger.warn(`there is no session '${session}' here yet: jobs fail with target_not_found until 'mam session create --name ${session} …' makes one`);
      say(`runner ${name} listening on ${runner.listeningOn} at ${endpoint.host}:${endpoint.port}${session ? `, jobs go to session ${session}` : ''}`);
      const outcome = await Promise.race([o.once ? ended : new Promise<never>(() => undefined), stopped]);
      const open = await runner.stop();
      for (const job of open) say(`job ${job.id} is still ${job.state}: its timers are left to 'mam monitor'; a runner started again relays its events`);
      if (outcome === 'signal') return 0;
      say(`job ${outcome.id} ended ${outcome.state}${outcome.reason ? ` (${outcome.reason})` : ''}`);
      return isTerminal(outcome.state) ? exitCodeOf(outcome) : 0;
    } finally {
      runner.dispose();
    }
  },
});

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (net.isIPv4(host) && host.startsWith('127.'));
}

export const remoteCommands: readonly Command[] = [run];
