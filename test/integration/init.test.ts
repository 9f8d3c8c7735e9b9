import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseEnvFile } from '../../src/core/config/envFile';
import { appendSection } from '../../src/core/init/agentRules';
import { initWorkspace, type InitResult } from '../../src/core/init/initWorkspace';
import { sha256, writeManifest, type ManifestEntry } from '../../src/core/init/manifest';
import { mamSkills, skillFiles } from '../../src/core/init/skills';
import { ControlPlanePaths } from '../../src/core/store/paths';
import { CLI, mam, REPO_ROOT, snapshotTree, tempDir } from '../support/helpers';

const SKILLS = ['mam-jobs', 'mam-loop', 'mam-monitor', 'mam-orchestrator', 'mam-plans', 'mam-remote', 'mam-sessions', 'mam-worktrees'];

/** Everything `mam init` means to put into a checkout, as `git status --porcelain --untracked-files=all` lists it. */
const INSTALLED = [
  ...['.agents', '.claude'].flatMap((root) => [...SKILLS.map((s) => `${root}/skills/${s}/SKILL.md`), `${root}/skills/mam-jobs/references/job-types.md`]),
  '.claude/rules/mam.md',
  'AGENTS.md',
  // MAM's MCP server for each agent CLI that reads a project file (initMcp.test.ts)
  '.mcp.json',
  '.codex/config.toml',
  '.gemini/settings.json',
  'opencode.json',
].sort();

const git = (repo: string, ...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
const status = (repo: string) => git(repo, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean);
const untracked = (repo: string) => status(repo).filter((l) => l.startsWith('?? ')).map((l) => l.slice(3)).sort();
const read = (repo: string, rel: string) => fs.readFileSync(path.join(repo, rel), 'utf8');
/** The workspace's files as they are, minus git's own and the lock folder's comings and goings. */
const tree = (repo: string) => Object.fromEntries(Object.entries(snapshotTree(repo)).filter(([p]) => !p.startsWith('.git/') && !p.startsWith('.mam/locks')));
const byPath = (r: InitResult) => Object.fromEntries(r.items.map((i) => [i.path, i.action]));

/** A clone of a repository with one commit (and whatever `files` it holds). */
function freshClone(files: Record<string, string> = { 'README.md': '# A project\n' }): string {
  const origin = tempDir('origin');
  git(origin, 'init', '-q');
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(origin, rel)), { recursive: true });
    fs.writeFileSync(path.join(origin, rel), text);
  }
  git(origin, 'add', '-A');
  git(origin, 'commit', '-qm', 'initial');
  const clone = path.join(tempDir('clone'), 'repo');
  git(path.dirname(clone), 'clone', '-q', origin, clone);
  return fs.realpathSync(clone);
}

/**
 * A workspace as `mam init` left it before issue 22 (five skills, thinner): the files it wrote
 * (test/fixtures/init-before-issue-22.json), its AGENTS.md section, and its manifest, each with
 * the SHA-256 of what it wrote. `extra`: more files it is taken to have written.
 */
