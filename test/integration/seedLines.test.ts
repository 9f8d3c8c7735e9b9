/**
 * The seeds' own example lines, run unchanged (placeholders filled) to the exit codes the seeds
 * state. Where a line runs is docs/cli.md's table: a row marked *run* quotes the seed's line, and
 * what runs here is either the same line (`multi-agent-mux-delegate-job …`, installed beside
 * `mam`) or `mam …` with exactly the seed's flags. Every *run* row is run here, and every line
 * below (copied verbatim from the seeds) must be one of the table's rows. The agents are the
 * scripted fake (impersonating claude and codex), the multiplexer the fake herdr server, as the
 * seeds' lines name herdr.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { splitWords } from '../../src/core/base/shellWords';
import { HerdrBackend } from '../../src/core/mux/herdr';
import { CLI, FAKE_AGENT, REPO_ROOT, tempDir, until } from '../support/helpers';
import { GIT_ENV, jobFixture, JOB_ID, type JobFixture } from '../support/jobs';

const DELEGATE = path.join(REPO_ROOT, 'dist/delegate-job.js');

/** Verbatim from the seeds (seed file: line). */
const SEED_LINES = {
  submit: 'multi-agent-mux-delegate-job submit --agent <claude-code|hermes-agent|agy-agent|grok-build|human> --agent-session herdr:<session_name> --prompt "Task description or instructions here" --role <Worker|Planner|Reviewer> --timeout 3600 --idle-timeout 120', // 004
  submitLoop: 'multi-agent-mux-delegate-job submit --agent <worker_agent> --agent-session herdr:<worker_session> --type loop --reviewer <reviewer_agent> --reviewer-session herdr:<reviewer_session> --prompt "Task description"', // 004
  status: 'multi-agent-mux-delegate-job status --job <JOB_ID>', // 004
  logs: 'multi-agent-mux-delegate-job logs <JOB_ID>', // 004
  list: 'multi-agent-mux-delegate-job list', // 004
  verify: 'multi-agent-mux-delegate-job verify --job <JOB_ID> --validate ./validate.sh', // 004
  started: 'python3 .agents/skills/multi-agent-mux-delegate-job/scripts/publish_event.py --job "$JOB_ID" --event started', // 004
  permission: 'python3 ... --job "$JOB_ID" --event permission_required --detail "<tool>:<reason>"', // 004
  progress: 'python3 ... --job "$JOB_ID" --event progress --detail "<status_update>"', // 004
  completed: 'python3 ... --job "$JOB_ID" --event completed --detail "<summary>"', // 004
  error: 'python3 ... --job "$JOB_ID" --event error --detail "<reason_or_feedback>"', // 004
  createCreator: 'bash .agents/skills/multi-agent-mux-create/scripts/create_session.sh --workspace "$PWD" --agent claude --role developer --session creator-claude-01 --herdr-session my-project --onboard', // 000
  createReviewer: 'bash .agents/skills/multi-agent-mux-create/scripts/create_session.sh --workspace "$PWD" --agent codex --role reviewer --session reviewer-codex-01 --herdr-session my-project --onboard', // 000
  status2: 'bash .agents/skills/multi-agent-mux-status/scripts/status.sh', // 000
  loop: 'bash .agents/skills/multi-agent-mux-loop/scripts/run_loop.sh --creator creator-claude-01 --all-reviewer --task "Fix the typo in docs/guide.md"', // 000
} as const;
type SeedLine = keyof typeof SEED_LINES;

interface Row {
  seed: string;
  runs: string;
}

/** docs/cli.md's table, the rows marked *run*: the seed's line and what runs here. */
function runRows(): Row[] {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/cli.md'), 'utf8');
  const rows: Row[] = [];
  for (const line of doc.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    if (!cells[2]?.startsWith('*run*')) continue;
    const code = (cell: string) => /^`([^`]*)`/.exec(cell)![1]!.replace(/\\\|/g, '|');
    rows.push({ seed: code(cells[0]!), runs: code(cells[1]!) });
  }
  return rows;
}

/** The argv that runs a row's line here: its program (`mam` or the seeds' job command) and the seed's own words after it. */
function argvOf(row: Row, fill: Record<string, string>): string[] {
  const filled = (line: string) => Object.entries(fill).reduce((l, [k, v]) => l.split(k).join(v), line);
  const seed = splitWords(filled(row.seed));
  let head: string[];
  let tail: string[];
  if (row.runs.endsWith(' …')) {
    // `multi-agent-mux-delegate-job submit …`: the seed's own line, program and all.
    head = splitWords(row.runs.slice(0, -2));
    tail = seed.slice(head.length);
  } else if (row.runs === row.seed) {
    [head, tail] = [seed.slice(0, 1), seed.slice(1)];
  } else {
    // `mam …` with the seed's flags, unchanged: the same words from the first flag on.
    const runs = splitWords(filled(row.runs));
    const flags = (words: string[]) => (words.some((w) => w.startsWith('--')) ? words.slice(words.findIndex((w) => w.startsWith('--'))) : []);
    assert.deepEqual(flags(runs), flags(seed), `${row.runs} takes the seed's flags unchanged`);
    head = runs.slice(0, runs.length - flags(runs).length);
    tail = flags(runs);
  }
  const [program, ...sub] = head;
  const script = program === 'mam' ? CLI : program === 'multi-agent-mux-delegate-job' ? DELEGATE : assert.fail(`unknown program ${program}`);
  return [script, ...sub, ...tail];
}

