/**
 * A plan run to landed code by real agent CLIs against the project's model server: two tasks, the
 * second needing the first; for each, the plan creates a real claude creator and a real codex
 * reviewer in the task's worktree. The scripted model has the creator write a file named after its
 * folder and commit it, and the reviewer check that file and pass. Every commit, event and report
 * came from the real CLIs running commands through their own shell tools.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { LoopStore } from '../../src/core/loop/loopState';
import { ControlPlanePaths } from '../../src/core/store/paths';
import type { PlanState } from '../../src/core/plan/planState';
import { CLI, tempDir } from '../support/helpers';
import { itNeeds } from '../support/needs';
import { agentsMissing, startModelServer, type ModelServer } from '../support/realAgents';
import { realTeam, type Team } from '../support/realTeam';

const missing = agentsMissing('claude', 'codex');

/** The creator writes `<its folder>.txt` and commits it; the reviewer passes when that file is there and committed. */
const PLAN_SCRIPT = {
  steps: {
    implement: { run: ['f="$(basename "$PWD").txt" && printf "%s\\n" "written for {job}" > "$f" && git add "$f" && git commit -qm "Add $f"'], detail: 'wrote the task file and committed it' },
    review: { run: ['f="$(basename "$PWD").txt" && test -s "$f" && git log -1 --format=%s -- "$f" | grep -q . && echo CHECK-OK || echo CHECK-FAILED'], passWhen: 'CHECK-OK' },
  },
};

describe('real agents: a plan of two tasks run by real claude creators and codex reviewers', function () {
  this.timeout(420_000);
  let server: ModelServer;
  let t: Team | undefined;

  before(async function () {
    if (missing) return;
    server = await startModelServer(PLAN_SCRIPT);
  });
  after(async () => {
    await t?.dispose();
    await server?.stop();
  });

  itNeeds(missing, 'both tasks land on the target in order, each reviewed by codex after claude committed it; the sessions the plan created are stopped', async () => {
    t = realTeam(server);
    const team = t;
    const git = (...args: string[]) => execFileSync('git', args, { cwd: team.workspace, encoding: 'utf8' }).trim();
    const target = git('rev-parse', '--abbrev-ref', 'HEAD');
    const before = git('rev-parse', 'HEAD');
    // The plan file lives outside the checkout: the target's checkout stays as the user left it.
    const file = path.join(tempDir('plan'), 'plan.yaml');
    fs.writeFileSync(file, `title: Two files, the second after the first
defaults: { creator: claude, reviewers: [codex], max_loop: 1 }
tasks:
  - id: one
    task: Write a file named after the folder you work in, and commit it.
  - id: two
    task: Write a file named after the folder you work in, on top of the first task's, and commit it.
    needs: [one]
`);
    const r = await execa(process.execPath, [CLI, 'plan', 'run', file, '--json'], { cwd: team.workspace, env: team.env, reject: false, timeout: 360_000 });
    assert.equal(r.exitCode, 0, `${r.stdout}\n${r.stderr}`);
    const plan = JSON.parse(r.stdout) as PlanState;
    assert.deepEqual([plan.status, plan.tasks.map((x) => [x.id, x.state])], ['landed', [['one', 'landed'], ['two', 'landed']]]);

    // Two commits on the target, one's before two's, each the creator's commit of its own file.
    const short = plan.id.slice(-6);
    const landed = plan.tasks.map((x) => x.landed_commit!);
    assert.deepEqual(git('rev-list', '--reverse', `${before}..${target}`).split('\n'), landed);
    assert.deepEqual(landed.map((c) => git('log', '-1', '--format=%s', c)), [`Add ${short}-one.txt`, `Add ${short}-two.txt`]);
    assert.deepEqual(git('ls-tree', '--name-only', target).split('\n').filter((n) => n.startsWith(short)), [`${short}-one.txt`, `${short}-two.txt`]);
    // The second task's worktree started from a tip holding the first's landing.
    const state = JSON.parse(fs.readFileSync(path.join(team.workspace, '.mam', 'plans', plan.id, 'state.json'), 'utf8')) as PlanState;
    assert.doesNotThrow(() => git('merge-base', '--is-ancestor', landed[0]!, state.tasks[1]!.base!), 'two started on top of one');

    // Each loop's implement went to the real claude, its review to the real codex: the model server served those jobs to them.
    const loops = new LoopStore(new ControlPlanePaths(team.workspace));
    const served = server.entries();
    for (const task of state.tasks) {
      const loop = loops.get(task.loop_id!)!;
      assert.deepEqual(loop.rounds.map((x) => [x.n, x.status]), [[1, 'passed']]);
      for (const step of loop.steps) {
        const agent = step.kind === 'implement' ? 'claude' : 'codex';
        assert.ok(served.some((e) => e.job === step.job_id && e.agent === agent && typeof e.cmd === 'string'), `${task.id} ${step.key}: ${agent} ran its job's commands`);
      }
    }

    // The sessions the plan created (a claude and a codex per task, in the task's worktree) are stopped, resumable; the worktrees are gone.
    const rows = team.sessions();
    assert.deepEqual(state.tasks.map((x) => x.created_sessions), [[`${short}-one-c`, `${short}-one-r1`], [`${short}-two-c`, `${short}-two-r1`]]);
    for (const task of state.tasks) {
      for (const name of task.created_sessions) {
        const row = rows.find((s) => s.name === name)!;
        assert.deepEqual([row.agent, row.status, row.cwd], [name.endsWith('-c') ? 'claude' : 'codex', 'stopped', task.worktree], name);
        assert.ok(row.conversation_id, `${name}'s conversation is kept`);
      }
    }
    assert.ok(!git('worktree', 'list', '--porcelain').includes(path.join('.mam', 'worktrees')), 'no task worktree is left');
  });
});
