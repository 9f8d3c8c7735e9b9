import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MamApi } from '../../../src/extension';
import type { SessionsNode } from '../../../src/views/sessions/sessionsTree';
import { waitFor } from '../waitFor';
import { cleanUp, fakeAgentCommand, mamApi } from './support';

const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 't@example.invalid' };

/**
 * Overlap warnings in VS Code: two sessions in two worktrees of one repository edit the same line
 * (uncommitted, one of them saved from an editor here); the Sessions view marks both, lists the
 * file with its lines, and one warning tells the conflict — once, however often it is looked at again.
 */
describe('overlap warnings in VS Code: the Sessions view and one notification per conflict', function () {
  this.timeout(120_000);
  let api: MamApi;
  let repo: string;
  const trees: string[] = [];
  const engine = () => api.host.current[0]!.engine;
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
  const lines = (changed: Record<number, string>) => Array.from({ length: 10 }, (_, i) => changed[i + 1] ?? `line ${i + 1}`).join('\n') + '\n';
  const conflicts = () => api.notifier.shown.filter((n) => n.kind === 'conflict');

  before(async () => {
    api = await mamApi();
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mam-overlap-repo-')));
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'feature.txt'), lines({}));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    for (const name of ['one', 'two']) {
      const dir = path.join(path.dirname(repo), `${path.basename(repo)}-${name}`);
      git(repo, 'worktree', 'add', '-q', '-b', name, dir);
      trees.push(dir);
    }
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await cleanUp(api);
    for (const dir of [repo, ...trees]) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Edits feature.txt of a worktree in an editor here and saves it, as a person would. */
  const saveInEditor = async (dir: string, text: string) => {
    const doc = await vscode.workspace.openTextDocument(path.join(dir, 'feature.txt'));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save());
  };

  it('marks both sessions, lists the file with its lines, and tells the conflict once', async () => {
    await engine().core.sessions.create({ name: 'ov-one', agent: 'claude', role: 'creator', cwd: trees[0]!, baseDir: trees[0]!, command: fakeAgentCommand('work') });
    await engine().core.sessions.create({ name: 'ov-two', agent: 'claude', role: 'creator', cwd: trees[1]!, baseDir: trees[1]!, command: fakeAgentCommand('work') });
    // The agent in `two` has changed line 5 (on disk, uncommitted): alone, nothing to tell.
    fs.writeFileSync(path.join(trees[1]!, 'feature.txt'), lines({ 5: 'five, as two wants it' }));
    engine().core.overlaps.schedule();
    await engine().core.overlaps.whenIdle();
    assert.deepEqual(engine().core.overlaps.report?.pairs, []);
    // The person saves another line 5 in `one`, in an editor here: the save alone brings the next look.
    await saveInEditor(trees[0]!, lines({ 5: 'five, as one wants it' }));

    const told = await waitFor('the conflict notification', () => conflicts()[0]);
    assert.match(told.message, /^MAM: ov-(one|two) and ov-(one|two) would conflict in feature\.txt\.$/);
    for (const [me, other] of [['ov-one', 'ov-two'], ['ov-two', 'ov-one']] as const) {
      const session: SessionsNode = { kind: 'session', folderIndex: 0, name: me };
      assert.match(String((await api.sessions.getTreeItem(session)).description), / · conflict$/);
      const [overlap] = await api.sessions.getChildren(session);
      assert.equal(overlap?.kind, 'overlap');
      assert.equal((await api.sessions.getTreeItem(overlap!)).label, `Conflicts with ${other}`);
      const files = await api.sessions.getChildren(overlap!);
      assert.deepEqual(files.map((f) => (f.kind === 'overlapFile' ? f.path : f.kind)), ['feature.txt']);
      const file = await api.sessions.getTreeItem(files[0]!);
      assert.equal(file.description, 'conflict · line 5 ↔ line 5');
      // Opening it opens this session's copy, at the line.
      assert.equal((file.command?.arguments?.[0] as vscode.Uri).fsPath, path.join(me === 'ov-one' ? trees[0]! : trees[1]!, 'feature.txt'));
    }

    // Looked at again (another save, a job event): still the same conflict, not told again.
    await saveInEditor(trees[0]!, lines({ 5: 'five, as one wants it', 9: 'nine' }));
    engine().core.overlaps.schedule();
    await engine().core.overlaps.whenIdle();
    assert.equal(conflicts().length, 1, 'one notification for one conflict');

    // `two` gives up its line 5: no pair any more, the marks go.
    fs.writeFileSync(path.join(trees[1]!, 'feature.txt'), lines({}));
    engine().core.overlaps.schedule();
    await waitFor('the marks to go', async () => !String((await api.sessions.getTreeItem({ kind: 'session', folderIndex: 0, name: 'ov-one' })).description).endsWith('conflict'));
    assert.deepEqual((await api.sessions.getChildren({ kind: 'session', folderIndex: 0, name: 'ov-one' })).filter((n) => n.kind === 'overlap'), []);
  });
});
