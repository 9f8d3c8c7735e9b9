/**
 * The seeds' words: an agent or a script written against the seeds' commands runs unchanged. Each of
 * their flag names is an alias of MAM's own, listed in help on that flag's line, with the same
 * outcome; a flag given under two of its names is refused (64, one line, nothing changed).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { newJobId } from '../../src/core/base/ids';
import { controlPlane, FAKE_AGENT, jobRecord, mam, REPO_ROOT, sessionRow, snapshotTree, tempWorkspace } from '../support/helpers';
import { jobFixture, type JobFixture } from '../support/jobs';

describe("the seeds' words: their flag names as aliases of MAM's", function () {
  this.timeout(120_000);

  it('--help lists each alias on the line of the flag it stands for, and --job beside JOB', async () => {
    const ws = tempWorkspace();
    for (const [command, line] of [
      [['job', 'submit'], /^ {2}--session TARGET \(also --agent-session\) +NAME, tmux:NAME/m],
      [['job', 'submit'], /^ {2}--reviewer SESSION \(also --reviewer-session\) +with --type loop/m],
      [['job', 'submit'], /^ {2}--agent AGENT +the session's agent/m],
      [['session', 'create'], /^ {2}--name NAME \(also --session\) +the session name/m],
      [['session', 'create'], /^ {2}--server NAME \(also --herdr-session\) +the multiplexer server/m],
      [['loop'], /^ {2}--planner SESSION \(also --plan\) +a session that writes a plan/m],
      ...['status', 'logs', 'cancel', 'verify'].map((sub) => [['job', sub], /^ {2}JOB +the job ID \(or --job ID\)\n {2}--job ID +the job ID \(instead of JOB\)$/m] as const),
    ] as const) {
      const r = await mam([...command, '--help'], { cwd: ws });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stdout, line, `mam ${command.join(' ')} --help`);
    }
  });

  it('job status, logs, cancel and verify take --job ID with the same outcome as the argument', async () => {
    const ws = tempWorkspace();
    const job = jobRecord({ id: newJobId(), state: 'completed', detail: 'all green' });
    await controlPlane(ws).jobs.create(job);
    for (const [sub, ...extra] of [['status', '--json'], ['logs', '--json'], ['cancel'], ['verify', '--validate', 'true']]) {
      const positional = await mam(['job', sub!, job.id, ...extra], { cwd: ws });
      const flag = await mam(['job', sub!, '--job', job.id, ...extra], { cwd: ws });
      assert.equal(positional.exitCode, 0, positional.stderr);
      assert.deepEqual([flag.exitCode, flag.stdout, flag.stderr], [positional.exitCode, positional.stdout, positional.stderr], `job ${sub}`);
    }
  });

  describe('a flag under two of its names, or the wrong agent: one line, exit 64, nothing changed', () => {
    const id = newJobId();
    const cases: Array<[string, string[], RegExp]> = [
      ['--session and --agent-session', ['job', 'submit', '--session', 'w1', '--agent-session', 'w1', '--prompt', 'x'], /^mam: mam job submit: --session and --agent-session are the same option; give it once$/],
      ['--agent-session twice', ['job', 'submit', '--agent-session', 'w1', '--agent-session', 'w2', '--prompt', 'x'], /^mam: mam job submit: --agent-session is given twice; give it once$/],
      ['--reviewer-session twice', ['job', 'submit', '--session', 'w1', '--type', 'loop', '--reviewer-session', 'r1', '--reviewer-session', 'r2', '--prompt', 'x'], /--reviewer-session is given twice/],
      ['--reviewer-session without --type loop', ['job', 'submit', '--session', 'w1', '--reviewer-session', 'r1', '--prompt', 'x'], /^mam: --reviewer-session goes with --type loop$/],
      ['--agent that is not the session\'s', ['job', 'submit', '--agent', 'codex', '--agent-session', 'herdr:w1', '--prompt', 'x'], /^mam: --agent codex: session w1 runs claude, not codex; name the session that runs it, or leave --agent out$/],
      ['--reviewer AGENT that is not the reviewer session\'s', ['job', 'submit', '--agent-session', 'w1', '--type', 'loop', '--reviewer', 'claude', '--reviewer-session', 'r1', '--prompt', 'x'], /^mam: --reviewer claude: session r1 runs codex, not claude/],
      ['--name and --session', ['session', 'create', '--agent', 'shell', '--name', 'a', '--session', 'a'], /^mam: mam session create: --name and --session are the same option; give it once$/],
      ['--server and --herdr-session', ['session', 'create', '--agent', 'shell', '--session', 'a', '--server', 's', '--herdr-session', 's'], /--server and --herdr-session are the same option/],
      ['--herdr-session with --mux tmux', ['session', 'create', '--agent', 'shell', '--session', 'a', '--herdr-session', 'h', '--mux', 'tmux'], /^mam: --herdr-session names a herdr server; it does not go with --mux tmux$/],
      ['--planner and --plan', ['loop', '--task', 't', '--creator', 'w1', '--planner', 'p', '--plan', 'p'], /^mam: mam loop: --planner and --plan are the same option; give it once$/],
      ...['status', 'logs', 'cancel'].map((sub): [string, string[], RegExp] => [`job ${sub} JOB --job JOB`, ['job', sub, id, '--job', id], new RegExp(`^mam: mam job ${sub}: give the job ID once: either as an argument or with --job$`)]),
      ['job verify JOB --job JOB', ['job', 'verify', id, '--job', id, '--validate', 'true'], /^mam: mam job verify: give the job ID once/],
      ['job verify with no job', ['job', 'verify', '--validate', 'true'], /^mam: mam job verify: missing JOB \(or --job ID\)/],
      ['event EVENT --event EVENT', ['event', 'started', '--event', 'started', '--job', id], /^mam: mam event: give the event once: either as an argument or with --event$/],
      ['event --event of no such event', ['event', '--event', 'finished\x1b[2J', '--job', id], /^mam: mam event: unknown event 'finished\\x1b\[2J'; one of /],
      ['--agent human with a remote runner', ['job', 'submit', '--agent', 'human', '--agent-session', 'remote:gpu', '--prompt', 'x'], /^mam: --agent human names a person: give --agent-session NAME \(or human:NAME\), not remote:gpu$/],
    ];
    for (const [name, args, message] of cases) {
      it(name, async () => {
        const ws = tempWorkspace();
        const cp = controlPlane(ws);
        await cp.jobs.create(jobRecord({ id, state: 'started' }));
        await cp.sessions.mutate((tx) => [sessionRow('w1', { agent: 'claude' }), sessionRow('r1', { agent: 'codex', role: 'reviewer' })].forEach((r) => tx.insert(r)));
        const before = snapshotTree(ws);
        const r = await mam(args, { cwd: ws });
        assert.equal(r.exitCode, 64, `exit ${r.exitCode}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `one line: ${r.stderr}`);
        assert.match(r.stderr.trim(), message);
        const after = snapshotTree(ws);
        delete after['.mam/locks/'];
        delete before['.mam/locks/'];
        assert.deepEqual(after, before);
      });
    }
  });

  describe("the seeds' command lines, unchanged (fake herdr, scripted agents, the embedded broker)", () => {
    let f: JobFixture;
    let server: string;
    const bin = path.join(REPO_ROOT, 'test/fixtures/bin');
    beforeEach(() => {
      server = `my-project-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
      f = jobFixture({ PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` });
    });
    afterEach(async () => {
      await f.service.muxOf({ mux: 'herdr', server }).killServer();
      await f.dispose();
    });
    /** The reviewer's agent: the fake codex, reviewing with PASS. */
    const reviewing = () => ({ MAM_AGENT_COMMAND_CODEX: [process.execPath, FAKE_AGENT, '--as', 'codex', '--log', f.log, '--mode', 'reviewer', '--verdicts', 'PASS'].map((w) => JSON.stringify(w)).join(' ') });

    it('session create --session NAME --herdr-session S is --name NAME --server S --mux herdr', async () => {
      const seed = await f.run(['session', 'create', '--workspace', f.workspace, '--agent', 'claude', '--role', 'developer', '--session', 'creator-claude-01', '--herdr-session', server, '--json']);
      assert.equal(seed.exitCode, 0, seed.stderr);
      const ours = await f.run(['session', 'create', '--workspace', f.workspace, '--agent', 'claude', '--role', 'developer', '--name', 'creator-claude-02', '--server', server, '--mux', 'herdr', '--json']);
      assert.equal(ours.exitCode, 0, ours.stderr);
      const look = (r: { stdout: string }) => {
        const row = JSON.parse(r.stdout) as { agent: string; role: string; mux: string; server: string; status: string };
        return [row.agent, row.role, row.mux, row.server, row.status];
      };
      assert.deepEqual(look(seed), ['claude', 'developer', 'herdr', server, 'running']);
      assert.deepEqual(look(seed), look(ours));
      assert.equal((await f.controlPlane.sessions.get('creator-claude-01'))!.mux, 'herdr');
    });

    it('the delegate-job lines: submit with --agent/--agent-session, a loop with --reviewer-session, status and verify with --job', async () => {
      for (const [agent, role, name, env] of [['claude', 'developer', 'creator-claude-01', {}], ['codex', 'reviewer', 'reviewer-codex-01', reviewing()]] as const) {
        const r = await f.run(['session', 'create', '--workspace', f.workspace, '--agent', agent, '--role', role, '--session', name, '--herdr-session', server, '--onboard'], env);
        assert.equal(r.exitCode, 0, r.stderr);
      }
      const task = ['--prompt', 'Task description or instructions here', '--timeout', '3600', '--idle-timeout', '120', '--json'];
      const outcome = (r: { stdout: string }) => {
        const job = JSON.parse(r.stdout) as { state: string; session: string; role: string; detail: string; timers: object };
        return [job.state, job.session, job.role, job.detail, job.timers];
      };

      const seed = await f.run(['job', 'submit', '--agent', 'claude-code', '--agent-session', 'herdr:creator-claude-01', '--role', 'Worker', ...task]);
      assert.equal(seed.exitCode, 0, seed.stderr);
      const ours = await f.run(['job', 'submit', '--session', 'herdr:creator-claude-01', '--role', 'worker', ...task]);
      assert.equal(ours.exitCode, 0, ours.stderr);
      assert.deepEqual(outcome(seed), outcome(ours));
      assert.deepEqual(outcome(seed).slice(0, 3), ['completed', 'herdr:creator-claude-01', 'worker']);

      const loops = [
        ['--agent', 'claude', '--agent-session', 'herdr:creator-claude-01', '--type', 'loop', '--reviewer', 'codex', '--reviewer-session', 'herdr:reviewer-codex-01'],
        ['--agent-session', 'herdr:creator-claude-01', '--type', 'loop', '--reviewer-session', 'herdr:reviewer-codex-01'],
        ['--session', 'herdr:creator-claude-01', '--type', 'loop', '--reviewer', 'herdr:reviewer-codex-01'],
      ];
      const looked = [];
      for (const args of loops) {
        const r = await f.run(['job', 'submit', ...args, '--prompt', 'Task description', '--json']);
        assert.equal(r.exitCode, 0, `${args.join(' ')}: ${r.stderr}`);
        const parent = JSON.parse(r.stdout) as { id: string; state: string; detail: string };
        const children = f.controlPlane.jobs.list().jobs.filter((j) => j.parent_job === parent.id).reverse();
        looked.push([parent.state, parent.detail, children.map((c) => `${c.session}:${c.role}`)]);
      }
      assert.deepEqual(looked[0], ['completed', 'PASS after 1 iteration(s)', ['herdr:creator-claude-01:worker', 'herdr:reviewer-codex-01:reviewer']]);
      assert.deepEqual(looked, [looked[0], looked[0], looked[0]], 'the seeds\' form, the aliases alone and our own flags: the same loop');

      const id = JSON.parse(seed.stdout).id as string;
      const status = await f.run(['job', 'status', '--job', id, '--json']);
      assert.equal(status.exitCode, 0, status.stderr);
      assert.equal(JSON.parse(status.stdout).job.state, 'completed');
      const validate = path.join(f.workspace, 'validate.sh');
      fs.writeFileSync(validate, '#!/bin/sh\ntest "$MAM_JOB_ID" = "$1"\n', { mode: 0o755 });
      const verified = await f.run(['job', 'verify', '--job', id, '--validate', `./validate.sh ${id}`]);
      assert.equal(verified.exitCode, 0, verified.stdout + verified.stderr);
      assert.match(verified.stdout, /^passed: \.\/validate\.sh j-\S+ exited 0$/m);

      const ghost = await f.run(['job', 'submit', '--agent', 'codex', '--agent-session', 'herdr:nobody', '--prompt', 'x', '--json']);
      assert.equal(ghost.exitCode, 5, 'an unknown session: --agent has nothing to be checked against, and the target is not found');
    });
  });

  describe("the seeds' settings: TMUX_SERVER_NAME, HERDR_SESSION_NAME, and the user's own server", () => {
    let f: JobFixture;
    const idle = JSON.stringify([process.execPath, '-e', 'setInterval(() => {}, 1000)']);
    const create = (name: string, env: Record<string, string | undefined>) => mam(['session', 'create', '--agent', 'shell', '--name', name, '--command', idleLine(), '--json'], { cwd: f.workspace, env: { ...f.env, MAM_TMUX_SERVER: undefined, ...env } });
    const idleLine = () => (JSON.parse(idle) as string[]).map((w) => JSON.stringify(w)).join(' ');
    const servers: string[] = [];
    beforeEach(() => {
      f = jobFixture();
    });
    afterEach(async () => {
      for (const server of servers.splice(0)) spawnSync('tmux', ['-L', server, 'kill-server'], { env: f.env, stdio: 'ignore' });
      await f.dispose();
    });

    it("TMUX_SERVER_NAME names the server where MAM_TMUX_SERVER is unset, in the environment or .mam.env; MAM's own name wins", async () => {
      const seedName = `seed-${process.pid}-a`;
      const ours = `ours-${process.pid}-a`;
      const fromFile = `seed-${process.pid}-file`;
      servers.push(seedName, ours, fromFile);
      const server = (r: { exitCode: number; stdout: string; stderr: string }) => {
        assert.equal(r.exitCode, 0, r.stderr);
        return (JSON.parse(r.stdout) as { server: string }).server;
      };
      assert.equal(server(await create('s1', { TMUX_SERVER_NAME: seedName })), seedName);
      assert.equal(server(await create('s2', { TMUX_SERVER_NAME: seedName, MAM_TMUX_SERVER: ours })), ours);
      fs.writeFileSync(path.join(f.workspace, '.mam.env'), `TMUX_SERVER_NAME=${fromFile}\n`);
      assert.equal(server(await create('s3', {})), fromFile);
    });

    it("'default' is the user's own server: used only when named, with a warning; the user's panes there are neither drift nor adopted", async () => {
      servers.push('default');
      // The user's own tmux server (in the run's private TMUX_TMPDIR), with a pane of their own.
      spawnSync('tmux', ['-L', 'default', 'new-session', '-d', '-s', 'mine', ...(JSON.parse(idle) as string[])], { env: f.env });
      const r = await create('shared', { TMUX_SERVER_NAME: 'default' });
      assert.equal(r.exitCode, 0, r.stderr);
      assert.match(r.stderr, /^mam: warning: session 'shared' goes on your own tmux server \('default'\), as you asked: MAM shares it with you/m);
      assert.equal((JSON.parse(r.stdout) as { server: string }).server, 'default');
      const panes = spawnSync('tmux', ['-L', 'default', 'list-panes', '-a', '-F', '#{session_name}'], { env: f.env, encoding: 'utf8' }).stdout.trim().split('\n');
      assert.deepEqual(panes.sort(), ['mine', 'shared'], "MAM's session beside the user's own");
      const status = JSON.parse((await mam(['session', 'status', '--json'], { cwd: f.workspace, env: { ...f.env, TMUX_SERVER_NAME: 'default', MAM_TMUX_SERVER: undefined } })).stdout) as Array<{ session: { name: string } | null; drift: string[] }>;
      assert.deepEqual(status.map((s) => [s.session?.name ?? null, s.drift]), [['shared', []]], "the user's pane is not drift");
      const monitor = await mam(['session', 'monitor', '--once'], { cwd: f.workspace, env: { ...f.env, TMUX_SERVER_NAME: 'default', MAM_TMUX_SERVER: undefined } });
      assert.equal(monitor.exitCode, 0, monitor.stderr);
      assert.deepEqual((await f.controlPlane.sessions.list()).map((row) => row.name), ['shared'], 'nothing of the user\'s is adopted');
      const stop = await mam(['session', 'stop', 'shared'], { cwd: f.workspace, env: { ...f.env, MAM_TMUX_SERVER: undefined } });
      assert.equal(stop.exitCode, 0, stop.stderr);
      assert.equal(spawnSync('tmux', ['-L', 'default', 'has-session', '-t', 'mine'], { env: f.env }).status, 0, "stopping MAM's session leaves the user's server and pane");
    });
  });
});