function initializedBefore(repo: string, extra: Record<string, string> = {}): void {
  const fixture = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/init-before-issue-22.json'), 'utf8')) as { cli: string; files: Record<string, string>; sections: Record<string, string> };
  const render = (text: string) => text.split('@WORKSPACE@').join(repo);
  new ControlPlanePaths(repo).ensureDir();
  const entries: ManifestEntry[] = [];
  for (const [rel, text] of Object.entries({ ...fixture.files, ...extra })) {
    const made: string[] = [];
    for (let d = path.posix.dirname(rel); d !== '.' && !fs.existsSync(path.join(repo, d)); d = path.posix.dirname(d)) made.unshift(d);
    entries.push(...made.map((d): ManifestEntry => ({ kind: 'dir', path: d })));
    fs.mkdirSync(path.join(repo, path.posix.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(repo, rel), render(text), { mode: rel === '.mam.env' ? 0o600 : 0o644 });
    entries.push({ kind: 'file', path: rel, sha256: sha256(render(text)) });
  }
  for (const [rel, section] of Object.entries(fixture.sections)) {
    const { text, separator } = appendSection(read(repo, rel), render(section));
    fs.writeFileSync(path.join(repo, rel), text);
    entries.push({ kind: 'section', path: rel, sha256: sha256(render(section)), separator, created_file: false });
  }
  writeManifest(repo, fixture.cli, entries);
}

describe('mam init: setting a workspace up, again, --update and --remove (real git)', () => {
  it('in a fresh clone: git sees only the skills, the rules, AGENTS.md and the MCP configs; .mam.env is 0600 and ignored by a per-clone exclude; a second run changes nothing and says so', async () => {
    const repo = freshClone({ 'README.md': '# A project\n', '.gitignore': 'node_modules/\n' });
    const excludeBefore = read(repo, '.git/info/exclude');
    const first = await mam(['init'], { cwd: path.join(repo) });
    assert.equal(first.exitCode, 0, first.stderr);
    assert.match(first.stdout, /^  created +\.mam\/: ignores itself/m);
    assert.match(first.stdout, /^  appended +\.git\/info\/exclude: lists \.mam\.env/m);
    assert.deepEqual(status(repo).filter((l) => !l.startsWith('?? ')), [], 'nothing tracked changed');
    assert.deepEqual(untracked(repo), INSTALLED);
    assert.equal(read(repo, '.gitignore'), 'node_modules/\n', "the user's .gitignore is untouched");
    assert.equal(fs.statSync(path.join(repo, '.mam.env')).mode & 0o777, 0o600);
    assert.equal(git(repo, 'check-ignore', '-v', '.mam.env').split(':')[0], '.git/info/exclude');
    assert.equal(read(repo, '.git/info/exclude'), `${excludeBefore}# Multi-Agent Mux (mam init): broker credentials stay out of git\n.mam.env\n`);
    assert.match(read(repo, '.claude/skills/mam-jobs/SKILL.md'), /^---\nname: mam-jobs\ndescription: ".+"\nversion: [\s\S]*?\n---\n/);

    const before = tree(repo);
    const second = await mam(['init'], { cwd: repo });
    assert.equal(second.exitCode, 0, second.stderr);
    assert.match(second.stdout, /^Nothing changed: this workspace is already set up \(26 files in place\)\.$/m);
    assert.doesNotMatch(second.stdout, /created|appended|updated/);
    const json = JSON.parse((await mam(['init', '--json'], { cwd: repo })).stdout) as InitResult;
    assert.equal(json.changed, false);
    assert.ok(json.items.every((i) => i.action === 'unchanged'), JSON.stringify(json.items));
    assert.deepEqual(tree(repo), before, 'not a byte changed, .mam/init.json included');
  });

  it('--update refreshes what nobody edited and keeps what the user did; plain init only says what is outdated', async () => {
    const repo = freshClone({ 'AGENTS.md': '# Agents\n\nUse tabs.\n' });
    const v1 = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-1/dist/cli.js', mode: 'install' });
    assert.equal(byPath(v1)['AGENTS.md'], 'appended');
    const edited = '.agents/skills/mam-jobs/SKILL.md';
    fs.appendFileSync(path.join(repo, edited), '\nOur team always passes --timeout 600.\n');
    fs.writeFileSync(path.join(repo, 'AGENTS.md'), read(repo, 'AGENTS.md').replace('Use tabs.', 'Use spaces.'));

    // A newer MAM elsewhere: the installed files name the old CLI.
    const snapshot = tree(repo);
    const told = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'install' });
    assert.equal(told.changed, false);
    assert.equal(byPath(told)['.claude/skills/mam-jobs/SKILL.md'], 'outdated');
    assert.equal(byPath(told)[edited], 'kept');
    assert.deepEqual(tree(repo), snapshot, 'plain init wrote nothing');

    const updated = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'update' });
    assert.equal(updated.changed, true);
    assert.deepEqual([byPath(updated)[edited], byPath(updated)['.claude/skills/mam-jobs/SKILL.md'], byPath(updated)['AGENTS.md'], byPath(updated)['.mam.env']], ['kept', 'updated', 'updated', 'unchanged']);
    assert.match(read(repo, edited), /mam-1.*\n[\s\S]*Our team always passes --timeout 600\./, 'the edited skill is as the user left it');
    assert.match(read(repo, '.claude/skills/mam-jobs/SKILL.md'), /node "\/opt\/mam-2\/dist\/cli\.js" job submit/);
    assert.ok(!read(repo, '.claude/skills/mam-jobs/SKILL.md').includes('mam-1'));
    assert.match(read(repo, 'AGENTS.md'), /^# Agents\n\nUse spaces\.\n\n<!-- mam:begin -->\n[\s\S]*mam-2[\s\S]*<!-- mam:end -->\n$/, "the section is refreshed, the user's text kept");

    // Once refreshed, the edited one stays edited: --update again changes nothing.
    const again = await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'update' });
    assert.equal(again.changed, false);
    assert.equal(byPath(again)[edited], 'kept');
  });

  it('--update brings a workspace set up before issue 22 up: the new skills and the job types reference, the five refreshed, an edited one named and kept, the rules refreshed; again, nothing changes and it says so', async () => {
    const repo = freshClone({ 'AGENTS.md': '# Agents\n\nUse tabs.\n', '.gitignore': '.mam.env\n' });
    initializedBefore(repo);
    const edited = '.claude/skills/mam-loop/SKILL.md';
    fs.appendFileSync(path.join(repo, edited), '\nAlways two reviewers.\n');
    const userEdit = read(repo, edited);

    const r = await mam(['init', '--update'], { cwd: repo });
    assert.equal(r.exitCode, 0, r.stderr);
    const line = (action: string, rel: string) => new RegExp(`^  ${action} +${rel.replace(/\./g, '\\.')}$`, 'm');
    for (const root of ['.agents', '.claude']) {
      for (const name of ['mam-monitor', 'mam-orchestrator', 'mam-plans']) assert.match(r.stdout, line('created', `${root}/skills/${name}/SKILL.md`));
      assert.match(r.stdout, line('created', `${root}/skills/mam-jobs/references/job-types.md`));
      for (const name of ['mam-jobs', 'mam-sessions', 'mam-remote', 'mam-worktrees']) assert.match(r.stdout, line('updated', `${root}/skills/${name}/SKILL.md`));
    }
    assert.match(r.stdout, /^  updated +\.agents\/skills\/mam-loop\/SKILL\.md$/m);
    assert.match(r.stdout, /^  kept +\.claude\/skills\/mam-loop\/SKILL\.md: edited since mam init wrote it; left as is$/m);
    assert.match(r.stdout, /^  updated +AGENTS\.md$/m);
    assert.match(r.stdout, /^  updated +\.claude\/rules\/mam\.md$/m);
    assert.match(r.stdout, /^Done\. .* 1 kept as you left it\.$/m);

    // Every file as this MAM writes it, the edited one as the user left it.
    for (const skill of mamSkills(CLI, repo)) {
      for (const f of skillFiles(skill)) {
        for (const root of ['.agents/skills', '.claude/skills']) {
          const rel = `${root}/${skill.name}/${f.path}`;
          assert.equal(read(repo, rel), rel === edited ? userEdit : f.content, rel);
        }
      }
    }
    assert.match(read(repo, 'AGENTS.md'), /^# Agents\n\nUse tabs\.\n\n<!-- mam:begin -->\n[\s\S]*No change to core logic without a reviewed diff[\s\S]*<!-- mam:end -->\n$/);
    assert.ok(!read(repo, 'AGENTS.md').includes('/opt/mam-old/'));
    assert.deepEqual(untracked(repo), INSTALLED.filter((p) => p !== 'AGENTS.md'));

    const before = tree(repo);
    const again = await mam(['init', '--update'], { cwd: repo });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /^Nothing changed: this workspace is already set up \(25 files in place\)\. 1 kept as you left it\.$/m);
    assert.doesNotMatch(again.stdout, /created|appended|updated|removed/);
    assert.deepEqual(tree(repo), before, 'not a byte changed, .mam/init.json included');

    // The manifest covers the new files too: --remove takes them back with their folders.
    const removed = await mam(['init', '--remove'], { cwd: repo });
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.match(removed.stdout, /^  removed +\.agents\/skills\/mam-jobs\/references\/job-types\.md$/m);
    assert.deepEqual(status(repo), [`?? ${edited}`]);
    assert.ok(!fs.existsSync(path.join(repo, '.agents')));
    assert.equal(read(repo, 'AGENTS.md'), '# Agents\n\nUse tabs.\n');
  });

  it('a file an older MAM wrote and this one no longer installs: plain init says so, --update takes it back with its folder (an edited one stays, and stays listed for --remove)', async () => {
    const repo = freshClone({ 'AGENTS.md': '# Agents\n', '.gitignore': '.mam.env\n' });
    const gone = '.agents/skills/mam-retired/SKILL.md';
    const edited = '.claude/skills/mam-retired/SKILL.md';
    initializedBefore(repo, { [gone]: '---\nname: mam-retired\ndescription: "x"\n---\n', [edited]: '---\nname: mam-retired\ndescription: "x"\n---\n' });
    fs.appendFileSync(path.join(repo, edited), 'Ours now.\n');

    const told = await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'install' });
    assert.equal(byPath(told)[gone], 'outdated');
    assert.ok(fs.existsSync(path.join(repo, gone)), 'plain init removes nothing');

    const updated = await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'update' });
    assert.deepEqual([byPath(updated)[gone], byPath(updated)[edited]], ['removed', 'kept']);
    assert.equal(updated.items.find((i) => i.path === gone)?.note, 'no longer installed');
    assert.ok(!fs.existsSync(path.join(repo, '.agents/skills/mam-retired')), 'its folder went with it');
    assert.equal(read(repo, edited), '---\nname: mam-retired\ndescription: "x"\n---\nOurs now.\n');

    const removed = await initWorkspace({ workspace: repo, cliPath: CLI, mode: 'remove' });
    assert.equal(byPath(removed)[edited], 'kept');
    assert.deepEqual(status(repo), [`?? ${edited}`]);
  });

  it('--remove takes back exactly what was added: AGENTS.md and info/exclude byte for byte, the user’s edits kept; .mam/ stays', async () => {
    const original = '# Agents\n\nUse tabs.'; // no final newline: the separator init adds goes too
    const repo = freshClone({ 'AGENTS.md': original });
    const excludeBefore = read(repo, '.git/info/exclude');
    assert.equal((await mam(['init'], { cwd: repo })).exitCode, 0);
    assert.ok(read(repo, 'AGENTS.md').startsWith(`${original}\n\n<!-- mam:begin -->`), 'appended after the user’s text');
    fs.appendFileSync(path.join(repo, '.claude/skills/mam-loop/SKILL.md'), '\nAlways two reviewers.\n');

    const removed = await mam(['init', '--remove'], { cwd: repo });
    assert.equal(removed.exitCode, 0, removed.stderr);
    assert.match(removed.stdout, /^  kept +\.claude\/skills\/mam-loop\/SKILL\.md: edited since mam init wrote it; left as is$/m);
    assert.match(removed.stdout, /^  removed +AGENTS\.md: its MAM section; the rest kept$/m);
    assert.match(removed.stdout, /^Took back what mam init added\. 1 kept as you left it\.$/m);
    assert.equal(read(repo, 'AGENTS.md'), original);
    assert.deepEqual(status(repo), ['?? .claude/skills/mam-loop/SKILL.md'], 'only the edited skill is left');
    assert.equal(read(repo, '.git/info/exclude'), excludeBefore);
    assert.ok(!fs.existsSync(path.join(repo, '.mam.env')));
    assert.ok(!fs.existsSync(path.join(repo, '.agents')), 'its folders go once empty');
    assert.ok(fs.existsSync(path.join(repo, '.mam', '.gitignore')), '.mam/ stays');

    const twice = JSON.parse((await mam(['init', '--remove', '--json'], { cwd: repo })).stdout) as InitResult;
    assert.equal(twice.changed, false);
    assert.deepEqual(twice.items.map((i) => [i.path, i.action]), [['.claude/skills/mam-loop/SKILL.md', 'kept']]);
  });

  it('never takes a file it did not write: the user’s own skill, AGENTS.md section and .mam.env stay as they are, through init, --update and --remove', async () => {
    const repo = freshClone({
      '.claude/skills/mam-jobs/SKILL.md': '---\nname: mam-jobs\ndescription: ours\n---\n',
      'AGENTS.md': '# Rules\n<!-- mam:begin -->\nour own words\n<!-- mam:end -->\n',
      '.gitignore': '.mam.env\n',
    });
    fs.writeFileSync(path.join(repo, '.mam.env'), 'MQTT_PASSWORD=secret\n');
    const excludeBefore = read(repo, '.git/info/exclude');
    const first = await initWorkspace({ workspace: repo, cliPath: '/opt/mam/dist/cli.js', mode: 'install' });
    assert.deepEqual([byPath(first)['.claude/skills/mam-jobs/SKILL.md'], byPath(first)['AGENTS.md'], byPath(first)['.mam.env'], byPath(first)['.git/info/exclude']], ['kept', 'kept', 'kept', 'unchanged']);
    assert.equal(read(repo, '.git/info/exclude'), excludeBefore, 'git already ignores .mam.env: nothing to add');
    await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'update' });
    await initWorkspace({ workspace: repo, cliPath: '/opt/mam-2/dist/cli.js', mode: 'remove' });
    assert.equal(read(repo, '.claude/skills/mam-jobs/SKILL.md'), '---\nname: mam-jobs\ndescription: ours\n---\n');
    assert.equal(read(repo, 'AGENTS.md'), '# Rules\n<!-- mam:begin -->\nour own words\n<!-- mam:end -->\n');
    assert.equal(read(repo, '.mam.env'), 'MQTT_PASSWORD=secret\n');
    assert.deepEqual(status(repo), [], 'the checkout is as it was cloned');
  });

  it('a legacy .env (the seeds kept settings there): only MAM’s settings are carried into .mam.env, read back exactly; .env is untouched', async () => {
    const legacy = ['DATABASE_URL=postgres://app:hunter2@db/app', 'MQTT_BROKER=broker.lan', 'export MQTT_PASSWORD="s3 cr\\$t \\"q\\""', 'MQTT_PORT=1884 extra', 'MAM_AGENT_ARGS_CODEX=\'--full-auto\''].join('\n');
    const repo = freshClone({ '.env': `${legacy}\n` });
    const settingsCheck = async () => (JSON.parse((await mam(['doctor', '--json'], { cwd: repo })).stdout) as { checks: Array<{ name: string; detail: string; warning?: boolean }> }).checks.find((c) => c.name === 'settings');
    assert.deepEqual(await settingsCheck(), { name: 'settings', ok: true, warning: true, detail: 'no .mam.env, and MAM does not read .env, which sets MQTT_BROKER, MQTT_PASSWORD, MAM_AGENT_ARGS_CODEX', fix: 'run mam init: it carries them into a new .mam.env and leaves .env as it is' });
    const r = await mam(['init'], { cwd: repo });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^  created +\.mam\.env: mode 0600; MQTT_BROKER, MQTT_PASSWORD, MAM_AGENT_ARGS_CODEX taken from \.env \(left as is\); the rest commented out; could not read \.env:4 MQTT_PORT: set it here by hand$/m);
    const values = parseEnvFile(read(repo, '.mam.env'));
    assert.deepEqual([...values], [['MQTT_BROKER', 'broker.lan'], ['MQTT_PASSWORD', 's3 cr$t "q"'], ['MAM_AGENT_ARGS_CODEX', '--full-auto']]);
    assert.ok(!read(repo, '.mam.env').includes('hunter2'), 'the project’s own secrets stay in .env');
    assert.equal(read(repo, '.env'), `${legacy}\n`);
    assert.deepEqual(status(repo).filter((l) => l.includes('env')), [], '.env tracked and unchanged, .mam.env ignored');
    assert.equal((await settingsCheck())?.detail, `read ${path.join(repo, '.mam.env')}`);
  });

  it('a .mam.env with credentials in it is kept by --remove, and so is the line that keeps it out of git', async () => {
    const repo = freshClone();
    await initWorkspace({ workspace: repo, cliPath: '/opt/mam/dist/cli.js', mode: 'install' });
    fs.appendFileSync(path.join(repo, '.mam.env'), 'MQTT_PASSWORD=secret\n');
    const removed = await initWorkspace({ workspace: repo, cliPath: '/opt/mam/dist/cli.js', mode: 'remove' });
    assert.deepEqual([byPath(removed)['.mam.env'], byPath(removed)['.git/info/exclude']], ['kept', 'kept']);
    assert.deepEqual(status(repo), [], 'git still does not see .mam.env');
  });

  it('AGENTS.md it created goes entirely; outside git there is no exclude; bad flags are one line, exit 64, nothing written', async () => {
    const plain = fs.realpathSync(tempDir('plain'));
    const r = JSON.parse((await mam(['init', '--json'], { cwd: plain })).stdout) as InitResult;
    assert.equal(r.workspace, plain, 'neither .mam/ nor git: the current folder');
    assert.equal(byPath(r)['AGENTS.md'], 'created');
    assert.ok(!r.items.some((i) => i.path.includes('exclude')));
    await initWorkspace({ workspace: plain, cliPath: r.cli, mode: 'remove' });
    assert.deepEqual(fs.readdirSync(plain).sort(), ['.mam']);

    const empty = fs.realpathSync(tempDir('empty'));
    const bad = await mam(['init', '--update', '--remove'], { cwd: empty });
    assert.equal(bad.exitCode, 64);
    assert.equal(bad.stderr, 'mam: mam init: --update and --remove do not go together');
    assert.deepEqual(fs.readdirSync(empty), []);
    const nothing = await mam(['init', '--remove'], { cwd: empty });
    assert.equal(nothing.exitCode, 0);
    assert.match(nothing.stdout, /Nothing to remove/);
    assert.deepEqual(fs.readdirSync(empty), [], '--remove where init never ran creates nothing');
  });
});