describe("the seeds' own lines, run unchanged (docs/cli.md's table)", function () {
  this.timeout(180_000);
  let f: JobFixture | undefined;
  let herdrEnv: Record<string, string>;
  const rows = runRows();
  const row = (name: SeedLine): Row => rows.find((r) => r.seed === SEED_LINES[name]) ?? assert.fail(`docs/cli.md has no *run* row for: ${SEED_LINES[name]}`);
  const run = (name: SeedLine, fill: Record<string, string> = {}, env: Record<string, string> = {}) =>
    execa(process.execPath, argvOf(row(name), { '"$PWD"': JSON.stringify(f!.workspace), ...fill }), { cwd: f!.workspace, env: { ...herdrEnv, ...env }, reject: false, timeout: 120_000 });

  /** A checkout with the seeds' docs/guide.md, the fake herdr on PATH, and claude and codex played by the fake agent. */
  function workspace(claudeModes: string, codexModes = 'work'): void {
    const log = path.join(tempDir('agentlog'), 'agent.log');
    const fake = (as: string, modes: string) => [process.execPath, FAKE_AGENT, '--as', as, '--log', log, '--mode', modes].map((w) => JSON.stringify(w)).join(' ');
    const fixture = jobFixture({ ...GIT_ENV, MAM_AGENT_COMMAND_CLAUDE: fake('claude', claudeModes), MAM_AGENT_COMMAND_CODEX: fake('codex', codexModes) });
    f = fixture;
    herdrEnv = { ...(fixture.env as Record<string, string>), PATH: `${path.join(REPO_ROOT, 'test/fixtures/bin')}${path.delimiter}${process.env.PATH ?? ''}`, XDG_CONFIG_HOME: tempDir('xdg') };
    const ws = fixture.workspace;
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, env: { ...process.env, ...GIT_ENV } });
    fs.rmSync(path.join(ws, '.git'), { recursive: true, force: true });
    git('init', '-q');
    fs.mkdirSync(path.join(ws, 'docs'));
    fs.writeFileSync(path.join(ws, 'docs/guide.md'), '# Guide\n\nTeh guide.\n');
    fs.writeFileSync(path.join(ws, 'feature.txt'), 'the start\n');
    git('add', '-A');
    git('commit', '-qm', 'initial');
  }
  const after: Array<() => void> = [];
  afterEach(async () => {
    for (const undo of after.splice(0)) undo();
    if (!f) return;
    await new HerdrBackend({ session: 'my-project', env: herdrEnv }).killServer();
    await f.dispose();
    f = undefined;
  });

  it('every line quoted from the seeds has its row in the table', () => {
    for (const name of Object.keys(SEED_LINES) as SeedLine[]) row(name);
    assert.equal(rows.length, Object.keys(SEED_LINES).length, 'and every *run* row is run here');
  });

  it('a team as seed 000 starts one, seed 004 delegating to it: every line exits as the seeds say', async () => {
    // claude: onboarding, a direct job, the --type loop job's work, then the loop's; codex reviews.
    workspace('work,work,creator', 'work,reviewer');
    const ok = (r: { exitCode?: number; stdout: string; stderr: string }, what: string) => assert.equal(r.exitCode, 0, `${what}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
    ok(await run('createCreator'), 'create_session.sh (creator)');
    ok(await run('createReviewer'), 'create_session.sh (reviewer)');
    const status = await run('status2');
    ok(status, 'status.sh');
    assert.match(status.stdout, /^creator-claude-01\s+claude\s+running/m);

    const submitted = await run('submit', { '<claude-code|hermes-agent|agy-agent|grok-build|human>': 'claude-code', '<session_name>': 'creator-claude-01', '<Worker|Planner|Reviewer>': 'Worker' });
    ok(submitted, 'delegate-job submit');
    const id = JOB_ID.exec(submitted.stdout)![0];
    assert.match(submitted.stdout, new RegExp(`^${id} completed`));
    for (const name of ['status', 'logs', 'list'] as const) ok(await run(name, { '<JOB_ID>': id }), `delegate-job ${name}`);
    fs.writeFileSync(path.join(f!.workspace, 'validate.sh'), '#!/bin/sh\ntest -f docs/guide.md\n', { mode: 0o755 });
    ok(await run('verify', { '<JOB_ID>': id }), 'delegate-job verify');
    fs.writeFileSync(path.join(f!.workspace, 'validate.sh'), '#!/bin/sh\nexit 3\n', { mode: 0o755 });
    assert.equal((await run('verify', { '<JOB_ID>': id })).exitCode, 1, 'a failing validation: 1');

    ok(await run('submitLoop', { '<worker_agent>': 'claude-code', '<worker_session>': 'creator-claude-01', '<reviewer_agent>': 'codex', '<reviewer_session>': 'reviewer-codex-01' }), 'delegate-job submit --type loop');
    ok(await run('loop'), 'run_loop.sh');

    const missing = await run('submit', { '<claude-code|hermes-agent|agy-agent|grok-build|human>': 'claude-code', '<session_name>': 'nobody', '<Worker|Planner|Reviewer>': 'Worker' });
    assert.equal(missing.exitCode, 5, `no such session: 5\n${missing.stderr}`);
  });

  it('a person as the assignee, reporting with publish_event.py\'s lines: completed → 0, error → 1', async () => {
    workspace('work');
    const person = (name: string) => run('submit', { '<claude-code|hermes-agent|agy-agent|grok-build|human>': 'human', '<session_name>': name, '<Worker|Planner|Reviewer>': 'Reviewer' });
    const alice = person('alice');
    const bob = person('bob');
    after.push(() => void alice.kill(), () => void bob.kill());
    let ids: Record<string, string> = {};
    const jobs = path.join(f!.workspace, '.mam/jobs');
    await until(() => {
      const records = (fs.existsSync(jobs) ? fs.readdirSync(jobs) : []).filter((n) => n.endsWith('.json')).map((n) => JSON.parse(fs.readFileSync(path.join(jobs, n), 'utf8')) as { id: string; session: string; delivery?: string });
      ids = Object.fromEntries(records.filter((r) => r.delivery === 'assigned').map((r) => [r.session, r.id]));
      return ids['human:alice'] !== undefined && ids['human:bob'] !== undefined;
    }, 30_000, 'both jobs assigned to their person');
    for (const name of ['started', 'permission', 'progress', 'completed'] as const) {
      const r = await run(name, { '"$JOB_ID"': ids['human:alice']!, '<tool>:<reason>': 'Bash:rm -rf build', '<status_update>': 'half way', '<summary>': 'looks right' });
      assert.equal(r.exitCode, 0, `${name}: ${r.stderr}`);
    }
    for (const name of ['started', 'error'] as const) assert.equal((await run(name, { '"$JOB_ID"': ids['human:bob']!, '<reason_or_feedback>': 'cannot reproduce' })).exitCode, 0);
    const [a, b] = await Promise.all([alice, bob]);
    assert.equal(a.exitCode, 0, a.stderr);
    assert.match(a.stdout, /completed: looks right/);
    assert.equal(b.exitCode, 1, b.stderr);
    assert.match(b.stdout, /failed \(agent_error\): cannot reproduce/);
  });

  for (const [exit, modes, env, what] of [
    [44, 'error', {}, 'onboarding failed'],
    [45, 'heartbeats', { MAM_JOB_TIMEOUT_S: '2' }, 'onboarding did not finish in time'],
  ] as const) {
    it(`create_session.sh --onboard: ${exit} when ${what}, and the session is kept`, async () => {
      workspace(modes);
      const r = await run('createCreator', {}, env);
      assert.equal(r.exitCode, exit, r.stderr);
      const sessions = JSON.parse((await execa(process.execPath, [CLI, 'session', 'list', '--json'], { cwd: f!.workspace, env: herdrEnv })).stdout) as Array<{ name: string; mux: string; server: string }>;
      assert.deepEqual(sessions.map((s) => [s.name, s.mux, s.server]), [['creator-claude-01', 'herdr', 'my-project']]);
    });
  }
});
